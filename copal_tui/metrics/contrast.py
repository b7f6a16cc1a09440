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

from copal_tui.metrics.classify import ratio
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_copal import PairedContrastRow
from copal_tui.metrics.rates import rate

# Exclusion fields of a row and the reason the report's exclusions give for each.
EXCLUSION_REASONS: dict[str, str] = {
    "excluded_rejected_projections": "a single-policy projection was rejected by the "
                                     "projection screening",
    "excluded_no_projections": "the item has no single-policy projections",
    "excluded_unanswered": "the composed item or one of its projections was not answered by "
                           "the model",
    "excluded_unjudged": "the composed item or one of its projections was answered but not "
                         "judged (skipped or failed) by the primary judge",
}


def paired_contrast(rows: Sequence[Sequence[Any]]) -> list[PairedContrastRow]:
    """`rows` are `copal_tui.metrics.frame.paired_contrast` tuples, one per model."""
    out = []
    reason = "no composed item with all of its projections accepted, answered and judged"
    for (model, asked, rejected, no_proj, unanswered, unjudged, n, comp_err, n_proj, proj_err,
         induced, any_proj) in rows:
        out.append(PairedContrastRow(
            model=model, n=n, n_projections=n_proj, composed_errors=comp_err,
            projection_errors=proj_err, composition_induced=induced,
            single_error_rate=Metric.of(*ratio(proj_err, n_proj,
                                               "no judged projections on paired items")),
            composed_error_rate=Metric.of(*ratio(comp_err, n, reason)),
            composition_induced_rate=rate(induced, n, reason).error_rate,
            # The item-level view: the share of paired items where some projection fails.
            any_projection_error_rate=Metric.of(*ratio(any_proj, n, reason)),
            composed_items=asked, excluded_rejected_projections=rejected,
            excluded_no_projections=no_proj, excluded_unanswered=unanswered,
            excluded_unjudged=unjudged,
            excluded_incomplete_projections=rejected + unanswered + unjudged))
    return out
