"""The human reference label of a response, the one rule every figure and list uses.

A response's reference is its current adjudication when there is one, else the majority of its
annotators' current labels; an even split without an adjudication is a tie and has no reference
(the report counts it as excluded). `frame.reference` applies the rule to every response of a
report, `copal_tui.services.cases` to the responses behind one figure, the item screen to one response:
all three call `reference_rule`, so a list of cases can never disagree with the count it
explains.

The confusion-matrix convention of every table, plot and screen is here too: scikit-learn's
`confusion_matrix(reference, judge, labels=[0, 1])`, rows the human reference, columns the
judge, error (1) the positive class, so [[tn, fp], [fn, tp]].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

# How a reference was formed (`reference_rule`'s second array).
NONE, ADJUDICATED, MAJORITY, TIE = 0, 1, 2, 3
SOURCES = {NONE: "none", ADJUDICATED: "adjudicated", MAJORITY: "majority", TIE: "tie"}

CONVENTION = "rows: human reference \u00b7 columns: judge \u00b7 positive: error"
CLASSES = ("no error", "error")  # row and column order: label 0, then label 1
# CELLS[reference][judge]: the name of each cell of the matrix.
CELLS = (("tn", "fp"), ("fn", "tp"))
CELL_NAMES = ("tp", "fp", "fn", "tn")


def reference_rule(n: int, label_at: ArrayLike, label_error: ArrayLike,
                   adjudication_at: ArrayLike, adjudication_error: ArrayLike
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The reference error of each of `n` responses (-1: none) and how it was formed (NONE,
    ADJUDICATED, MAJORITY or TIE). `label_at` holds the response position of each current
    label and `label_error` its error; `adjudication_at`/`adjudication_error` likewise for
    the current adjudications (at most one per response)."""
    # Imported here: the constants below are read by screens that must not load numpy.
    import numpy as np

    at = np.asarray(label_at, dtype=np.int64)
    votes = np.bincount(at, minlength=n)
    errors = np.bincount(at, weights=np.asarray(label_error, dtype=np.int64),
                         minlength=n).astype(np.int64)
    decided = np.asarray(adjudication_at, dtype=np.int64)
    adjudicated = np.zeros(n, dtype=bool)
    adjudicated[decided] = True
    voted = ~adjudicated & (votes > 0)
    majority, tie = voted & (2 * errors != votes), voted & (2 * errors == votes)
    ref = np.where(majority, (2 * errors > votes).astype(np.int64), -1)
    ref[decided] = np.asarray(adjudication_error, dtype=np.int64)
    source = np.select([adjudicated, majority, tie], [ADJUDICATED, MAJORITY, TIE], NONE)
    return ref, source


def cell(judge_error: int, reference_error: int) -> str:
    """tp, fp, fn or tn of one response (error is the positive class)."""
    return CELLS[int(reference_error)][int(judge_error)]
