"""The real-traffic audit's human labels made into figures: how well the annotators agree on a
pair's policy category and on whether its response is erroneous, and each pair's reference
label (what the audit's Table 11 counts). Pure: it computes from typed rows (the store's
`store.annotation.traffic_labels` rows fit `LabelRow`), never from the store.

Agreement is over the pairs with at least two current labels, leaving out every pair an
annotator flagged as still holding sensitive content (such a pair leaves the figures and is
counted in `excluded_sensitive`). Per field:

- `kappa`: Cohen's kappa of two annotators on the pairs both labelled (scikit-learn's
  `cohen_kappa_score`; the error's through `classify.kappa`, the one every binary kappa of
  copal uses); with more than two annotators, the mean of the pairwise kappas, as copal's
  human agreement gives it. Undefined, with the reason, when an annotator used one class only;
- `alpha`: Krippendorff's alpha, nominal, over every annotator at once (the `krippendorff`
  package), missing labels allowed.

A category is nominal over none / single / multi; the error is binary.

A pair's reference label is its current decision (adjudication) when it has one, else the
most common category and the most common verdict among its annotators' labels; a tie on
either leaves the pair without a reference (`basis` TIE), and so does a pair whose labels all
flag it sensitive without a category or verdict (UNLABELLED). A pair is `sensitive` when any
current label or its decision flags it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Protocol

import krippendorff
import numpy as np

from copal_tui.domain.traffic import CATEGORIES
from copal_tui.metrics.classify import kappa, ratio
from copal_tui.metrics.document_base import FlatModel, Metric
from copal_tui.metrics.document_copal import AnnotatorPair

ADJUDICATED, MAJORITY, TIE, UNLABELLED = "adjudicated", "majority", "tie", "unlabelled"
CATEGORY, ERROR = "category", "error"


class LabelRow(Protocol):
    """One current label of one annotator on one pair (what agreement reads)."""

    @property
    def pair(self) -> str: ...
    @property
    def annotator(self) -> str: ...
    @property
    def category(self) -> str | None: ...
    @property
    def erroneous(self) -> bool | None: ...
    @property
    def sensitive(self) -> bool: ...


class SourcedRow(LabelRow, Protocol):
    """A label with its pair's source (what a reference label carries on)."""

    @property
    def source(self) -> str: ...


class FieldAgreement(FlatModel):
    """Agreement on one field (`category` or `error`) over the pairs with two labels or more."""

    field: str
    n_pairs: int
    n_annotators: int
    pairwise: list[AnnotatorPair]
    kappa: Metric
    alpha: Metric


class TrafficAgreement(FlatModel):
    """Agreement among the traffic annotators on category and on error."""

    annotators: list[str]
    n_pairs: int  # pairs with two current labels or more, none of them flagged sensitive
    n_annotators: int
    excluded_sensitive: int  # labelled pairs left out: an annotator flagged them sensitive
    category: FieldAgreement
    error: FieldAgreement


@dataclass(frozen=True)
class Reference:
    """A pair's reference label: `basis` says where it comes from (ADJUDICATED, MAJORITY; or
    TIE, UNLABELLED: no reference, `category` and `erroneous` None)."""

    pair: str
    source: str
    category: str | None
    erroneous: bool | None
    sensitive: bool
    basis: str


def _class_kappa(a: Sequence[int], b: Sequence[int], first: str,
                 second: str) -> tuple[float, str | None]:
    """Cohen's kappa of two raters' category codes on the same pairs."""
    if not a:
        return math.nan, f"no pair labelled by both {first} and {second}"
    one = [who for who, codes in ((first, a), (second, b)) if len(set(codes)) == 1]
    if one:
        return math.nan, (f"{' and '.join(one)} used one category only; kappa is undefined")
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score(list(a), list(b), labels=list(range(len(CATEGORIES)))))
    return (math.nan, "Cohen's kappa is undefined on these labels") if math.isnan(value) \
        else (value, None)


def _error_kappa(a: Sequence[int], b: Sequence[int], first: str,
                 second: str) -> tuple[float, str | None]:
    # a predicts, b is the reference: (a, b) = (0, 0), (0, 1), (1, 0), (1, 1)
    tn, fn, fp, tp = np.bincount(2 * np.asarray(a, dtype=np.int64) +
                                 np.asarray(b, dtype=np.int64), minlength=4).tolist()
    return kappa(tp, fp, tn, fn, first=first, second=second)


def _alpha(matrix: np.ndarray, domain: int) -> tuple[float, str | None]:
    """Nominal Krippendorff's alpha of an (annotators x pairs) matrix of codes 0..domain-1,
    NaN where not labelled."""
    if not matrix.shape[1]:
        return math.nan, "no pair is labelled by two or more annotators"
    if len(np.unique(matrix[~np.isnan(matrix)])) < 2:
        return math.nan, "every label on multiply-labelled pairs is the same; alpha is undefined"
    value = float(krippendorff.alpha(reliability_data=matrix, value_domain=list(range(domain)),
                                     level_of_measurement="nominal"))
    return (math.nan, "Krippendorff's alpha is undefined on these labels") \
        if math.isnan(value) else (value, None)


def _field(name: str, table: np.ndarray, annotators: list[str]) -> FieldAgreement:
    """`table`: pairs x annotators, the field's code, -1 where not labelled."""
    pairwise = []
    pair_kappa = _class_kappa if name == CATEGORY else _error_kappa
    for (i, a), (j, b) in combinations(enumerate(annotators), 2):
        both = (table[:, i] >= 0) & (table[:, j] >= 0)
        if not both.any():
            continue  # the two never labelled the same pair
        xs, ys = table[both, i].tolist(), table[both, j].tolist()
        pairwise.append(AnnotatorPair(
            annotator_a=a, annotator_b=b, n=len(xs),
            agreement=Metric.of(*ratio(sum(x == y for x, y in zip(xs, ys, strict=True)),
                                       len(xs), "no co-labelled pairs")),
            kappa=Metric.of(*pair_kappa(xs, ys, f"annotator {a}", f"annotator {b}"))))
    defined = [p.kappa.value for p in pairwise if p.kappa.value is not None]
    if len(pairwise) == 1:
        mean = pairwise[0].kappa
    else:
        mean = Metric.of(*ratio(sum(defined), len(defined),
                                "no annotator pair has a defined kappa"))
    domain = len(CATEGORIES) if name == CATEGORY else 2
    alpha = _alpha(np.ascontiguousarray(np.where(table >= 0, table, np.nan).T), domain)
    return FieldAgreement(field=name, n_pairs=len(table), n_annotators=len(annotators),
                          pairwise=pairwise, kappa=mean, alpha=Metric.of(*alpha))


def traffic_agreement(rows: Iterable[LabelRow]) -> TrafficAgreement:
    """Agreement on category and on error among the annotators' current labels `rows` (a later
    row for the same pair and annotator wins)."""
    latest = {(r.pair, r.annotator): r for r in rows}
    flagged = {p for (p, _a), r in latest.items() if r.sensitive}
    usable = {k: r for k, r in latest.items() if k[0] not in flagged
              and r.category is not None and r.erroneous is not None}
    counts = Counter(p for p, _a in usable)
    pairs = sorted(p for p, n in counts.items() if n >= 2)
    kept = {k: r for k, r in usable.items() if counts[k[0]] >= 2}
    annotators = sorted({a for _p, a in kept})
    p_index = {p: k for k, p in enumerate(pairs)}
    a_index = {a: k for k, a in enumerate(annotators)}
    category = np.full((len(pairs), len(annotators)), -1, dtype=np.int64)
    error = category.copy()
    for (p, a), r in kept.items():
        category[p_index[p], a_index[a]] = CATEGORIES.index(str(r.category))
        error[p_index[p], a_index[a]] = int(bool(r.erroneous))
    return TrafficAgreement(annotators=annotators, n_pairs=len(pairs),
                            n_annotators=len(annotators), excluded_sensitive=len(flagged),
                            category=_field(CATEGORY, category, annotators),
                            error=_field(ERROR, error, annotators))


def _most_common(values: list[object]) -> object | None:
    """The one most common value; None on a tie (or no value)."""
    top = Counter(values).most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def references(labels: Iterable[SourcedRow],
               decisions: Iterable[SourcedRow]) -> list[Reference]:
    """Each labelled or decided pair's reference label (see the module docstring), by pair."""
    by_pair: dict[str, list[SourcedRow]] = {}
    for r in labels:
        by_pair.setdefault(r.pair, []).append(r)
    decided = {d.pair: d for d in decisions}
    out = []
    for pair in sorted(by_pair.keys() | decided.keys()):
        mine = by_pair.get(pair, [])
        decision = decided.get(pair)
        sensitive = any(r.sensitive for r in mine) or bool(decision and decision.sensitive)
        source = (decision or mine[0]).source
        if decision is not None:
            out.append(Reference(pair, source, decision.category, decision.erroneous,
                                 sensitive, ADJUDICATED))
            continue
        given = [r for r in mine if r.category is not None and r.erroneous is not None]
        category = _most_common([r.category for r in given])
        erroneous = _most_common([r.erroneous for r in given])
        if category is None or erroneous is None:
            out.append(Reference(pair, source, None, None, sensitive,
                                 TIE if given else UNLABELLED))
        else:
            out.append(Reference(pair, source, str(category), bool(erroneous), sensitive,
                                 MAJORITY))
    return out
