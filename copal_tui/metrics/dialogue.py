"""The report's `dialogue_judging` section: CompliBench metrics per judge and domain.

Scores the stored truth and predictions (`copal_tui.domain.report_rows.DialogueRows`) with
`copal_tui.domain.dialogue`, whose rules say which turns and attempts count and which judges are
binary (`is_scored_turn`, `scored_attempt`, `judge_is_binary`, the ones the store's lists call):
per judge and domain (and `all`), every (conversation, attempt) is its own judged file and the
turns are micro-averaged over all of them, as CompliBench's evaluation script pools attempts.
A failed attempt (no answer came back) is not scored but listed in `exclusions`.

Two sets of figures, each saying how many files it pools:
- the headline (`compliant_turn_accuracy`, ...; `files`): what CompliBench's own code scores,
  each attempt's first answer read by its parser (`read_judge_text` of the stored
  `first_answer`; an attempt without one was stored as that reading). An attempt whose first
  answer is JSON but not an object is left out, as the reference never scores it
  (`not_scored`);
- `repaired_*` (`repaired_files`): copal's reading, its parser and its repair round, over every
  answered attempt (an answer no verdict could be read from even after the repair is scored
  with every turn wrong: `unparsed_attempts`). `repaired_attempts` counts the files read after
  a repair round, `changed_by_repair` those whose reading differs from the headline's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from copal_tui.domain.dialogue import (
    Guideline,
    TurnPrediction,
    TurnTruth,
    by_turn,
    is_scored_turn,
    judge_is_binary,
    read_judge_text,
    score_files,
    scored_attempt,
)
from copal_tui.domain.report_rows import AttemptRow, DialogueRows
from copal_tui.metrics.dialogue_document import DialogueRow

ALL = "all"

Key = tuple[str, int, str]  # judge, attempt, dialogue


def _first_answer(a: AttemptRow) -> list[TurnPrediction] | None:
    """An attempt's predictions as CompliBench's parser reads its first answer; None when
    the reference never scores it."""
    turns = read_judge_text(a.first_answer)
    if turns is None:
        return None
    return [TurnPrediction(t.turn_index, None if a.binary_verdicts else t.guideline, t.violation)
            for t in by_turn(turns).values()]


@dataclass(frozen=True)
class FailedAttempt:
    """An attempt whose call failed (no answer at all): not scored, listed with its reason."""

    judge: str
    dialogue: str
    attempt: int
    reason: str | None


@dataclass(frozen=True)
class DialogueJudging:
    """The section's rows (empty when no dialogue was judged) and the failed attempts."""

    rows: list[DialogueRow]
    exclusions: list[FailedAttempt]


def dialogue_judging(stored: DialogueRows) -> DialogueJudging:
    """CompliBench's figures per judge and domain over the stored attempts."""
    truth: dict[str, list[TurnTruth]] = defaultdict(list)
    domain_of: dict[str, str] = {}
    for t in stored.truth:
        domain_of[t.dialogue_id] = t.domain
        truth[t.dialogue_id].append(TurnTruth(
            t.turn_index, Guideline.of(t.category, t.key, t.phase), bool(t.violation), t.role))
    preds: dict[Key, list[TurnPrediction]] = defaultdict(list)
    for p in stored.predictions:
        g = None if p.category is None and p.key is None else \
            Guideline.of(p.category, p.key, p.phase)
        preds[(p.judge, p.attempt, p.dialogue_id)].append(
            TurnPrediction(p.turn_index, g, bool(p.violation)))
    # each judge's attempts (binary, failure) for the domain's binary rule; failures; the
    # answered attempts, in stored order; the reference's reading of their first answers where
    # it differs from what was stored (None: never scored by the reference)
    facts: dict[str, list[tuple[bool, str | None]]] = defaultdict(list)
    exclusions: list[FailedAttempt] = []
    read: dict[Key, AttemptRow] = {}
    first: dict[Key, list[TurnPrediction] | None] = {}
    for a in stored.attempts:
        facts[a.judge].append((bool(a.binary_verdicts), a.failure))
        if not scored_attempt(a.failure):
            exclusions.append(FailedAttempt(a.judge, a.dialogue_id, a.attempt, a.failure))
            continue
        key = (a.judge, a.attempt, a.dialogue_id)
        read[key] = a
        if a.first_answer is not None:
            first[key] = _first_answer(a)
    rows: list[DialogueRow] = []
    for judge in sorted({k[0] for k in read}):
        is_binary = judge_is_binary(facts[judge])
        mine = sorted((k for k in read if k[0] == judge), key=lambda k: k[1])  # by attempt
        for domain in [*sorted({domain_of[k[2]] for k in mine}), ALL]:
            keys = [k for k in mine if domain == ALL or domain_of[k[2]] == domain]
            convs = {d for _j, _a, d in keys}
            headline = []
            for k in keys:
                reading = first.get(k, preds.get(k, []))
                if reading is not None:
                    headline.append((truth[k[2]], reading))
            m = score_files(headline, binary=is_binary)
            rep = score_files([(truth[k[2]], preds.get(k, [])) for k in keys], binary=is_binary)
            # Scored turns of the conversations judged, not per attempt.
            scored_turns = [t for d in convs for t in truth[d]
                            if is_scored_turn(t.role, t.guideline)]
            rows.append(DialogueRow(
                judge=judge, domain=domain, conversations=len(convs),
                attempts=len({a for _j, a, _d in keys}), binary=is_binary,
                compliant_turns=sum(1 for t in scored_turns if not t.violation),
                violation_turns=sum(1 for t in scored_turns if t.violation),
                files=m.conversations, not_scored=len(keys) - m.conversations,
                compliant_turn_accuracy=m.compliant_turn_accuracy,
                violation_detection_accuracy=m.violation_detection_accuracy,
                strict_violation_detection_accuracy=m.strict_violation_detection_accuracy,
                conversation_accuracy=m.conversation_accuracy,
                precision=m.precision, recall=m.recall,
                repaired_files=rep.conversations,
                # Files read after the repair round, not at all, or otherwise than above.
                repaired_attempts=sum(read[k].repaired for k in keys),
                unparsed_attempts=sum(read[k].unparsed for k in keys),
                changed_by_repair=sum(k in first for k in keys),
                repaired_compliant_turn_accuracy=rep.compliant_turn_accuracy,
                repaired_violation_detection_accuracy=rep.violation_detection_accuracy,
                repaired_strict_violation_detection_accuracy=(
                    rep.strict_violation_detection_accuracy),
                repaired_conversation_accuracy=rep.conversation_accuracy,
                repaired_precision=rep.precision, repaired_recall=rep.recall))
    return DialogueJudging(rows, exclusions)
