"""What the COMPASS stages share: a world's two lists, payloads (the policy document as the
public COMPASS code sends it among them), deterministic ids and one structured call that reports
its failure reason. Verification is `compass_verify`'s.

Ids are built from what a row is (world, policy, query type, slot; parent, form, strategy;
parent, allowlist policy; query, model, variant; response, judge), never from a counter or the
clock, so the same input always maps to the same id and every stage skips what already exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from copal_tui import prompts
from copal_tui.domain.outputs import TASK_OUTPUTS, CompassQueriesOut
from copal_tui.pipeline.base import StageRun, policy_views, world_payload
from store.artifacts.records import CompassQueryRow
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow, WorldRow

if TYPE_CHECKING:
    from copal_tui.llm.results import Structured

SUITE_KINDS = ("allow", "deny")  # procedure policies are not part of a COMPASS suite
_CODES = {"allowed_base": "ab", "denied_base": "db", "allowed_edge": "ae"}


# ------------------------------------------------------------------ ids


def query_id(world_id: str, policy_id: str, query_type: str, slot: int) -> str:
    return f"{world_id}:{policy_id}:{_CODES[query_type]}{slot:02d}"


def edge_id(parent_id: str, form: str, strategy: str) -> str:
    return f"{parent_id}:{form}:{strategy}"


def rewrite_id(parent_id: str, allow_policy_id: str) -> str:
    """The allowed-edge rewrite of denied-base query `parent_id` under one allowlist policy."""
    return f"{parent_id}:ae:{allow_policy_id}"


def response_id(query_id: str, model: str, variant: str) -> str:
    return f"{query_id}@{model}+{variant}"


def judgment_id(response_id: str, judge: str) -> str:
    return f"{response_id}+{judge}"


# ------------------------------------------------------------------ worlds and payloads


def suite_policies(db: Any, world_id: str) -> list[PolicyRow]:
    """The world's allowlist and denylist, in inventory order."""
    return [p for p in sql.policies(db, world_id) if p.kind in SUITE_KINDS]


def organisation(world: WorldRow, *, full: bool = True) -> dict[str, str]:
    """The organisation as a task sees it: with its context for writers, name only for
    checkers (the context can be pages long and does not change what a policy rules out)."""
    return world_payload(world) if full else {"id": world.id, "name": world.name}


def listed(policies: list[PolicyRow], kind: str) -> list[dict[str, str]]:
    return [{"id": p.id, "text": p.text} for p in policies if p.kind == kind]


def policy_payload(policies: list[PolicyRow]) -> list[dict[str, str]]:
    return policy_views(policies)


def policy_document(policies: list[PolicyRow]) -> dict[str, dict[str, str]]:
    """The organisation's policies as the public COMPASS code sends them (its
    `policies/<Org>.json`): `{"allowlist": {name: description}, "denylist": {...}}`, a policy's
    name being its id (an imported COMPASS world's ids are its policy names)."""
    return {"allowlist": {p.id: p.text for p in policies if p.kind == "allow"},
            "denylist": {p.id: p.text for p in policies if p.kind == "deny"}}


def allowlist_policy_of(q: CompassQueryRow) -> str:
    """The allowlist policy an allowed query is written for: an allowed-edge rewrite filed
    under its parent's denylist policy names it in `allowlist_policy_id`."""
    return q.allowlist_policy_id or q.policy_id


# ------------------------------------------------------------------ calls


async def structured_result(run: StageRun, model: str, task: str, payload: dict[str, Any],
                            context: Mapping[str, Any] | None = None) -> Structured[Any]:
    """One validated call's whole result (the value, or the raw text and reason; the first
    answer's text when the repair round was used), nothing recorded."""
    tpl = run.template(task)
    return await run.llm.structured(
        run.model(model), prompts.render(task, payload, using=tpl), TASK_OUTPUTS[task],
        task=task, template_version=tpl.version, context=context)


async def structured(run: StageRun, model: str, task: str, payload: dict[str, Any],
                     unit: str, *, context: Mapping[str, Any] | None = None
                     ) -> tuple[Any, str | None]:
    """One validated call: (value, None), or (None, reason) with the failure recorded.
    A fatal error (bad key, unknown model) is raised and stops the run. `context`: what the
    answer is checked against beyond its shape (see `structured_result`)."""
    result = await structured_result(run, model, task, payload, context)
    if result.value is None:
        raw = (result.raw or "")[:2000]
        reason = f"{task}: {result.reason}" + (f" | raw: {raw}" if raw else "")
        run.fail(unit, reason)
        return None, reason
    return result.value, None


def slot_rows(run: StageRun, out: CompassQueriesOut | None, wanted: dict[int, dict[str, Any]],
              unit: str) -> list[dict[str, Any]]:
    """Rows for the slots a slot writer filled (first answer per slot; unknown slots ignored);
    a slot left empty is recorded as the unit's failure."""
    if out is None:
        return []
    got: dict[int, str] = {}
    for q in out.queries:
        if q.slot in wanted and q.slot not in got and q.query.strip():
            got[q.slot] = q.query.strip()
    missing = sorted(set(wanted) - set(got))
    if missing:
        run.fail(unit, f"the writer left slot(s) {', '.join(map(str, missing))} empty")
    return [{**wanted[s], "text": text} for s, text in sorted(got.items())]
