"""The typed rows of the real-traffic audit's report read (`store.report.traffic.report_rows`),
shared by the store, which fills them, and the metrics, which compute Table 11, the automatic
labeller's agreement and corrected estimates, and Table 12 from them (the metrics never read
the store). Pure types.

At a million pairs the read stays small: the human votes and the labeller's predictions on the
voted pairs are read row by row (a sample of thousands), the labeller's predictions over the
whole log as counts grouped by source, category and verdict.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Vote:
    """One current human label (`decision` False) or adjudication (True) on a pair in scope.
    `category` and `erroneous` are None on a pair flagged `sensitive` without them."""

    pair: str
    source: str
    annotator: str
    category: str | None
    erroneous: bool | None
    sensitive: bool
    decision: bool


@dataclass(frozen=True, slots=True)
class Prediction:
    """The automatic labeller `judge`'s usable prediction on a pair that has a human vote."""

    judge: str
    pair: str
    source: str
    category: str
    erroneous: bool


@dataclass(frozen=True, slots=True)
class PredictedCount:
    """How many pairs of `source` (purged ones left out) `judge` put in `category` with
    verdict `erroneous`."""

    judge: str
    source: str
    category: str
    erroneous: bool
    count: int


@dataclass(frozen=True)
class TrafficRows:
    """Everything the traffic report computes from, over the pairs in scope (those whose log
    is linked to a world in scope, or every pair when the report names no world).

    `pairs` counts the stored pairs by source, `purged` those whose text was removed for good
    and `flagged` those flagged as still holding sensitive content (both left out of every
    figure, the labeller's predictions on them too); `failed` counts the labeller's failed calls by judge;
    `redactions` is what de-identification removed, by source and type; `deployments` are
    the targets answered over HTTP (their responses carry what de-identification changed in
    the probe) and `world_sizes` each world's clauses and confirmed compositions (Table 12)."""

    pairs: dict[str, int]
    purged: int
    flagged: int  # pairs a current label or decision flags as sensitive (left out)
    votes: list[Vote]
    predictions: list[Prediction]
    predicted: list[PredictedCount]
    failed: dict[str, int]
    redactions: dict[str, dict[str, int]]
    deployments: list[str]
    world_sizes: dict[str, tuple[int, int]]
