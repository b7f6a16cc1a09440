"""Paired contrast: single-policy (projection) error vs composed error, per target model.

Only composed items whose whole projection set passed the projection screening and whose own
response and every projection's response were answered and judged count (by definition, a
composition-induced failure is a composed item that fails while all of its projections pass; the
method's paired contrast uses only composed items whose projections all pass the check). Every
other composed item the model was asked is dropped and counted under the first reason that
applies, so `n` plus the `excluded_*` counts is `composed_items`:

1. `excluded_rejected_projections`: some projection was rejected by the projection screening;
2. `excluded_no_projections`: the item has no projections;
3. `excluded_unanswered`: the composed item or some projection got no answer from the model;
4. `excluded_unjudged`: some of those answers has no usable judgment of the primary judge.

`excluded_incomplete_projections` is the sum of 1, 3 and 4 (the projection set is incomplete).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from copal_tui.metrics.classify import put, ratio
from copal_tui.metrics.intervals import wilson

# The method a rejected projection reads as in the report's bulk item read
# (store.report.metrics_sql.REJECTED_PROJECTION: the store layer does not import this package).
REJECTED_PROJECTION = "projection_rejected"

# Exclusion keys of a row and the reason the report's exclusions give for each.
EXCLUSION_REASONS: dict[str, str] = {
    "excluded_rejected_projections": "a single-policy projection was rejected by the "
                                     "projection screening",
    "excluded_no_projections": "the item has no single-policy projections",
    "excluded_unanswered": "the composed item or one of its projections was not answered by "
                           "the model",
    "excluded_unjudged": "the composed item or one of its projections was answered but not "
                         "judged (skipped or failed) by the primary judge",
}


def paired_contrast(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """`rows` are `copal_tui.metrics.frame.paired_contrast` tuples, one per model."""
    out = []
    for (model, asked, rejected, no_proj, unanswered, unjudged, n, comp_err, n_proj, proj_err,
         induced, any_proj) in rows:
        n, comp_err, n_proj, proj_err = int(n or 0), int(comp_err or 0), int(n_proj or 0), \
            int(proj_err or 0)
        induced, any_proj = int(induced or 0), int(any_proj or 0)
        entry: dict[str, Any] = {"model": model, "n": n, "n_projections": n_proj,
                                 "composed_errors": comp_err, "projection_errors": proj_err,
                                 "composition_induced": induced}
        reason = "no composed item with all of its projections accepted, answered and judged"
        put(entry, "single_error_rate",
            ratio(proj_err, n_proj, "no judged projections on paired items"))
        put(entry, "composed_error_rate", ratio(comp_err, n, reason))
        put(entry, "composition_induced_rate", ratio(induced, n, reason))
        # The item-level view: the share of paired items where some projection fails.
        put(entry, "any_projection_error_rate", ratio(any_proj, n, reason))
        low, high = wilson(induced, n)
        entry["composition_induced_ci_low"], entry["composition_induced_ci_high"] = low, high
        if n == 0:
            entry["composition_induced_ci_low_reason"] = reason
            entry["composition_induced_ci_high_reason"] = reason
        entry["composed_items"] = int(asked or 0)
        entry["excluded_rejected_projections"] = int(rejected or 0)
        entry["excluded_no_projections"] = int(no_proj or 0)
        entry["excluded_unanswered"] = int(unanswered or 0)
        entry["excluded_unjudged"] = int(unjudged or 0)
        entry["excluded_incomplete_projections"] = (entry["excluded_rejected_projections"]
                                                    + entry["excluded_unanswered"]
                                                    + entry["excluded_unjudged"])
        out.append(entry)
    return out
