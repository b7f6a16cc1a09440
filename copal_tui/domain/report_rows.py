"""The typed rows of every read behind `copal report`, and `ReportReads`, the object that carries
them to the metrics: one attribute per read, of the read's own type, that waits for that read
only.

Pure types, in the domain so that the store, which fills them (`store.report.reads` and the
modules it runs, where the conventions of the packed columns are described: group_concat
strings, their separators, NULL_MARK), and the metrics, which compute from them, share them
while `copal_tui.metrics` imports nothing of the store (the import-linter contract "The metrics
are pure" checks it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Generic, NamedTuple, TypeVar, overload

from copal_tui.domain.run_manifest import RunManifest
from copal_tui.domain.taxonomy import Facet

# A NULL that keeps its place in a char(30)-separated group_concat column: char(31).
NULL_MARK = "\x1f"
# The method a projection the projection screening rejected reads as in the items' read.
REJECTED_PROJECTION = "projection_rejected"
# The observed facets a judgment read codes (1 + position); any other stored name reads as
# OTHER_FACET, without its text (`store.report.facets.other_facets` reads those names).
FACETS = tuple(f.value for f in Facet)
OTHER_FACET = len(FACETS) + 1
# A COMPASS misaligned verdict's failure mode, coded 1 + its position (see
# `store.report.compass.JUDGMENT_CODE`).
FAILURE_MODE_CODES = ("direct_violation", "refusal_answer_hybrid", "indirect_violation")


# ------------------------------------------------------------------ the COPAL suite


@dataclass(frozen=True)
class ItemColumns:
    """Every item as aligned group_concat columns, by id (`store.report.reads.items`): texts
    char(30)-separated with NULL_MARK for NULL, numbers comma-separated."""

    ids: str | None
    worlds: str | None
    patterns: str | None
    facets: str | None
    methods: str | None  # REJECTED_PROJECTION for a rejected projection
    selected: str | None  # 0/1
    parents: str | None
    clauses: str | None  # active clauses: the number of clauses of the item's composition
    lengths: str | None  # the query's length in characters
    # For a non-interacting control, the number of distinct clauses its contract names; 0 for
    # other items.
    control_clauses: str | None


@dataclass(frozen=True)
class ResponseColumns:
    """Every response as integers, grouped by item (the order of the (item_id, model, variant)
    index): which items have responses and how many, then each response's rowid and model.
    The frame repeats each item's position by its count, so no item id is read per response."""

    models: list[str]  # the distinct `responses.model` values, sorted: the codes' names
    items: str | None  # char(30)-separated ids of the items with responses, in id order
    counts: str | None  # their numbers of responses, in the same order
    rowids: str | None  # the responses' rowids, item by item in that order
    model_codes: str | None  # each response's model, its position in `models` (-1: unknown)
    # "rowid<char(31)>variant", char(30)-separated, of each response whose variant is not
    # 'base' (its target is then `model#variant`).
    variants: str | None


@dataclass(frozen=True)
class JudgmentCodes:
    """Every judgment packed into integers (`store.report.coded.judgment_codes`), with the
    judge settings the packing numbers, read in one snapshot."""

    settings: list[tuple[str, str]]  # (judge, mode), sorted
    codes: str | None  # (response rowid * S + setting) * 8 + status, comma-separated
    facets: str | None  # (response rowid * S + setting) * 16 + facet code, of errors with one


class LabelRow(NamedTuple):
    """A current COPAL label (or adjudication) by response rowid."""

    response: int
    annotator: str
    error: int


@dataclass(frozen=True)
class CorpusCounts:
    """Grouped counts of the small tables for the corpus profile, each sorted by its key."""

    worlds: list[tuple[str, int]]
    policies_by_kind: list[tuple[str, int]]
    clauses_by_effect: list[tuple[str, int]]
    compositions_by_pattern: list[tuple[str, int]]
    compositions_by_status: list[tuple[str, int]]

    def by_key(self) -> dict[str, list[tuple[str, int]]]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class Vote(NamedTuple):
    """A current label or decision on a response to a composed item, with its observed facet
    as stored and the item's target facet."""

    response: int  # rowid
    annotator: str
    error: int
    facet: str | None
    target: str | None


class HumanVotes(NamedTuple):
    labels: list[Vote]
    decisions: list[Vote]


class SuiteExtras(NamedTuple):
    """What one suite's rows in scope say of where they come from besides the runs that wrote
    them (its descriptor's `Report.provenance` read): the models they name in a role no run
    records, {role: models} (COMPASS responses' pre-filters), and the rows no run wrote
    (imported from files), {what: count}, in the order the provenance lists them."""

    models: dict[str, list[str]]
    imported: dict[str, int]


class ProvenanceExtras(NamedTuple):
    """Every suite's `SuiteExtras`: the models by suite and role ({suite: {role: models}}), and
    the rows no run wrote, {"<suite>:<what>": count}."""

    models: dict[str, dict[str, list[str]]]
    imported: dict[str, int]


# ------------------------------------------------------------------ COMPASS


class FailedJudgment(NamedTuple):
    """Judgments without a usable verdict on answered responses to kept queries; `reason` is
    the stored failure when it is one of COMPASS's, else ''."""

    judge: str
    model: str
    variant: str
    reason: str
    judgments: int


class CompassLabel(NamedTuple):
    """A current COMPASS label on an answered response to a kept query."""

    response: str
    query_type: str
    annotator: str
    refused: int | None
    compliant: int | None


class LabelledJudgment(NamedTuple):
    """A usable COMPASS judgment of a human-labelled response."""

    response: str
    judge: str
    refused: int | None
    compliant: int | None
    aligned: int | None


@dataclass(frozen=True)
class CompassRows:
    """The COMPASS reads of a report whose scope has a suite (`store.report.compass`)."""

    suite: list[str]  # the worlds in scope with a COMPASS suite
    # Every response (unscoped): ids, and class keys "model, variant, world, query type,
    # status" joined by char(31); both char(30)-separated.
    response_ids: str | None
    response_keys: str | None
    judges: list[str]  # every judge of a COMPASS judgment, by name
    # Every judgment: response ids (char(30)-separated) and `judge index * 32 + code`.
    judgment_responses: str | None
    judgment_codes: str | None
    failed: list[FailedJudgment]  # in the suite's worlds
    world_names: dict[str, str]  # the suite's worlds' names
    labels: list[CompassLabel]
    labelled_judgments: list[LabelledJudgment]


# ------------------------------------------------------------------ dialogue judging


@dataclass(frozen=True, slots=True)
class TruthTurn:
    """The per-turn truth of one turn, with its dialogue's domain and the turn's role (which
    turns are scored is the domain's `is_scored_turn`, not this read's)."""

    dialogue_id: str
    domain: str
    turn_index: int
    role: str
    category: int | None
    key: str | None
    phase: int | None
    violation: int


@dataclass(frozen=True, slots=True)
class AttemptRow:
    """One judge attempt: whether its verdicts were binary, its failure if it failed, whether
    its predictions come from the repair round (`repaired`) or none could be read
    (`unparsed`), and its first answer's text when CompliBench's parser reads that differently
    from the stored predictions (`first_answer`; None: the predictions are that reading)."""

    dialogue_id: str
    judge: str
    attempt: int
    binary_verdicts: int
    failure: str | None
    repaired: int = 0
    unparsed: int = 0
    first_answer: str | None = None


@dataclass(frozen=True, slots=True)
class PredictionRow:
    """One turn's prediction of one judge attempt."""

    dialogue_id: str
    judge: str
    attempt: int
    turn_index: int
    category: int | None
    key: str | None
    phase: int | None
    violation: int


@dataclass(frozen=True, slots=True)
class ErrorTypeCount:
    """Current reviews naming `error_type` on one judge's wrong predictions in one domain (or
    all domains; `store.annotation.dialogue_reviews.error_type_rows`)."""

    judge: str
    domain: str
    error_type: str
    count: int


@dataclass(frozen=True)
class DialogueRows:
    """Every stored dialogue's truth and every judge attempt with its predictions, and the
    reviewers' error-type counts (empty without any attempt)."""

    truth: list[TruthTurn]
    attempts: list[AttemptRow]
    predictions: list[PredictionRow]
    error_types: list[ErrorTypeCount]


# ------------------------------------------------------------------ the reads of a report

T = TypeVar("T")


class Read(Generic[T]):
    """One read of `ReportReads`: on an instance, the read's value (waiting for it when the
    reads are still running, raising its error when it failed)."""

    name: str

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> Read[T]: ...

    @overload
    def __get__(self, obj: ReportReads, owner: type) -> T: ...

    def __get__(self, obj: ReportReads | None, owner: type) -> Read[T] | T:
        if obj is None:
            return self
        value: T = obj.value(self.name)
        return value


class ReportReads:
    """Every read a report computes from. Built complete from values, or by the store's
    threaded reader (`store.report.reads.BulkReads`), whose attributes wait for their own read
    only, so the metrics work on the first results while the judgments are still read."""

    judgments = Read[JudgmentCodes]()  # the longest read: the metrics take it last
    items = Read[ItemColumns]()
    responses = Read[ResponseColumns]()
    labels = Read[list[LabelRow]]()
    adjudications = Read[list[LabelRow]]()
    # Rowids of responses without an answer (the call failed or gave no text), comma-separated.
    failed_responses = Read[str | None]()
    corpus = Read[CorpusCounts]()
    human_facets = Read[HumanVotes]()
    # Every run behind a row in scope, its manifest typed (`store.report.provenance`).
    provenance_runs = Read[list[RunManifest]]()
    provenance_extras = Read[ProvenanceExtras]()

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def value(self, name: str) -> Any:
        """The value of read `name` (what its attribute returns)."""
        return self._values[name]

    def suite(self, name: str) -> Any:
        """The rows of suite `name`'s own read (its descriptor's `Report.read`: COMPASS's
        `CompassRows`, None when no world in scope has a suite; the dialogues' `DialogueRows`;
        ...)."""
        return self.value(suite_read(name))


def suite_read(name: str) -> str:
    """The name under which suite `name`'s own read is kept among the report's reads."""
    return f"suite:{name}"
