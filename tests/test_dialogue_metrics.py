"""CompliBench metrics against values computed by hand (see the comments), not by the code."""

from __future__ import annotations

import pytest

from copal_tui.domain.dialogue import (
    Guideline,
    TurnPrediction,
    TurnTruth,
    mean_over_attempts,
    norm_category,
    norm_phase,
    score_attempt,
)

G = Guideline.of


def T(i, cat, key, phase, violation):  # noqa: N802 - reads like a table row
    return TurnTruth(i, G(cat, key, phase), violation)


def P(i, cat, key, phase, violation):  # noqa: N802
    return TurnPrediction(i, None if cat is None else G(cat, key, phase), violation)


# Conversation A: turn 1 universal (never scored), 3 compliant, 5 violation, 7 compliant (cat 3).
A = [T(1, 1, "greet", None, False), T(3, 2, "book_flight", "Phase 1", False),
     T(5, 2, "book_flight", "Phase 2", True), T(7, 3, "refund_over_500", None, False)]
# Conversation B: turn 1 violation, turn 3 compliant.
B = [T(1, "Category 2: Intent Triggered Guidelines", "cancel", "Phase 1", True),
     T(3, 3, "minor", None, False)]

# Attempt 1: A3 right; A5 flagged under the wrong phase; A7 a false alarm; B1 flagged under the
# right guideline; B3 has no prediction at all.
ATTEMPT1 = [(A, [P(1, 1, "x", None, True), P(3, 2, "book_flight", 1, False),
                 P(5, 2, "book_flight", 3, True), P(7, 3, "refund_over_500", None, True)]),
            (B, [P(1, 2, "cancel", "1", True)])]
# Attempt 2: A3, A7 right, A5 missed; B1 flagged under the wrong key; B3 right.
ATTEMPT2 = [(A, [P(3, 2, "book_flight", "Phase 1", False),
                 P(5, 2, "book_flight", "Phase 2", False), P(7, 3, "Refund_over_500", 9, False)]),
            (B, [P(1, 2, "cancellation", 1, True), P(3, 3, "minor", None, False)])]


def test_one_attempt_by_hand():
    s = score_attempt(ATTEMPT1)
    assert (s.compliant_turns, s.violation_turns, s.conversations) == (3, 2, 2)
    assert s.compliant_turn_accuracy == pytest.approx(1 / 3)   # A3 of {A3, A7, B3}
    assert s.violation_detection_accuracy == 1.0                # A5 and B1 flagged
    assert s.strict_violation_detection_accuracy == 0.5         # only B1 under the right one
    assert s.conversation_accuracy == 0.0                       # A has A7 wrong, B has B3 missing
    assert s.precision == pytest.approx(2 / 3) and s.recall == 1.0  # tp 2, fp 1 (A7), fn 0


def test_averaged_over_attempts_by_hand():
    # Attempt 2: compliant 3/3, VDA 1/2, strict 0/2, conversations 1/2 (B), precision 1/1,
    # recall 1/2. Means with attempt 1: (1/3 + 1)/2, (1 + 1/2)/2, (1/2 + 0)/2, (0 + 1/2)/2,
    # (2/3 + 1)/2, (1 + 1/2)/2.
    m = mean_over_attempts([score_attempt(ATTEMPT1), score_attempt(ATTEMPT2)])
    assert m["attempts"] == 2 and m["conversations"] == 2
    assert m["compliant_turn_accuracy"] == pytest.approx(2 / 3)
    assert m["violation_detection_accuracy"] == pytest.approx(0.75)
    assert m["strict_violation_detection_accuracy"] == pytest.approx(0.25)
    assert m["conversation_accuracy"] == pytest.approx(0.25)
    assert m["precision"] == pytest.approx(5 / 6)
    assert m["recall"] == pytest.approx(0.75)


def test_binary_judge_is_scored_on_verdicts_alone():
    # The attempt-2 verdicts with no guidelines: every compliant turn right (3/3), A5 missed,
    # B1 flagged: conversation B right, A not.
    binary = [(conv, [TurnPrediction(p.turn_index, None, p.violation) for p in preds])
              for conv, preds in ATTEMPT2]
    s = score_attempt(binary, binary=True)
    assert s.compliant_turn_accuracy == 1.0
    assert s.violation_detection_accuracy == 0.5
    assert s.strict_violation_detection_accuracy is None
    assert s.conversation_accuracy == 0.5


def test_nothing_to_score_is_none_not_zero():
    s = score_attempt([([T(1, 1, "greet", None, False)], [])])
    assert s.conversations == 0 and s.compliant_turn_accuracy is None
    assert s.conversation_accuracy is None


@pytest.mark.parametrize(("raw", "cat"), [(2, 2), ("2", 2), ("Category 3: Condition Triggered "
                                                               "Guidelines", 3)])
def test_category_forms(raw, cat):
    assert norm_category(raw) == cat


@pytest.mark.parametrize("bad", ["Category 4", "universal", True])
def test_bad_category(bad):
    with pytest.raises(ValueError):
        norm_category(bad)


def test_phase_forms():
    assert norm_phase("Phase 3") == 3 == norm_phase("3") == norm_phase(3)
    assert norm_phase(None) is None and norm_phase("none") is None
    with pytest.raises(ValueError):
        norm_phase("later")
