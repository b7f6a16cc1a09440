"""Stage `dialogue_variants`: adversarial judge-and-refine violation variants (the
CompliBench paper's adversarial search).

For each original (not variant) dialogue of the run's filters, up to `--per-dialogue K`
assistant turns governed by a Category 2 or 3 guideline and not already a violation, chosen by
a hash of (dialogue id, turn) so the choice is stable and not biased to early turns. Per turn:

  (a) the generator writes a modified guideline that changes text-observable behaviour and
      excludes the original (dialogue_variant);
  (b) the generator regenerates the turn from the history and the modified guideline
      (dialogue_regenerate);
  (c) the content consistency judge says whether the new reply really behaves differently from
      the original one (dialogue_content_judge);
  (d) the compliance judge, given the ORIGINAL guideline and the modified conversation, says
      whether the new reply violates it (dialogue_compliance_judge).

The variant is kept when (c) says changed and (d) misses the violation (a realistic variant a
judge fails to see); otherwise the generator refines it with both judges' feedback
(dialogue_refine) and (b)-(d) run again, MAX_ROUNDS rounds in all. Models: `--generator` for
(a), (b) and refining, the first `--judge` for (c) and (d).

Every round is a row of dialogue_variants, kept or not, with both verdicts and a reason. A kept
variant becomes a new dialogue `<original id>~v<turn>` (variant_of = the original, same domain
and guideline document) holding the original's turns before that turn and the regenerated
reply, tagged violation = 1 with the modified guideline text; later turns are dropped, since
they answered the original reply. A failed call ends the turn's loop with a round row carrying
`failure`; a re-run deletes it and carries on from that round. A turn with a kept variant or
MAX_ROUNDS finished rounds is done and never asked again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from typing import Any

from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import structured
from copal_tui.pipeline.dialogue_common import (
    conversation,
    governing,
    guideline_payload,
    phase_name,
    selected,
)
from store.artifacts import dialogue
from store.artifacts.dialogue import GuidelineRow, StoredDialogue, TurnRow
from store.pipeline import dialogue as psql
from store.pipeline.rows import VariantRound

MAX_ROUNDS = 3
_FEEDBACK = ("content judge: ", "compliance judge: ")


def variant_id(dialogue_id: str, turn: int) -> str:
    return f"{dialogue_id}~v{turn}"


def round_id(dialogue_id: str, turn: int, round_no: int) -> str:
    return f"{variant_id(dialogue_id, turn)}#r{round_no}"


def eligible(d: StoredDialogue) -> list[TurnRow]:
    return [t for t in d.turns if t.role == "assistant" and t.category in (2, 3)
            and not t.violation and t.key is not None]


def pick(dialogue_id: str, turns: list[TurnRow], k: int) -> list[TurnRow]:
    """At most k turns, the same ones on every run (sha256, not Python's salted hash)."""
    def rank(t: TurnRow) -> str:
        return hashlib.sha256(f"{dialogue_id}#{t.turn_index}".encode()).hexdigest()

    return sorted(sorted(turns, key=rank)[:max(0, k)], key=lambda t: t.turn_index)


def _line(text: str) -> str:
    return " ".join(str(text).split())


def reason_text(kept: bool, changed: bool, detected: bool, content_reason: str,
                compliance_reason: str, change: str) -> str:
    """The stored reason: a verdict line, then one line per judge (read back as feedback)."""
    why = ("the content judge saw a behaviour change and the compliance judge missed the "
           "violation" if kept else
           "the content judge saw no behaviour change" if not changed else
           "the compliance judge detected the violation")
    return "\n".join([f"{'kept' if kept else 'not kept'}: {why}",
                      f"{_FEEDBACK[0]}{_line(content_reason)}",
                      f"{_FEEDBACK[1]}{_line(compliance_reason)}", f"change: {_line(change)}"])


@dataclass(frozen=True)
class Round:
    """One round this run played, as it is stored (`dialogue_variants`), with the content
    judge's reason that a kept variant's turn carries as its evidence."""

    id: str
    dialogue_id: str
    turn_index: int
    round: int
    category: int
    key: str
    phase: int | None
    original_guideline: str
    original_reply: str
    modified_guideline: str | None = None
    new_reply: str | None = None
    behaviour_changed: bool | None = None
    violation_detected: bool | None = None
    kept: bool = False
    reason: str | None = None
    failure: str | None = None
    evidence: str | None = None

    def as_row(self) -> dict[str, Any]:
        return asdict(self)


def feedback(row: VariantRound | Round) -> dict[str, Any]:
    """Both judges' verdicts and reasons of a finished round, as the refiner gets them."""
    lines = (row.reason or "").splitlines()
    said = [next((ln[len(p):] for ln in lines if ln.startswith(p)), "") for p in _FEEDBACK]
    return {"content_judge": {"behaviour_changed": bool(row.behaviour_changed),
                              "reason": said[0]},
            "compliance_judge": {"violates": bool(row.violation_detected),
                                 "reason": said[1]}}


# (dialogue row, guideline document, turns) as `dialogue.insert_dialogue` writes them
Variant = tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]


def variant_dialogue(d: StoredDialogue, turn: TurnRow, g: GuidelineRow, row: Round) -> Variant:
    """(dialogue row, guideline document, turns) of a kept variant."""
    modified = row.modified_guideline
    change = {"original": g.text, "modified": modified}
    overrides = ({"cat2_overrides": {g.key: {phase_name(g.phase) or "Phase ?": change}}}
                 if g.category == 2 else {"cat3_overrides": {g.key: change}})
    turns = [asdict(t) for t in d.turns if t.turn_index < turn.turn_index]
    turns.append({**asdict(turn), "content": row.new_reply, "violation": 1,
                  "guideline_text": modified, "evidence": row.evidence})
    return ({"id": variant_id(d.id, turn.turn_index), "domain": d.domain,
             "overrides": overrides, "variant_of": d.id},
            [asdict(x) for x in d.guidelines], turns)


Unit = tuple[StoredDialogue, TurnRow, list[VariantRound]]  # dialogue, turn, rounds


async def execute(run: StageRun) -> None:
    if not run.opts.judges:
        raise ValueError("dialogue_variants needs --judge (the content and compliance judge)")
    judge, gen = run.opts.judges[0], run.generator
    run.model(judge)
    run.model(gen)  # unknown model names fail here, before any call
    existing = set(psql.select_dialogues(run.db))
    units: list[Unit] = []
    for did in selected(run, originals_only=True):
        d = dialogue.stored_dialogue(run.db, did)
        assert d is not None
        rounds: dict[int, list[VariantRound]] = defaultdict(list)
        for r in psql.variant_rounds(run.db, did):
            if r.failure is None:
                rounds[r.turn_index].append(r)
        for t in pick(did, eligible(d), run.opts.dialogue.per_dialogue):
            done = rounds[t.turn_index]
            if variant_id(did, t.turn_index) in existing or any(r.kept for r in done) \
                    or len(done) >= MAX_ROUNDS:
                continue
            units.append((d, t, done))

    async def one(unit: Unit) -> None:
        d, turn, done = unit
        name = variant_id(d.id, turn.turn_index)
        g = governing(d, turn)
        if g is None:
            run.fail(name, "the turn's guideline is not in the dialogue's document")
            return
        history = conversation([t for t in d.turns if t.turn_index < turn.turn_index])
        base = {"guideline": guideline_payload(g), "history": history,
                "original_reply": turn.content}
        previous: VariantRound | Round | None = done[-1] if done else None
        for r in range(len(done) + 1, MAX_ROUNDS + 1):
            row, kept = await one_round(run, gen, judge, base, previous, r, d, turn, g)
            if kept:
                run.count("kept")
            elif row.failure is None:
                run.count("not_kept")
            run.count("rounds")
            store_round(run, row, variant_dialogue(d, turn, g, row) if kept else None)
            if kept or row.failure is not None:
                return
            previous = row

    await run.each(units, one)


async def one_round(run: StageRun, gen: str, judge: str, base: dict[str, Any],
                    previous: VariantRound | Round | None, r: int, d: StoredDialogue,
                    turn: TurnRow, g: GuidelineRow) -> tuple[Round, bool]:
    """One generate (or refine), regenerate, judge round; returns (round row, kept)."""
    ti = turn.turn_index
    unit = round_id(d.id, ti, r)
    row = Round(unit, d.id, ti, r, g.category, g.key, g.phase if g.category == 2 else None,
                g.text, turn.content)
    if previous is None:
        mod, failure = await structured(run, gen, "dialogue_variant", base, unit)
    else:
        mod, failure = await structured(run, gen, "dialogue_refine", {
            **base, "round": r, "previous": {"modified_guideline": previous.modified_guideline,
                                             "new_reply": previous.new_reply},
            "feedback": feedback(previous)}, unit)
    if mod is None:
        return replace(row, failure=failure), False
    row = replace(row, modified_guideline=mod.modified_guideline)
    regen, failure = await structured(run, gen, "dialogue_regenerate", {
        **base, "guideline": guideline_payload(g, mod.modified_guideline)}, unit)
    if regen is None:
        return replace(row, failure=failure), False
    row = replace(row, new_reply=regen.reply)
    modified = [*base["history"], {"turn_index": ti, "role": "assistant",
                                   "content": regen.reply}]
    (content, f1), (compliance, f2) = await asyncio.gather(
        structured(run, judge, "dialogue_content_judge", {
            "history": base["history"], "original_reply": turn.content,
            "new_reply": regen.reply}, unit),
        structured(run, judge, "dialogue_compliance_judge", {
            "guideline": base["guideline"], "conversation": modified, "turn_index": ti}, unit))
    if content is None or compliance is None:
        return replace(row, failure=f1 or f2), False
    kept = content.behaviour_changed and not compliance.violates
    row = replace(row, behaviour_changed=content.behaviour_changed,
                  violation_detected=compliance.violates, kept=kept, evidence=content.reason,
                  reason=reason_text(kept, content.behaviour_changed, compliance.violates,
                                     content.reason, compliance.reason, mod.change))
    return row, kept


def store_round(run: StageRun, row: Round, variant: Variant | None) -> None:
    def go(db: Any) -> None:
        # A failed round of an earlier run has this round's id: it is replaced, not kept.
        psql.delete_failed_rounds(db, row.dialogue_id, row.turn_index)
        psql.insert_round(db, row.as_row(), run.run_id)
        if variant is not None:
            dialogue.insert_dialogue(db, *variant, run_id=run.run_id)

    run.later(go)
