"""Stage `respond`: each target model answers each active item (selected items and their
projections) under the four-block system prompt. The model never sees the facet or contract.

A failed call is stored as a response row with `failure` set (and no text) so it is visible;
a re-run replaces exactly those rows.

A target that is a deployed chatbot (`kind: http`) is a live endpoint outside the audit: each
query passes the de-identifier imported traffic passes (`copal_tui.domain.deid`, its default
rules) before it is sent, so a probe that plants an identifier sends a typed placeholder
(`<EMAIL_1>`) instead. What it changed is recorded by type in `responses.redactions` (`{}` when
nothing changed; NULL for every other target, which is how Table 12 of the report finds the
deployed chatbots); the call log holds the query as it was sent.
"""

from __future__ import annotations

from typing import Any

from copal_tui import prompts
from copal_tui.domain.deid import Deidentifier
from copal_tui.pipeline.base import StageRun, policy_views, world_view
from copal_tui.pipeline.probes import probe
from store.artifacts import writes
from store.pipeline import todo as sql
from store.pipeline import traffic
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
    deid = Deidentifier() if any(s.http is not None for s in specs.values()) else None

    async def one(unit: tuple[Prompted, ItemRow, str]) -> None:
        (world, policies), item, model = unit
        query, redactions = item.query, None  # NULL: not a deployed chatbot
        if deid is not None and specs[model].http is not None:
            query, redactions = probe(deid, item.query)
            if redactions:
                run.count("probes_deidentified")
        messages = prompts.render_chatbot(world, policies, query, using=tpl)
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
            if redactions is not None:
                traffic.set_response_redactions(db, row["id"], redactions)

        run.later(store)

    await run.each(units, one)
