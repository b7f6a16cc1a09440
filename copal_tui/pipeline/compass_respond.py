"""Stage `compass_respond`: each target model answers each kept COMPASS query under each
requested variant (`--variant`, see compass_variants for what each one sends).

Explicit refusal: the organisation's own explicit-refusal prompt when the world has one (the
COMPASS importer stores it), else copal's chatbot_explicit_refusal block after the base prompt.

Pre-filter: the `--prefilter` model labels the query ALLOW or DENY with a reason; a DENY never
reaches the target and is stored with the organisation's fixed refusal as its text; an ALLOW is
answered with the base messages. Decision, model and reason are stored on the response.

Few-shot reference answers for allowed demonstrations are written by the generator model
(compass_reference) rather than taken from an existing aligned response: a response depends on
which targets and judges ran before, so the prompt of one model would change with another
model's run and with run order, and would put one target's words into another's prompt. The
reference call is cached like every call, so each demonstration is written once.

A deployed bot (an http target of the models file) is sent the query and, for few-shot, the
demonstrations as earlier turns, never a system prompt; so it cannot take the explicit-refusal
variant, nor few-shot when its body has no {conversation} (an error, before any call). What it
is sent is de-identified first (`copal_tui.pipeline.probes`), and what that changed is kept in
`compass_responses.redactions`.

A failed call is stored as a response with `failure` set and no text; a re-run replaces
exactly those rows (a cached pre-filter decision costs nothing the second time).
"""

from __future__ import annotations

import asyncio
import functools
import json
from dataclasses import dataclass
from typing import Any

from copal_tui.domain.compass import VARIANTS
from copal_tui.domain.deid import Deidentifier
from copal_tui.pipeline import compass_variants as cv
from copal_tui.pipeline.base import StageRun, policy_views, world_view
from copal_tui.pipeline.compass_common import (
    allowlist_policy_of,
    listed,
    organisation,
    policy_payload,
    response_id,
    structured,
    suite_policies,
)
from copal_tui.pipeline.probes import probe_texts
from store.artifacts import compass
from store.artifacts.records import CompassQueryRow
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow, WorldRow


@dataclass
class World:
    row: WorldRow
    policies: list[PolicyRow]  # the whole inventory (what the chatbot prompt shows)
    suite: list[PolicyRow]  # allowlist and denylist
    order: list[CompassQueryRow]  # kept queries in demonstration order

    @functools.cached_property
    def shown(self) -> tuple[dict[str, Any], list[dict[str, str]]]:
        """The world and its inventory as the chatbot prompts read them."""
        return world_view(self.row), policy_views(self.policies)


@dataclass
class Unit:
    world: World
    query: CompassQueryRow
    model: str
    variant: str


def _units(run: StageRun) -> list[Unit]:
    units = []
    for row in sql.worlds(run.db, run.opts.worlds):
        kept = compass.queries(run.db, row.id, status="kept")
        if not kept:
            continue
        w = World(row, sql.policies(run.db, row.id), suite_policies(run.db, row.id),
                  cv.ranked(row.id, kept))
        for q in kept:
            for model in run.opts.models:
                for variant in run.opts.compass.variants:
                    if not compass.response_ok(run.db, q.id, model, variant):
                        units.append(Unit(w, q, model, variant))
    return units


async def _references(run: StageRun, demos: dict[str, tuple[World, CompassQueryRow]]
                      ) -> dict[str, str | None]:
    """Reference answers of the allowed demonstrations, by query id (None: the call failed)."""

    async def one(world: World, q: CompassQueryRow) -> str | None:
        # An allowed demonstration's own policy: a rewrite may be filed under its denylist one.
        policy = next((p for p in world.suite if p.id == allowlist_policy_of(q)), None)
        out, _ = await structured(
            run, run.generator, "compass_reference",
            {"organisation": organisation(world.row),
             "policy": policy_payload([policy])[0] if policy else None, "query": q.text},
            f"{q.id}:reference")
        return None if out is None else out.answer

    ids = sorted(demos)
    answers = await asyncio.gather(*(one(*demos[i]) for i in ids))
    return dict(zip(ids, answers, strict=True))


async def execute(run: StageRun) -> None:
    from copal_tui.llm.client import LLMError
    from copal_tui.llm.http_target import variant_problem
    from copal_tui.llm.models import ModelConfigError

    if not run.opts.models:
        raise ValueError("compass_respond needs at least one --model")
    unknown = [v for v in run.opts.compass.variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant(s) {', '.join(unknown)}; one of {', '.join(VARIANTS)}")
    chatbot = run.template("chatbot_system")
    refusal_tpl = run.template("chatbot_explicit_refusal")
    units = _units(run)
    specs = {m: run.model(m) for m in run.opts.models}
    # A deployed bot (http target) gets no system prompt: a variant that differs only there
    # would be a copy of `base` under another name.
    for why in filter(None, (variant_problem(s, v) for s in specs.values()
                             for v in run.opts.compass.variants)):
        raise ModelConfigError(why)
    demos = {id(u): cv.pick_demos(u.world.order, u.query)
             for u in units if u.variant == "few-shot"}
    allowed = {q.id: (u.world, q) for u in units if id(u) in demos
               for q in demos[id(u)] if q.query_type.startswith("allowed")}
    refs = await _references(run, allowed) if allowed else {}
    deid = Deidentifier() if any(s.http is not None for s in specs.values()) else None

    def demo_answer(world: World, q: CompassQueryRow) -> str | None:
        return refs.get(q.id) if q.query_type.startswith("allowed") \
            else cv.refusal_message(world.shown[0])

    async def one(u: Unit) -> None:
        w, q = u.world, u.query
        row: dict[str, Any] = {"id": response_id(q.id, u.model, u.variant),
                               "query_id": q.id, "model": u.model, "variant": u.variant}
        version = chatbot.version
        world, policies = w.shown
        system = cv.base_system(world, policies, chatbot)
        shots: list[tuple[str, str]] = []
        if u.variant == "explicit-refusal":
            system = cv.explicit_refusal_system(world, policies, chatbot, refusal_tpl)
            if cv.own_explicit_refusal(world) is None:  # else copal's templates are unused
                version = f"{chatbot.version}+{refusal_tpl.version}"
        elif u.variant == "few-shot":
            pairs = [(d.text, demo_answer(w, d)) for d in demos[id(u)]]
            lost = [d.id for d, (_, a) in zip(demos[id(u)], pairs, strict=True) if a is None]
            if lost:
                row["failure"] = f"few-shot: no reference answer for {', '.join(lost)}"
            shots = [(t, a) for t, a in pairs if a is not None]
        elif u.variant == "pre-filter":
            out, failure = await structured(
                run, run.prefilter, "compass_prefilter",
                {"organisation": organisation(w.row, full=False),
                 "allowlist": listed(w.suite, "allow"), "denylist": listed(w.suite, "deny"),
                 "query": q.text}, f"{row['id']}:prefilter")
            if out is None:
                row["failure"] = failure
            else:
                row.update(prefilter=out.decision, prefilter_model=run.prefilter,
                           prefilter_reason=out.reason or None)
                run.count(f"prefilter_{out.decision.lower()}")
                if out.decision == "DENY":
                    row["text"] = cv.refusal_message(world)  # the target is never called
        query = q.text
        if deid is not None and specs[u.model].http is not None:
            # A deployed chatbot is a live endpoint: what it is sent is de-identified first.
            sent, changed = probe_texts(deid, [*(t for pair in shots for t in pair), query])
            shots = list(zip(sent[:-1:2], sent[1:-1:2], strict=True))
            query = sent[-1]
            row["redactions"] = json.dumps(changed, sort_keys=True)
        if "failure" not in row and "text" not in row:
            try:
                answer = await run.llm.complete(specs[u.model], cv.messages(system, query, shots),
                                                task="chatbot", template_version=version)
                row["text"] = answer.text
                run.count("answered")
            except LLMError as exc:
                if exc.fatal:
                    raise
                row["failure"] = exc.reason
        if "failure" in row:
            row.pop("text", None)
            if u.variant != "pre-filter" or row.get("prefilter"):
                run.fail(row["id"], row["failure"])

        def store(db: Any) -> None:
            compass.delete_failed_response(db, q.id, u.model, u.variant)
            compass.insert_response(db, row, run.run_id)

        run.later(store)

    await run.each(units, one)
