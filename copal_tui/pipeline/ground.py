"""Stage `ground`: a world's policy inventory -> clauses (trigger, scope, effect, source span,
confidence), as the paper's prompt P1 asks: one call per world with the whole inventory.

An inventory longer than `MAX_POLICIES` is asked in near-equal chunks (the answers are checked
and merged together). The answer goes through the grounding rule (`domain.grounding`): a
clause none of whose source spans is verbatim in its policy (after whitespace normalisation)
is rejected and counted (`clauses_rejected`), an unlicensed extra source is dropped
(`sources_rejected`), and a rule repeated across policies is one clause whose `policy_ids`
list every source, its primary policy first (`clauses_merged`). Clause ids are
`<world>:C:<primary policy>:<n>`. A world that already has clauses is skipped (resumable); a
world with a failed call stores nothing, so a re-run asks again (answered chunks are cached).
Effects outside the six are stored with effect NULL and an audit note, never forced into a
pattern.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from copal_tui.domain.grounding import Canonical, canonicalise
from copal_tui.domain.outputs import GroundedClause, GroundingOut
from copal_tui.pipeline.base import StageRun, ask, policy_views, world_payload
from store.artifacts import writes
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow, WorldRow

# More policies than this go in chunks: the paper's worlds have about 30 rules, and a long
# inventory in one call risks an answer cut off at the output limit.
MAX_POLICIES = 60


def chunks(policies: list[PolicyRow]) -> list[list[PolicyRow]]:
    """The inventory in inventory order, whole when it fits, else in the fewest chunks of at
    most `MAX_POLICIES`, their sizes differing by one at most."""
    n = -(-len(policies) // MAX_POLICIES)
    out: list[list[PolicyRow]] = []
    start = 0
    for i in range(n):
        size = len(policies) // n + (i < len(policies) % n)
        out.append(policies[start:start + size])
        start += size
    return out


def clause_rows(world_id: str, canon: Canonical) -> list[dict[str, Any]]:
    """The stored rows of the kept clauses, numbered per primary policy."""
    rows: list[dict[str, Any]] = []
    numbers: Counter[str] = Counter()
    for c in canon.clauses:
        numbers[c.primary.policy_id] += 1
        effect = None if c.effect == "OTHER" else c.effect
        note = c.audit_note if effect is None else None
        if effect is None and not note:
            note = "effect outside the six supported effects"
        rows.append({
            "id": f"{world_id}:C:{c.primary.policy_id}:{numbers[c.primary.policy_id]}",
            "world_id": world_id, "policy_ids": c.policy_ids, "trigger": c.trigger,
            "scope": c.scope, "effect": effect, "source_span": c.primary.span,
            "confidence": c.confidence, "audit_note": note,
        })
    return rows


def record(run: StageRun, canon: Canonical, rows: list[dict[str, Any]]) -> None:
    run.count("clauses", len(rows))
    run.count("audit_notes", sum(r["effect"] is None for r in rows))
    for key, n in (("clauses_rejected", len(canon.rejected)),
                   ("sources_rejected", canon.dropped_sources),
                   ("clauses_merged", canon.merged),
                   ("policies_without_clause", len(canon.uncovered))):
        if n:
            run.count(key, n)


async def execute(run: StageRun) -> None:
    units = [w for w in sql.worlds(run.db, run.opts.worlds)
             if not sql.grounded_policy_ids(run.db, w.id)]

    async def one(world: WorldRow) -> None:
        policies = sql.policies(run.db, world.id)
        parts = chunks(policies)
        if not parts:
            return
        outs: list[GroundingOut | None] = await asyncio.gather(*(
            ask(run, run.generator, "grounding",
                {"world": world_payload(world), "policies": policy_views(part)},
                world.id if len(parts) == 1 else f"{world.id}#{i}")
            for i, part in enumerate(parts, 1)))
        if any(out is None for out in outs):
            return
        proposed: list[GroundedClause] = [c for out in outs if out for c in out.clauses]
        canon = canonicalise(proposed, {p.id: p.text for p in policies})
        rows = clause_rows(world.id, canon)
        record(run, canon, rows)
        run.insert_later(writes.insert_clause, rows)

    await run.each(units, one)
