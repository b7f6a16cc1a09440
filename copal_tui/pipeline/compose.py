"""Stage `compose`: effect anchors propose clause sets of two and three; the model judges each.

Candidates come from `domain.compose_filter` grouped by (pattern, size), each group in its
seeded, deterministic order. A pattern's quota of accepted compositions follows the run's
pattern mix (`composition_quotas`: by default the pattern's share of the world's proposed
clause sets; `equal`: `per_pattern` each). The model is asked in waves: every group sends its next candidates
(as many as its quota still lacks), the answers are applied in candidate order, and a group
stops when its quota of accepted compositions is met or its cap (`compose_filter.ask_cap`,
ASK_FACTOR x quota) of candidates was asked. A re-run counts the stored rows first, so it asks
nothing a finished run already asked.

A model that accepts with another pattern than the proposed one is taken at its word: the row
keeps the candidate's id (the proposed pattern is part of it) and stores the model's pattern,
with the re-tag written at the head of `reason` (`retag_note`). A world never holds two
confirmed compositions of the same clauses and pattern: the later one (in candidate order) is
stored as rejected, a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copal_tui.domain.compose_filter import (
    SIZES,
    Candidate,
    ask_cap,
    composition_quotas,
    ordered,
    pattern_pool,
    proposals,
    quota,
)
from copal_tui.domain.outputs import CompositionOut
from copal_tui.domain.selection import PatternMix
from copal_tui.domain.taxonomy import Pattern
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from store.artifacts import writes
from store.pipeline import todo as sql
from store.pipeline.rows import ClauseRow, WorldRow

Key = tuple[tuple[str, ...], str]  # (sorted clause ids, pattern) of a confirmed composition


def retag_note(proposed: str, answered: str) -> str:
    """The head of `reason` on a re-tagged composition (machine-readable: `parse_retag`)."""
    return f"[re-tag {proposed} -> {answered}] "


def parse_retag(reason: str | None) -> tuple[str, str] | None:
    """(proposed, answered) pattern of a re-tagged composition's reason, else None."""
    text = reason or ""
    if not text.startswith("[re-tag ") or "]" not in text:
        return None
    proposed, _, answered = text[len("[re-tag "):text.index("]")].partition(" -> ")
    return (proposed, answered) if proposed and answered else None


def decide(world_id: str, cand: Candidate, out: CompositionOut, taken: set[Key]) -> dict[str, Any]:
    """The composition row for one answer; `taken` (confirmed keys of the world) is updated."""
    row: dict[str, Any] = {"id": cand.composition_id(world_id), "world_id": world_id,
                           "clause_ids": list(cand.clause_ids), "pattern": cand.pattern.value}
    if not out.accept:
        return {**row, "status": "rejected", "reason": out.reason}
    answered = (out.pattern or cand.pattern).value
    note = retag_note(cand.pattern.value, answered) if answered != cand.pattern.value else ""
    key = (cand.clause_ids, answered)
    if key in taken:
        return {**row, "pattern": answered, "status": "rejected",
                "reason": f"{note}duplicate: these clauses are already composed as {answered}; "
                          f"model: {out.reason}"}
    taken.add(key)
    return {**row, "pattern": answered, "status": "confirmed", "reason": note + out.reason}


@dataclass
class Group:
    """One (world, pattern, size) group: its queue in proposal order and what it has used."""

    world: WorldRow
    pattern: Pattern
    size: int
    quota: int
    cap: int
    queue: list[Candidate] = field(default_factory=list)
    asked: int = 0
    accepted: int = 0

    def take(self) -> list[Candidate]:
        n = min(self.quota - self.accepted, self.cap - self.asked)
        batch, self.queue = self.queue[:max(0, n)], self.queue[max(0, n):]
        self.asked += len(batch)
        return batch


def plan(run: StageRun) -> tuple[list[Group], dict[str, set[Key]], dict[str, ClauseRow]]:
    """Each world's groups with their queues. Shown as its own step of the run's progress (the
    bar counts worlds, then the units asked): a world of 100,000 clauses takes seconds."""
    groups: list[Group] = []
    taken: dict[str, set[Key]] = {}
    by_id: dict[str, ClauseRow] = {}
    mix = PatternMix.parse(run.opts.copal.pattern_mix)
    worlds = sql.worlds(run.db, run.opts.worlds)
    run.progress.message = f"proposing clause sets for {len(worlds)} world(s)"
    run.progress.total = len(worlds)
    run.report(force=True)
    for world in worlds:
        wid = world.id
        clauses = sql.clauses(run.db, wid)
        by_id.update({c.id: c for c in clauses})
        decided = sql.composition_ids(run.db, wid)
        confirmed = sql.compositions(run.db, wid)
        confirmed_ids = {c.id for c in confirmed}
        taken[wid] = {(tuple(sorted(c.clause_ids)), c.pattern) for c in confirmed}
        proposed = proposals([clause_payload(c) for c in clauses])
        quotas = composition_quotas(mix, run.opts.copal.per_pattern, pattern_pool(proposed))
        found = ordered(proposed, seed=run.opts.seed, per_pattern=quotas)
        for pattern in Pattern:
            for size in SIZES:
                g = Group(world, pattern, size, quota(quotas[pattern], size),
                          ask_cap(quotas[pattern], size))
                for cand in found[(pattern, size)]:
                    cid = cand.composition_id(wid)
                    if cid in decided:  # asked by an earlier run: counts against the budget
                        g.asked += 1
                        g.accepted += cid in confirmed_ids
                    else:
                        g.queue.append(cand)
                groups.append(g)
        run.progress.done += 1
        run.report()
    run.progress.done = run.progress.total = 0
    run.progress.message = ""
    return groups, taken, by_id


async def execute(run: StageRun) -> None:
    model = run.generator
    groups, taken, by_id = plan(run)
    answers: dict[str, CompositionOut | None] = {}

    async def one(unit: tuple[Group, Candidate]) -> None:
        g, cand = unit
        wid = g.world.id
        answers[cand.composition_id(wid)] = await ask(
            run, model, "composition",
            {"world": world_payload(g.world), "pattern": cand.pattern.value,
             "anchor": {"licensing": cand.anchor[0], "constraining": cand.anchor[1]},
             "clauses": [clause_payload(by_id[c]) for c in cand.clause_ids]},
            cand.composition_id(wid),
        )

    while True:
        wave = [(g, cand) for g in groups for cand in g.take()]
        if not wave:
            break
        await run.each(wave, one)
        # Applied in candidate order, not in the order the answers came back: which of two
        # duplicates is kept must not depend on timing.
        for g, cand in wave:
            out = answers.pop(cand.composition_id(g.world.id), None)
            if out is None:
                continue  # the failure is recorded; a re-run asks it again
            row = decide(g.world.id, cand, out, taken[g.world.id])
            confirmed = row["status"] == "confirmed"
            g.accepted += confirmed
            run.count("confirmed" if confirmed else "rejected")
            if confirmed:
                run.count(f"confirmed_{g.size}_clauses")
            if parse_retag(row["reason"]):
                run.count("re_tagged")
            run.insert_later(writes.insert_composition, [row])
        run.flush()
