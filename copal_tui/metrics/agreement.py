"""Agreement among human annotators: pairwise Cohen's kappa and Krippendorff's alpha (nominal).

This is the ceiling a judge can reach: a judge that agrees with the reference as well as the
annotators agree with each other is as good as another annotator. Labels are each annotator's
current label (error 0/1) on a response.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import Any

from copal_tui.metrics.classify import kappa, put, ratio


def _alpha(units: list[dict[str, int]], annotators: list[str]) -> tuple[float, str | None]:
    if not units:
        return math.nan, "no response is labelled by two or more annotators"
    values = {v for unit in units for v in unit.values()}
    if len(values) < 2:
        return math.nan, ("every label on multiply-labelled responses is the same class; "
                          "alpha is undefined")
    import krippendorff  # lazily: only needed when there is something to measure
    import numpy as np

    matrix = np.full((len(annotators), len(units)), np.nan)
    index = {a: i for i, a in enumerate(annotators)}
    for col, unit in enumerate(units):
        for annotator, value in unit.items():
            matrix[index[annotator], col] = value
    alpha = float(krippendorff.alpha(reliability_data=matrix, value_domain=[0, 1],
                                     level_of_measurement="nominal"))
    if math.isnan(alpha):
        return math.nan, "Krippendorff's alpha is undefined on these labels"
    return alpha, None


def human_agreement(labels: Sequence[tuple[Hashable, str, int]]) -> dict[str, Any]:
    """`labels` are (response, annotator, error) rows of current labels; a response is any
    sortable key (an id or an index)."""
    by_response: dict[Any, dict[str, int]] = defaultdict(dict)
    for response, annotator, error in labels:
        by_response[response][annotator] = int(error)
    annotators = sorted({a for _r, a, _e in labels})
    multi = [by_response[r] for r in sorted(by_response) if len(by_response[r]) >= 2]
    pairwise = []
    for a, b in combinations(annotators, 2):
        tp = fp = tn = fn = 0
        for unit in multi:
            if a in unit and b in unit:
                x, y = unit[a], unit[b]
                tp += x & y
                fp += x & (1 - y)
                tn += (1 - x) & (1 - y)
                fn += (1 - x) & y
        n = tp + fp + tn + fn
        if n == 0:
            continue  # the pair never labelled the same response
        pair: dict[str, Any] = {"annotator_a": a, "annotator_b": b, "n": n}
        put(pair, "agreement", ratio(tp + tn, n, "no co-labelled responses"))
        put(pair, "kappa", kappa(tp, fp, tn, fn, first=f"annotator {a}",
                                 second=f"annotator {b}"))
        pairwise.append(pair)
    out: dict[str, Any] = {
        "annotators": annotators,
        "n_labels": len(labels),
        "n_responses": len(by_response),
        "n_multiply_labelled": len(multi),
        "pairwise": pairwise,
    }
    defined = [p["kappa"] for p in pairwise if not math.isnan(p["kappa"])]
    put(out, "mean_pairwise_kappa",
        ratio(sum(defined), len(defined), "no annotator pair has a defined kappa"))
    put(out, "krippendorff_alpha", _alpha(multi, annotators))
    return out
