"""Judge-family sensitivity: would another judge rank the target models differently?

Judges are compared within one judge mode (contract judges with contract judges, full-policy
with full-policy): the mode is part of what a judge is asked, so a full-policy verdict never
votes among contract judges. Within a mode, over the composed responses that every setting of
the mode judged (so each judge sees exactly the same responses), each setting gets its overall
error rate, the ranking of target models it induces (lowest error first, ties by name), Kendall's
tau-b and Spearman's rho of its per-model error rates against the mode's reference setting's,
and the largest rank shift of any model. With two or more settings in the mode, their majority
verdict is one more row, `judge` "majority" with that mode (responses where the vote is tied are
left out and counted).

The rank statistics are scipy.stats's: `kendalltau` (variant "b"), `spearmanr` and competition
ranks (`rankdata`, method "min"). Where one is undefined (fewer than two models, or one side
gives every model the same error rate, so a rank correlation divides by zero) it is NaN with a
reason; scipy is not asked then, as it would only warn and return NaN without saying why.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence

from copal_tui.metrics.classify import ratio
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_copal import SensitivityRow

MAJORITY = "majority"


def competition_ranks(values: Sequence[float]) -> list[int]:
    """1-based ranks where ties share the best position ('1224'), lowest value first."""
    # scipy is imported on use, for start-up speed: by the time the report ranks anything
    # `validity` has loaded it (with the collector paused, see there), so this is a lookup.
    from scipy.stats import rankdata

    return [int(r) for r in rankdata(values, method="min")]


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> tuple[float, str | None]:
    from scipy.stats import kendalltau  # on use, as in `competition_ranks`

    return _correlation(x, y, "Kendall's tau-b", lambda: kendalltau(x, y, variant="b").statistic)


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> tuple[float, str | None]:
    from scipy.stats import spearmanr  # on use, as in `competition_ranks`

    return _correlation(x, y, "Spearman's rho", lambda: spearmanr(x, y).statistic)


def _correlation(x: Sequence[float], y: Sequence[float], name: str,
                 statistic: Callable[[], float]) -> tuple[float, str | None]:
    """`statistic()`, or NaN with the reason it is undefined (scipy is not asked then)."""
    if len(x) < 2:
        return math.nan, "fewer than two target models to rank"
    if len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan, "one of the judges gives every model the same error rate"
    value = float(statistic())
    if math.isnan(value):
        return math.nan, f"{name} is undefined on these error rates"
    return value, None


def _rates(per_model: dict[str, tuple[int, int]]) -> dict[str, float]:
    """Each model's error rate from its (n, errors); NaN for n 0."""
    return {m: (e / k if k else math.nan) for m, (k, e) in per_model.items()}


def _row(judge: str, mode: str, per_model: dict[str, tuple[int, int]],
         reference: dict[str, float] | None, is_reference: bool,
         ties_excluded: int | None = None) -> SensitivityRow:
    n, errors = (sum(v[i] for v in per_model.values()) for i in (0, 1))
    rates = _rates(per_model)
    ranked = sorted((m for m in rates if not math.isnan(rates[m])), key=lambda m: (rates[m], m))
    if reference is None:
        reason = "the reference judge is not among the judges of the common responses"
        tau = rho = shift = Metric.of(None, reason)
    else:
        models = [m for m in sorted(rates) if not math.isnan(rates[m])
                  and not math.isnan(reference.get(m, math.nan))]
        mine = [rates[m] for m in models]
        theirs = [reference[m] for m in models]
        tau, rho = Metric.of(*kendall_tau_b(mine, theirs)), Metric.of(*spearman_rho(mine, theirs))
        shift = Metric.of(max(abs(a - b) for a, b in zip(
            competition_ranks(mine), competition_ranks(theirs), strict=True))) if models else \
            Metric.of(None, "no model rated by both this judge and the reference")
    return SensitivityRow(
        judge=judge, mode=mode, n=n, errors=errors,
        error_rate=Metric.of(*ratio(errors, n, "no common responses")),
        by_model={m: rates[m] for m in sorted(rates)}, ranking=ranked, kendall_tau=tau,
        spearman_rho=rho, max_shift=shift, is_reference=is_reference,
        ties_excluded=ties_excluded)


def judge_sensitivity(cells: Sequence[tuple[str, str, str, int, int]],
                      majority: Sequence[tuple[str, int, int, int]],
                      reference: tuple[str, str]) -> list[SensitivityRow]:
    """`cells` are (judge, mode, model, n, errors) over the common responses; `majority` is
    (model, n, majority errors, ties) over the same responses; `reference` the reference
    setting (judge, mode)."""
    settings: dict[tuple[str, str], dict[str, tuple[int, int]]] = defaultdict(dict)
    for judge, mode, model, n, errors in cells:
        settings[(judge, mode)][model] = (n, errors)
    if not settings:
        return []
    ref_rates = _rates(settings[reference]) if reference in settings else None
    rows = [_row(key[0], key[1], settings[key], ref_rates, key == reference)
            for key in sorted(settings)]
    if len(settings) < 2:
        return rows  # one judge: no vote to take
    per_model = {m: (n - ties, errs) for m, n, errs, ties in majority}
    rows.append(_row(MAJORITY, next(iter(settings))[1], per_model, ref_rates, False,
                     ties_excluded=sum(t for _m, _n, _e, t in majority)))
    return rows
