"""Error rates and their conditionings, the facet atlas, one-sided failures, the construction
ablation and the judge-corrected (Rogan-Gladen) error.

Inputs are the grouped cells of `store.report.reads` (counts per model x world x pattern x facet x
error x direction), so every table here is a sum over a few hundred tuples whatever the size of
the store. Rates are fractions in [0, 1]; every rate carries its Wilson 95% interval.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

from copal_tui.domain.taxonomy import FACET_PATTERN, Direction, Facet, Method, Pattern
from copal_tui.metrics.classify import ratio
from copal_tui.metrics.document_base import Interval, Metric
from copal_tui.metrics.document_copal import (
    AblationRow,
    CorrectedErrorRates,
    CorrectedModel,
    FacetAtlasRow,
    JudgeValidity,
    ModelErrorRate,
    OneSided,
    Rate,
    Sided,
)
from copal_tui.metrics.intervals import wilson
from copal_tui.metrics.provenance import is_offline

UNMAPPED = "unmapped"
PATTERN_ORDER = [p.value for p in Pattern]
FACET_ORDER = [f.value for f in Facet]
# The ablation's methods in the order the paper compares them, COPAL last.
METHOD_ORDER = [Method.RAW_POLICY.value, Method.CLAUSE_ONLY.value, Method.NO_FACET.value,
                Method.COPAL.value]
DIRECTIONS = (Direction.UNDER.value, Direction.OVER.value, Direction.MIXED.value)

Cell = tuple[str, str, str | None, str | None, int, str | None, int]


def ordered(keys: Iterable[str], order: Sequence[str]) -> list[str]:
    """Keys in taxonomy order, anything unknown after them alphabetically."""
    rank = {k: i for i, k in enumerate(order)}
    return sorted(set(keys), key=lambda k: (rank.get(k, len(rank)), k))


def rate(errors: int, n: int, empty: str = "no judged responses") -> Rate:
    """n, errors and the error rate with its Wilson interval; undefined, with `empty` as the
    reason of the rate and of its interval, when n is 0."""
    low, high = wilson(errors, n)
    reason = None if n else empty
    return Rate(n=n, errors=errors, error_rate=Metric.of(
        *ratio(errors, n, empty), interval=Interval.of(low, high, reason)))


def _direction(error: int, direction: str | None) -> str:
    """Direction of one cell; 'unknown' for errors imported with a bare error flag."""
    if not error:
        return Direction.NONE.value
    return direction if direction in DIRECTIONS else "unknown"


def error_rates(cells: Sequence[Cell]) -> list[ModelErrorRate]:
    """Per model, with pattern, facet and world breakdowns."""
    # One pass fills every grouping: (judged, errors) per model and per (model, breakdown, key).
    per_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    acc: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for model, world, pattern, facet, error, _direction, count in cells:
        for pair in (per_model[model], acc[(model, "pattern", pattern or UNMAPPED)],
                     acc[(model, "facet", facet or UNMAPPED)], acc[(model, "world", world)]):
            pair[0] += count
            pair[1] += count * int(error)

    def breakdown(model: str, name: str, order: Sequence[str]) -> dict[str, Rate]:
        keys = ordered((k for (m, b, k) in acc if (m, b) == (model, name)), order)
        return {k: rate(acc[(model, name, k)][1], acc[(model, name, k)][0]) for k in keys}

    return [ModelErrorRate(
        model=model, n=n, errors=errors, error_rate=rate(errors, n).error_rate,
        by_pattern=breakdown(model, "pattern", PATTERN_ORDER),
        by_facet=breakdown(model, "facet", FACET_ORDER),
        by_world=breakdown(model, "world", []), reference_bot=is_offline(model))
        for model, (n, errors) in sorted(per_model.items())]


def _by_direction(cells: Sequence[Cell], column: Literal[0, 3]) -> dict[str, Counter[str]]:
    """Judgments by direction per value of one column of the cells (model 0, facet 3)."""
    acc: dict[str, Counter[str]] = defaultdict(Counter)
    for cell in cells:
        acc[cell[column] or UNMAPPED][_direction(cell[4], cell[5])] += cell[6]
    return acc


def facet_atlas(cells: Sequence[Cell]) -> dict[str, FacetAtlasRow]:
    """Per target facet (all models pooled): shares of judgments by error direction."""
    acc = _by_direction(cells, 3)
    out: dict[str, FacetAtlasRow] = {}
    for facet in ordered(acc, FACET_ORDER):
        c = acc[facet]
        n = sum(c.values())
        known = n - c["unknown"]
        reason = "no judgments with a known direction"
        out[facet] = FacetAtlasRow(
            pattern=FACET_PATTERN[Facet(facet)].value if facet in FACET_ORDER else UNMAPPED,
            n=n, errors=n - c[Direction.NONE.value],
            under_enforcement=c[Direction.UNDER.value],
            over_enforcement=c[Direction.OVER.value],
            mixed=c[Direction.MIXED.value], unknown_direction=c["unknown"],
            under_enforcement_share=Metric.of(*ratio(c[Direction.UNDER.value], known, reason)),
            over_enforcement_share=Metric.of(*ratio(c[Direction.OVER.value], known, reason)),
            mixed_share=Metric.of(*ratio(c[Direction.MIXED.value], known, reason)))
    return out


def _sided(counts: Counter[str]) -> Sided:
    errors = sum(counts[d] for d in (*DIRECTIONS, "unknown"))
    known = errors - counts["unknown"]
    under, over = counts[Direction.UNDER.value], counts[Direction.OVER.value]
    reason = "no errors with a known direction"
    return Sided(
        errors=errors, under_enforcement=under, over_enforcement=over,
        mixed=counts[Direction.MIXED.value], unknown_direction=counts["unknown"],
        under_enforcement_share=Metric.of(*ratio(under, known, reason)),
        over_enforcement_share=Metric.of(*ratio(over, known, reason)),
        one_sided_share=Metric.of(*ratio(under + over, known, reason)),
        mixed_share=Metric.of(*ratio(counts[Direction.MIXED.value], known, reason)))


def one_sided(cells: Sequence[Cell], per_model_cells: Sequence[Cell] | None = None) -> OneSided:
    """Share of errors that are one-sided: under-enforcement only (a forbidden item present or
    a required gate/route/action missing) or over-enforcement only (a required content item
    missing), against mixed; pooled over `cells`, per model over `per_model_cells` (default:
    the same cells)."""
    pooled = sum(_by_direction(cells, 0).values(), Counter[str]())
    per_model = _by_direction(cells if per_model_cells is None else per_model_cells, 0)
    return OneSided(**dict(_sided(pooled)),
                    by_model={m: _sided(per_model[m]) for m in sorted(per_model)})


def ablation(method_cells: Sequence[tuple[str, str, int, int]],
             selected: Sequence[tuple[str, int]],
             poolable: Iterable[str] | None = None) -> tuple[list[AblationRow], list[str]]:
    """Error per construction method at the matched budget, per model and pooled.

    The pooled rate of every method is over the same target models: those judged on every
    method that has judged responses (a model that answered COPAL items only would otherwise
    tilt one method's pool). Returns the rows and the models left out of the pools.
    """
    budget = dict(selected)
    by_method: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    for method, model, n, errors in method_cells:
        by_method[method][model] = (int(n), int(errors or 0))
    methods = ordered([m for m in {*METHOD_ORDER, *budget, *by_method}
                       if m != Method.PROJECTION.value], METHOD_ORDER)
    judged = [set(by_method[m]) for m in methods if by_method.get(m)]
    pooled = set.intersection(*judged) if judged else set()
    if poolable is not None:  # reference bots are shown per model, never pooled with targets
        pooled &= set(poolable)
    left_out = sorted(set.union(*judged) - pooled) if judged else []
    rows = []
    for method in methods:
        models = by_method.get(method, {})
        n, errors = (sum(v[i] for m, v in models.items() if m in pooled) for i in (0, 1))
        empty = "no judged responses" if budget.get(method) else "no items selected for this method"
        rows.append(AblationRow(
            method=method, selected_items=int(budget.get(method, 0)), n=n, errors=errors,
            error_rate=rate(errors, n, empty).error_rate,
            pooled_models=sorted(pooled & set(models)),
            by_model={m: rate(models[m][1], models[m][0]) for m in sorted(models)}))
    return rows, left_out


CORRECTION_CAVEAT = (
    "Rogan-Gladen correction: (observed + specificity - 1) / (sensitivity + specificity - 1), "
    "with sensitivity = 1 - FN rate and specificity = 1 - FP rate of the primary judge measured "
    "against the human reference labels. It assumes those rates hold for every model and item "
    "(they were measured on the labelled subset only), is unstable when few responses are "
    "labelled, and is clipped to [0, 1]."
)


def correction_problem(sens: float, spec: float, what: str = "responses") -> str | None:
    """Why the Rogan-Gladen correction cannot be applied with this sensitivity and
    specificity (NaN when undefined on the labelled `what`); None when it can."""
    if math.isnan(sens) or math.isnan(spec):
        return f"the judge's FN or FP rate is undefined on the labelled {what}"
    if sens + spec - 1 <= 0:
        return "the judge is no better than chance (sensitivity + specificity <= 1)"
    return None


def rogan_gladen(observed: float, sens: float, spec: float) -> tuple[Metric, bool]:
    """The observed rate corrected for the judge's sensitivity and specificity, clipped to
    [0, 1], and whether it was clipped (the caller has checked `correction_problem`)."""
    raw = (observed + spec - 1) / (sens + spec - 1)
    return Metric.of(min(1.0, max(0.0, raw))), raw < 0 or raw > 1


def corrected_error_rates(rows: Sequence[ModelErrorRate], validity: JudgeValidity | None,
                          judge: str, mode: str) -> CorrectedErrorRates:
    """Each model's error rate corrected for the primary judge's measured FP and FN rates."""
    reason: str | None = None
    sens = spec = math.nan
    if validity is None or validity.n == 0:
        reason = "no human reference labels on responses this judge judged"
    else:
        sens, spec = 1 - _nan(validity.fn_rate.value), 1 - _nan(validity.fp_rate.value)
        reason = correction_problem(sens, spec)
    models = []
    for row in rows:
        observed = _nan(row.error_rate.value)
        if reason is None and not math.isnan(observed):
            corrected, clipped = rogan_gladen(observed, sens, spec)
        else:
            corrected, clipped = Metric.of(None, reason or "no judged responses"), False
        models.append(CorrectedModel(model=row.model, n=row.n, observed_error_rate=observed,
                                     corrected_error_rate=corrected, clipped=clipped))
    # A judge no better than chance keeps its sensitivity and specificity, with the reason the
    # correction was not applied beside them.
    return CorrectedErrorRates(
        judge=judge, mode=mode, caveat=CORRECTION_CAVEAT,
        sensitivity=Metric(value=None if math.isnan(sens) else sens, reason=reason),
        specificity=Metric(value=None if math.isnan(spec) else spec, reason=reason),
        n_labelled=0 if validity is None else validity.n, models=models)


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
