"""Stage `respond`: each target model answers each active item (selected items and their
projections) under the four-block system prompt. The model never sees the facet or contract.

A failed call is stored as a response row with `failure` set (and no text) so it is visible;
a re-run replaces exactly those rows.
"""

from __future__ import annotations

from typing import Any

from copal_tui import prompts
from copal_tui.pipeline.base import StageRun, policy_views, world_view
from store.artifacts import writes
from store.pipeline import todo as sql
from store.pipeline.rows import ItemRow

VARIANT = "base"


def response_id(item_id: str, model: str, variant: str = VARIANT) -> str:
    rid = f"{item_id}@{model}"
    return rid if variant == VARIANT else f"{rid}+{variant}"


async def execute(run: StageRun) -> None:
    from copal_tui.llm.client import LLMError

    if not run.opts.models:
        raise ValueError("respond needs at least one --model")
    tpl = run.template("chatbot_system")
    # The chatbot prompt's world and policies, as mappings, once per world.
    Prompted = tuple[dict[str, Any], list[dict[str, str]]]
    units: list[tuple[Prompted, ItemRow, str]] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        shown = (world_view(world), policy_views(sql.policies(run.db, world.id)))
        for item in sql.active_items(run.db, world.id):
            for model in run.opts.models:
                if not sql.response_ok(run.db, item.id, model, VARIANT):
                    units.append((shown, item, model))
    specs = {m: run.model(m) for m in run.opts.models}

    async def one(unit: tuple[Prompted, ItemRow, str]) -> None:
        (world, policies), item, model = unit
        messages = prompts.render_chatbot(world, policies, item.query, using=tpl)
        row: dict[str, Any] = {"id": response_id(item.id, model), "item_id": item.id,
                               "model": model, "variant": VARIANT}
        try:
            answer = await run.llm.complete(specs[model], messages, task="chatbot",
                                            template_version=tpl.version)
            row["text"] = answer.text
            run.count("answered")
        except LLMError as exc:
            if exc.fatal:
                raise
            row["failure"] = exc.reason
            run.fail(row["id"], exc.reason)

        def store(db: Any) -> None:
            sql.delete_failed_response(db, item.id, model, VARIANT)
            writes.insert_response(db, row, run.run_id)

        run.later(store)

    await run.each(units, one)
