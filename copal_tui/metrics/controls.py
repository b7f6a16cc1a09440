"""The paper's surface-complexity controls (COPAL section 5 and appendix B.4), report key
`controls`: is the composed-policy error only an effect of longer, many-part requests?

- `by_active_clauses`: error of the selected composed items by number of active clauses
  (the clauses of the item's composition): "2", "3", "more"; per target model and pooled.
- `by_query_length`: error by quartile of the composed query's length in characters. The
  quartiles split the selected composed items in scope (not the responses) into four groups
  of (nearly) equal size by length, ties broken by item id: Q1 holds ranks 0 .. m/4 - 1 of
  the m items, and so on; each quartile gives its items' shortest and longest length.
- `non_interacting`: error of the non-interacting multi-clause controls (method `control`:
  licensing clauses only, selected apart from the suite), per model and pooled, next to the
  composed error over the same models.

All figures use the primary judge (`scope.primary_judge`), usable judgments only; pooled
figures are over the real target models like `overall` (the offline reference bots are shown
per model only, unless they are all there is). Every figure is a `rates.rate()`.
"""

from __future__ import annotations

import numpy as np

from copal_tui.domain.report_rows import ReportReads
from copal_tui.metrics.arrays import ints, tally
from copal_tui.metrics.document_copal import (
    ClauseGroups,
    Controls,
    JudgeSetting,
    NonInteracting,
    Quartile,
    QuartileRate,
    QueryLength,
    Rate,
)
from copal_tui.metrics.frame import Frame
from copal_tui.metrics.provenance import real_targets
from copal_tui.metrics.rates import rate

CLAUSE_GROUPS = ("2", "3", "more")
QUARTILES = ("Q1", "Q2", "Q3", "Q4")
UNIT = "characters"


def quartile_of(items: np.ndarray,
                length: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int | None, int | None]]]:
    """Quartile index (0-3) of each of `items` (sorted item indices) by length, ties by id
    (the frame numbers items in id order), and (items, shortest, longest) per quartile."""
    m = len(items)
    order = np.lexsort((items, length[items]))
    q = np.zeros(m, dtype=np.int64)
    q[order] = np.arange(m) * 4 // max(m, 1)
    bounds = []
    for k in range(4):
        mine = length[items[q == k]]
        bounds.append((len(mine), int(mine.min()) if len(mine) else None,
                       int(mine.max()) if len(mine) else None))
    return q, bounds


def build(f: Frame, reads: ReportReads, primary: tuple[str, str] | None) -> Controls:
    # Per frame item: query length in characters and, for a control, the number of clauses its
    # contract names (read with the items, in their order).
    length, named = ints(reads.items.lengths), ints(reads.items.control_clauses)
    usable = f.usable(f.setting_index(primary))  # none without a primary judge (index -1)
    resp = f.j_resp[usable]
    err = (f.j_status[usable] != 0).astype(np.int64)
    item, model = f.resp_item[resp], f.resp_model[resp]
    controls = f.method_is("control") & f.top_items
    composed = f.composed_items[item]
    control_j = controls[item]
    present = sorted({f.models[m] for m in np.unique(model[composed | control_j]).tolist()})
    targets = real_targets(present)
    pooled = [f.models.index(t) for t in targets]
    none = "no primary judge (no usable judgments)" if primary is None else None

    def figures(mask: np.ndarray, empty: str) -> tuple[Rate, dict[str, Rate]]:
        """The pooled figure and each model's over the judged responses under `mask`. Counted
        once per mask: a mask per model and figure walked every response about fifty times."""
        n, errors = tally(model, len(f.models), mask), tally(model, len(f.models), mask, err)
        return (rate(int(errors[pooled].sum()), int(n[pooled].sum()), none or empty),
                {name: rate(int(errors[k]), int(n[k]), none or empty)
                 for k, name in enumerate(f.models) if name in present})

    # (a) by active clauses
    k_clauses = f.item_clauses[item]
    # 2 and 3 as themselves, 4 for "more", 0 for an item without a composition (unknown).
    bucket = np.where(k_clauses > 3, 4, np.where(k_clauses >= 2, k_clauses, 0))
    clauses_pooled: dict[str, Rate] = {}
    clauses_by_model: dict[str, dict[str, Rate]] = {name: {} for name in present}
    for g, code in zip(CLAUSE_GROUPS, (2, 3, 4), strict=True):
        word = "more than three" if g == "more" else g
        empty = f"no judged responses to selected composed items with {word} active clauses"
        clauses_pooled[g], per_model = figures(composed & (bucket == code), empty)
        for name, fig in per_model.items():
            clauses_by_model[name][g] = fig
    by_clauses = ClauseGroups(pooled=clauses_pooled, by_model=clauses_by_model,
                              unknown_active_clauses=int((composed & (bucket == 0)).sum()))

    # (b) by query-length quartile, over the selected composed items
    suite = np.flatnonzero(f.composed_items & (length >= 0))
    q_item, bounds = quartile_of(suite, length)
    quart = np.full(len(f.item_ids), -1, dtype=np.int64)
    quart[suite] = q_item
    rows: list[Quartile] = []
    by_model_q: dict[str, list[QuartileRate]] = {name: [] for name in present}
    for k, label in enumerate(QUARTILES):
        n_items, low, high = bounds[k]
        empty = ("no judged responses to the items of this quartile" if n_items else
                 "fewer than four selected composed items: this quartile is empty")
        fig, per_model = figures(composed & (quart[item] == k), empty)
        rows.append(Quartile(
            quartile=label, items=n_items, min_length=low, max_length=high,
            min_length_reason=None if n_items else empty,
            max_length_reason=None if n_items else empty, **dict(fig)))
        for name, one in per_model.items():
            by_model_q[name].append(QuartileRate(quartile=label, **dict(one)))
    by_length = QueryLength(unit=UNIT, items=int(len(suite)), quartiles=rows,
                            by_model=by_model_q)

    # (c) non-interacting controls
    n_controls = int(controls.sum())
    empty = ("no judged responses to the control items" if n_controls else
             "no non-interacting control items selected (generate and select build them)")
    counts = np.bincount(named[controls], minlength=4)
    control_pooled, control_by_model = figures(control_j, empty)
    non_interacting = NonInteracting(
        items=n_controls,
        items_by_active_clauses={"2": int(counts[2]), "3": int(counts[3]),
                                 "more": int(counts[4:].sum())},
        pooled=control_pooled, by_model=control_by_model,
        composed_pooled=figures(composed, "no judged composed responses")[0])
    return Controls(
        judge=None if primary is None else JudgeSetting(judge=primary[0], mode=primary[1]),
        pooled_models=targets, by_active_clauses=by_clauses, by_query_length=by_length,
        non_interacting=non_interacting, judge_reason=none)
