"""Agreement among human annotators: pairwise Cohen's kappa and Krippendorff's alpha (nominal).

This is the ceiling a judge can reach: a judge that agrees with the reference as well as the
annotators agree with each other is as good as another annotator. Labels are each annotator's
current label (error 0/1) on a response.

Kappa comes from scikit-learn's `cohen_kappa_score` (through `classify.kappa`, which keeps it
undefined, with a reason, when an annotator used one class only); alpha from the
`krippendorff` package (`krippendorff.alpha`, nominal). An undefined value keeps its reason.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import Any

# At import, not at first use: the report imports this module while its reads run in threads
# (copal_tui.services.report), so the 10 ms of loading krippendorff overlap them.
import krippendorff
import numpy as np

from copal_tui.metrics.classify import kappa, ratio
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_copal import AnnotatorPair, HumanAgreement


def _alpha(matrix: np.ndarray) -> tuple[float, str | None]:
    """Krippendorff's alpha of an (annotators x responses) matrix, NaN where not labelled."""
    if not matrix.shape[1]:
        return math.nan, "no response is labelled by two or more annotators"
    if len(np.unique(matrix[~np.isnan(matrix)])) < 2:
        return math.nan, ("every label on multiply-labelled responses is the same class; "
                          "alpha is undefined")
    alpha = float(krippendorff.alpha(reliability_data=matrix, value_domain=[0, 1],
                                     level_of_measurement="nominal"))
    if math.isnan(alpha):
        return math.nan, "Krippendorff's alpha is undefined on these labels"
    return alpha, None


def human_agreement(labels: Sequence[tuple[Hashable, str, int]]) -> HumanAgreement:
    """`labels` are (response, annotator, error) rows of current labels; a response is any
    sortable key (an id or an index). A later row for the same response and annotator wins."""
    latest = {(r, a): int(e) for r, a, e in labels}
    annotators = sorted({a for _r, a in latest})
    responses: list[Any] = sorted({r for r, _a in latest})
    # One row per response (in key order), one column per annotator: the error, -1 unlabelled.
    r_index = {r: k for k, r in enumerate(responses)}
    a_index = {a: k for k, a in enumerate(annotators)}
    table = np.full((len(responses), len(annotators)), -1, dtype=np.int64)
    at = np.array([(r_index[r], a_index[a]) for r, a in latest], dtype=np.int64).reshape(-1, 2)
    table[at[:, 0], at[:, 1]] = list(latest.values())
    multi = table[(table >= 0).sum(axis=1) >= 2]
    pairwise = []
    for (i, a), (j, b) in combinations(enumerate(annotators), 2):
        both = (multi[:, i] >= 0) & (multi[:, j] >= 0)
        n = int(both.sum())
        if n == 0:
            continue  # the pair never labelled the same response
        # a predicts, b is the reference: (a, b) = (0, 0), (0, 1), (1, 0), (1, 1)
        tn, fn, fp, tp = np.bincount(2 * multi[both, i] + multi[both, j], minlength=4).tolist()
        pairwise.append(AnnotatorPair(
            annotator_a=a, annotator_b=b, n=n,
            agreement=Metric.of(*ratio(tp + tn, n, "no co-labelled responses")),
            kappa=Metric.of(*kappa(tp, fp, tn, fn, first=f"annotator {a}",
                                   second=f"annotator {b}"))))
    defined = [p.kappa.value for p in pairwise if p.kappa.value is not None]
    return HumanAgreement(
        annotators=annotators, n_labels=len(labels), n_responses=len(responses),
        n_multiply_labelled=len(multi), pairwise=pairwise,
        mean_pairwise_kappa=Metric.of(*ratio(sum(defined), len(defined),
                                             "no annotator pair has a defined kappa")),
        krippendorff_alpha=Metric.of(*_alpha(np.ascontiguousarray(
            np.where(multi >= 0, multi, np.nan).T))))
