"""CompliBench metrics against values computed by hand (see the comments), not by the code."""

from __future__ import annotations

import pytest

from copal_tui.domain.dialogue import (
    Guideline,
    TurnPrediction,
    TurnTruth,
    norm_category,
    norm_phase,
    score_files,
)

G = Guideline.of


def T(i, cat, key, phase, violation):  # noqa: N802 - reads like a table row
    return TurnTruth(i, G(cat, key, phase), violation)


def P(i, cat, key, phase, violation):  # noqa: N802
    return TurnPrediction(i, None if cat is None else G(cat, key, phase), violation)


# Conversation A: turn 1 universal, 3 compliant, 5 violation, 7 compliant (Category 3: phase -1).
A = [T(1, 1, "greet", None, False), T(3, 2, "book_flight", "Phase 1", False),
     T(5, 2, "book_flight", "Phase 2", True), T(7, 3, "refund_over_500", -1, False)]
# Conversation B: turn 1 violation, turn 3 compliant (Category 3, no phase given: -1).
B = [T(1, "Category 2: Intent Triggered Guidelines", "cancel", "Phase 1", True),
     T(3, 3, "minor", None, False)]

# Attempt 1: A1 a false alarm; A3 right; A5 flagged under the wrong phase; A7 a false alarm;
# B1 flagged under the right guideline; B3 has no prediction at all.
ATTEMPT1 = [(A, [P(1, 1, "x", None, True), P(3, 2, "book_flight", 1, False),
                 P(5, 2, "book_flight", 3, True), P(7, 3, "refund_over_500", None, True)]),
            (B, [P(1, 2, "cancel", "1", True)])]
# Attempt 2: A1 no prediction; A3 right; A5 missed; A7 the key in another case and a phase for
# a Category 3 guideline (both wrong as CompliBench compares); B1 flagged under the wrong key;
# B3 right.
ATTEMPT2 = [(A, [P(3, 2, "book_flight", "Phase 1", False),
                 P(5, 2, "book_flight", "Phase 2", False), P(7, 3, "Refund_over_500", 9, False)]),
            (B, [P(1, 2, "cancellation", 1, True), P(3, 3, "minor", -1, False)])]


def test_one_attempt_by_hand():
    s = score_files(ATTEMPT1)
    assert (s.compliant_turns, s.violation_turns, s.conversations) == (4, 2, 2)
    assert s.compliant_turn_accuracy == pytest.approx(1 / 4)   # A3 of {A1, A3, A7, B3}
    assert s.violation_detection_accuracy == 1.0                # A5 and B1 flagged
    assert s.strict_violation_detection_accuracy == 0.5         # only B1 under the right one
    assert s.conversation_accuracy == 0.0                       # A1, A7 wrong; B3 missing
    assert s.precision == pytest.approx(2 / 4) and s.recall == 1.0  # tp 2, fp 2 (A1, A7)


def test_attempts_pool_as_files_by_hand():
    # Attempt 2 alone: compliant 2/4 (A3, B3), detection 1/2 (B1), strict 0/2, files 1/2 (B),
    # tp 1 fp 0 fn 1. Pooled with attempt 1 (each attempt's files counted on their own):
    # compliant 3/8, detection 3/4, strict 1/4, files 1/4, precision 3/5, recall 3/4.
    s = score_files(ATTEMPT1 + ATTEMPT2)
    assert s.conversations == 4
    assert s.compliant_turn_accuracy == pytest.approx(3 / 8)
    assert s.violation_detection_accuracy == pytest.approx(3 / 4)
    assert s.strict_violation_detection_accuracy == pytest.approx(1 / 4)
    assert s.conversation_accuracy == pytest.approx(1 / 4)
    assert s.precision == pytest.approx(3 / 5)
    assert s.recall == pytest.approx(3 / 4)


def test_category_3_phase_is_compared_strictly():
    truth = [T(1, 3, "legal_threat", -1, False), T(3, 3, "hardship", -1, True)]
    # A phase named for a Category 3 guideline is wrong; none given, or -1, is right.
    for phase, right in ((None, True), (-1, True), ("-1", True), (0, False), (1, False)):
        s = score_files([(truth, [P(1, 3, "legal_threat", phase, False),
                                  P(3, 3, "hardship", phase, True)])])
        assert s.compliant_turn_accuracy == (1.0 if right else 0.0), phase
        assert s.violation_detection_accuracy == 1.0
        assert s.strict_violation_detection_accuracy == (1.0 if right else 0.0), phase


def test_binary_judge_is_scored_on_verdicts_alone():
    # The attempt-2 verdicts with no guidelines: A1 has no prediction (wrong), A3, A7, B3 right
    # (3/4), A5 missed, B1 flagged: file B right, A not.
    binary = [(conv, [TurnPrediction(p.turn_index, None, p.violation) for p in preds])
              for conv, preds in ATTEMPT2]
    s = score_files(binary, binary=True)
    assert s.compliant_turn_accuracy == 0.75
    assert s.violation_detection_accuracy == 0.5
    assert s.strict_violation_detection_accuracy is None
    assert s.conversation_accuracy == 0.5


def test_untagged_turns_are_not_scored_and_their_file_is_right():
    # As CompliBench's script: a file with no tagged turn has undefined turn rates and counts
    # as a correct file.
    s = score_files([([T(1, None, None, None, False)], [])])
    assert s.conversations == 1 and s.compliant_turn_accuracy is None
    assert s.violation_detection_accuracy is None
    assert s.conversation_accuracy == 1.0


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
    assert norm_phase("-1") == -1 == norm_phase(-1)
    assert norm_phase(None) is None and norm_phase("none") is None
    with pytest.raises(ValueError):
        norm_phase("later")
