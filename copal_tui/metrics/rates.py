"""Error rates and their conditionings, the facet atlas, one-sided failures, the construction
ablation and the judge-corrected (Rogan-Gladen) error.

Inputs are the grouped cells of `store.report.metrics_sql` (counts per model x world x pattern x facet x
error x direction), so every table here is a sum over a few hundred tuples whatever the size of
the store. Rates are fractions in [0, 1]; every rate carries its Wilson 95% interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from copal_tui.domain.taxonomy import FACET_PATTERN, Direction, Facet, Method, Pattern
from copal_tui.metrics.classify import put, ratio
from copal_tui.metrics.intervals import wilson

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


def rate(errors: int, n: int) -> dict[str, Any]:
    """{n, errors, error_rate, ci_low, ci_high}, NaN with reasons when n is 0."""
    out: dict[str, Any] = {"n": n, "errors": errors}
    reason = "no judged responses"
    put(out, "error_rate", ratio(errors, n, reason))
    low, high = wilson(errors, n)
    out["ci_low"], out["ci_high"] = low, high
    if n == 0:
        out["ci_low_reason"] = out["ci_high_reason"] = reason
    return out


def _direction(error: int, direction: str | None) -> str:
    """Direction of one cell; 'unknown' for errors imported with a bare error flag."""
    if not error:
        return Direction.NONE.value
    return direction if direction in DIRECTIONS else "unknown"


def error_rates(cells: Sequence[Cell]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per model with pattern, facet and world breakdowns; and the pooled overall rate."""
    # One pass fills every grouping: (judged, errors) per model and per (model, key).
    per_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    accs: dict[str, dict[tuple[str, str], list[int]]] = {
        name: defaultdict(lambda: [0, 0]) for name in ("by_pattern", "by_facet", "by_world")}
    by_pattern, by_facet, by_world = accs.values()
    for model, world, pattern, facet, error, _direction, count in cells:
        errors = count * int(error)
        for pair in (per_model[model], by_pattern[(model, pattern or UNMAPPED)],
                     by_facet[(model, facet or UNMAPPED)], by_world[(model, world)]):
            pair[0] += count
            pair[1] += errors
    orders = {"by_pattern": PATTERN_ORDER, "by_facet": FACET_ORDER, "by_world": []}
    rows = []
    for model in sorted(per_model):
        n, errors = per_model[model]
        row = {"model": model, **rate(errors, n)}
        for name, acc in accs.items():
            keys = ordered((k for (m, k) in acc if m == model), orders[name])
            row[name] = {k: rate(acc[(model, k)][1], acc[(model, k)][0]) for k in keys}
        rows.append(row)
    total_n = sum(r["n"] for r in rows)
    total_e = sum(r["errors"] for r in rows)
    return rows, rate(total_e, total_n)


def facet_atlas(cells: Sequence[Cell]) -> dict[str, dict[str, Any]]:
    """Per target facet (all models pooled): shares of judgments by error direction."""
    acc: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for _m, _w, _p, facet, error, direction, count in cells:
        acc[facet or UNMAPPED][_direction(error, direction)] += count
    out: dict[str, dict[str, Any]] = {}
    for facet in ordered(acc, FACET_ORDER):
        c = acc[facet]
        n = sum(c.values())
        known = n - c["unknown"]
        row: dict[str, Any] = {
            "pattern": FACET_PATTERN[Facet(facet)].value if facet in FACET_ORDER else UNMAPPED,
            "n": n, "errors": n - c[Direction.NONE.value],
            "under_enforcement": c[Direction.UNDER.value],
            "over_enforcement": c[Direction.OVER.value],
            "mixed": c[Direction.MIXED.value], "unknown_direction": c["unknown"],
        }
        reason = "no judgments with a known direction"
        put(row, "under_enforcement_share", ratio(c[Direction.UNDER.value], known, reason))
        put(row, "over_enforcement_share", ratio(c[Direction.OVER.value], known, reason))
        put(row, "mixed_share", ratio(c[Direction.MIXED.value], known, reason))
        out[facet] = row
    return out


def _sided(counts: dict[str, int]) -> dict[str, Any]:
    errors = sum(counts[d] for d in (*DIRECTIONS, "unknown"))
    known = errors - counts["unknown"]
    row: dict[str, Any] = {
        "errors": errors,
        "under_enforcement": counts[Direction.UNDER.value],
        "over_enforcement": counts[Direction.OVER.value],
        "mixed": counts[Direction.MIXED.value],
        "unknown_direction": counts["unknown"],
    }
    reason = "no errors with a known direction"
    put(row, "under_enforcement_share", ratio(counts[Direction.UNDER.value], known, reason))
    put(row, "over_enforcement_share", ratio(counts[Direction.OVER.value], known, reason))
    put(row, "one_sided_share", ratio(counts[Direction.UNDER.value]
                                      + counts[Direction.OVER.value], known, reason))
    put(row, "mixed_share", ratio(counts[Direction.MIXED.value], known, reason))
    return row


def one_sided(cells: Sequence[Cell]) -> dict[str, Any]:
    """Share of errors that are one-sided: under-enforcement only (a forbidden item present or
    a required gate/route/action missing) or over-enforcement only (a required content item
    missing), against mixed; pooled and per model."""
    pooled: dict[str, int] = defaultdict(int)
    per_model: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for model, _w, _p, _f, error, direction, count in cells:
        d = _direction(error, direction)
        pooled[d] += count
        per_model[model][d] += count
    return {**_sided(pooled), "by_model": {m: _sided(per_model[m]) for m in sorted(per_model)}}


def ablation(method_cells: Sequence[tuple[str, str, int, int]],
             selected: Sequence[tuple[str, int]],
             poolable: Iterable[str] | None = None) -> tuple[list[dict[str, Any]], list[str]]:
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
        n = sum(v[0] for m, v in models.items() if m in pooled)
        errors = sum(v[1] for m, v in models.items() if m in pooled)
        row = {"method": method, "selected_items": int(budget.get(method, 0)),
               **rate(errors, n), "pooled_models": sorted(pooled & set(models)),
               "by_model": {m: rate(models[m][1], models[m][0]) for m in sorted(models)}}
        if n == 0:
            row["error_rate_reason"] = row["ci_low_reason"] = row["ci_high_reason"] = (
                "no items selected for this method" if not budget.get(method)
                else "no judged responses")
        rows.append(row)
    return rows, left_out


CORRECTION_CAVEAT = (
    "Rogan-Gladen correction: (observed + specificity - 1) / (sensitivity + specificity - 1), "
    "with sensitivity = 1 - FN rate and specificity = 1 - FP rate of the primary judge measured "
    "against the human reference labels. It assumes those rates hold for every model and item "
    "(they were measured on the labelled subset only), is unstable when few responses are "
    "labelled, and is clipped to [0, 1]."
)


def corrected_error_rates(rows: Sequence[dict[str, Any]], validity: dict[str, Any] | None,
                          judge: str, mode: str) -> dict[str, Any]:
    """Each model's error rate corrected for the primary judge's measured FP and FN rates."""
    out: dict[str, Any] = {"judge": judge, "mode": mode, "caveat": CORRECTION_CAVEAT}
    reason: str | None = None
    sens = spec = math.nan
    if validity is None or validity["n"] == 0:
        reason = "no human reference labels on responses this judge judged"
    else:
        sens, spec = 1 - validity["fn_rate"], 1 - validity["fp_rate"]
        if math.isnan(sens) or math.isnan(spec):
            reason = "the judge's FN or FP rate is undefined on the labelled responses"
        elif sens + spec - 1 <= 0:
            reason = "the judge is no better than chance (sensitivity + specificity <= 1)"
    out["sensitivity"], out["specificity"] = sens, spec
    out["n_labelled"] = 0 if validity is None else validity["n"]
    if reason:
        out["sensitivity_reason"] = out["specificity_reason"] = reason
    models = []
    for row in rows:
        entry: dict[str, Any] = {"model": row["model"], "n": row["n"],
                                 "observed_error_rate": row["error_rate"]}
        if reason is None and not math.isnan(row["error_rate"]):
            raw = (row["error_rate"] + spec - 1) / (sens + spec - 1)
            entry["corrected_error_rate"] = min(1.0, max(0.0, raw))
            entry["clipped"] = raw < 0 or raw > 1
        else:
            entry["corrected_error_rate"] = math.nan
            entry["corrected_error_rate_reason"] = reason or "no judged responses"
            entry["clipped"] = False
        models.append(entry)
    out["models"] = models
    return out
