"""What differs between the suites for the one queue: which subjects can be annotated and in
what order, which payload model a label is (copal_tui.domain.annotation.payloads), what is
derived from it at write time, and the hash of what the annotator was shown; and for the
commands, which filters a campaign of the suite draws by (`Rules.draws_by`: what each value
is and the names it may take) and the annotators' agreement on a campaign where the suite
measures it (`Rules.agreement`). Everything else (leases, overlap, done, undo, progress,
campaigns) is the same code for every suite (copal_tui.services.annotation.queue).

Each suite's descriptor (`copal_tui.domain.suites.Suite.annotation`) names its `Rules`
subclass: COPAL's is here (the base suite), the others' in their own modules.

Orders: COPAL responses are stratified by (pattern, model): the k-th response of every stratum
comes before the (k+1)-th of any, so the first few dozen labels already cover every pattern
and model; within and between strata the order follows sha256 of the ids, so it is stable
across runs and machines. A balanced campaign stratifies any suite the COPAL way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from copal_tui.domain.contract import content_sha256
from copal_tui.domain.suites import SUITES, load
from copal_tui.domain.suites import suite as suite_named
from copal_tui.services import launch
from store.annotation import campaigns
from store.annotation import labels as copal_labels
from store.annotation.campaigns import Candidate
from store.artifacts import reads
from store.artifacts.records import ResponseContent
from store.db import Database, StoreError

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import CopalLabel, LabelPayload
    from copal_tui.metrics.document_base import FlatModel, Metric

# The payload model of one suite's labels (the payload models load with the first write).
P = TypeVar("P", bound="LabelPayload")


@dataclass(frozen=True)
class Filters:
    """Which subjects a campaign draws from: the values of the filters the suite draws by
    (`Rules.draws_by` says which and what each means for its subjects: a COPAL pattern is a
    relation pattern, a COMPASS one a query type) and, for a suite that samples at random
    (`Rules.seeded`), the seed of its order."""

    worlds: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    seed: int = 0


@dataclass(frozen=True)
class Draw:
    """One filter a suite's campaigns draw by (a field of `Filters`): `what` a value is, in
    words ("a stored world": a value that names nothing is "not a stored world"); `means`,
    what it chooses among the suite's subjects, where that says more than `what` ("the
    source"); `known`, the names a value may take, read from the store only when a value is
    given; `spellings`, for a fixed set of names, the names as stored (a value is read as the
    one it spells, `allowed-edge` as `allowed_edge`; they are the known names when `known` is
    None); `none_yet`, the command that stores some when there are none."""

    what: str
    known: Callable[[Database], Collection[str]] | None = None
    spellings: tuple[str, ...] = ()
    means: str = ""
    none_yet: str = ""

    def names(self, db: Database) -> Collection[str]:
        return self.spellings if self.known is None else self.known(db)

    @property
    def meaning(self) -> str:
        return self.means or self.what


WORLD = Draw("a stored world", launch.worlds)


@dataclass(frozen=True)
class AgreementRow:
    """The annotators' agreement on one field of the label, over the subjects with two labels
    or more: Cohen's kappa (the mean of the pairwise kappas with more than two annotators) and
    Krippendorff's alpha."""

    field: str
    subjects: int
    annotators: int
    kappa: Metric
    alpha: Metric


@dataclass(frozen=True)
class Agreement:
    """How well a campaign's annotators agree: one row per field, what a subject is called in
    the table (`unit`, plural), a note under it, and the figures as the suite computes them
    (`figures`, what `copal campaign show --json` writes as "agreement")."""

    unit: str
    rows: tuple[AgreementRow, ...]
    note: str
    figures: FlatModel


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stratified(rows: Iterable[Candidate], sizes: Mapping[str, int] | None = None
               ) -> list[Candidate]:
    """Round robin over strata (continuing after `sizes` already placed per stratum), sha256
    order within and between strata."""
    sizes = sizes or {}
    seen: dict[str, int] = {}
    keyed = []
    for row in sorted(rows, key=lambda r: sha256_of(r.subject)):
        rank = sizes.get(row.stratum, 0) + seen.get(row.stratum, 0)
        seen[row.stratum] = seen.get(row.stratum, 0) + 1
        keyed.append(((rank, sha256_of(row.stratum)), row))
    keyed.sort(key=lambda k: k[0])
    return [row for _, row in keyed]


class Rules(Generic[P]):
    """The per-suite part of the queue (one instance per suite, see `rules`); the suite's
    descriptor (`copal_tui.domain.suites.Suite`) names its subclass."""

    name = ""
    stratified = False  # whether the default queue is stratified (else the natural order)
    seeded = False  # whether its order is a seeded random draw (`Filters.seed`)
    # The `Filters` fields its campaigns draw by (`candidates` reads them), each with what its
    # values are; a field not named here is refused. Most suites' subjects belong to a world.
    draws_by: ClassVar[Mapping[str, Draw]] = {"worlds": WORLD}

    def agreement(self, db: Database, campaign: str) -> Agreement | None:
        """The annotators' agreement on the campaign's subjects (None: the suite measures
        none)."""
        return None

    def draw(self, found: list[Candidate], balanced: bool, size: int | None) -> list[Candidate]:
        """A campaign's sample from the candidates in queue order: the first `size`, or with
        `balanced` round robin over the strata."""
        chosen = stratified(found) if balanced else found
        return chosen if size is None else chosen[:size]

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        """Every subject that may be annotated now, in the suite's natural order."""
        raise NotImplementedError

    def unplaced(self, db: Database, campaign: str, judge: str | None) -> list[Candidate]:
        """Annotatable subjects not in the campaign yet, in the order to append them."""
        placed = set(campaigns.placed(db, campaign))
        new = [c for c in self.candidates(db, Filters(judges=(judge,) if judge else ()))
               if c.subject not in placed]
        return stratified(new, campaigns.stratum_sizes(db, campaign)) if self.stratified \
            else new

    def require(self, db: Database, subject: str) -> None:
        """StoreError unless the subject exists (and may be annotated)."""
        raise NotImplementedError

    def label(self, db: Database, subject: str, label: P) -> tuple[P, str | None]:
        """The label (or decision) as stored on the subject, its derived fields computed from
        what the store holds now, and the hash of what was shown; StoreError when it does not
        fit the subject. The caller has checked that it is this suite's model
        (copal_tui.domain.annotation.subjects.check)."""
        raise NotImplementedError


class Copal(Rules["CopalLabel"]):
    name = "copal"
    stratified = True
    draws_by: ClassVar[Mapping[str, Draw]] = {
        "worlds": WORLD,
        "models": Draw("a target model with a response", launch.response_models),
        "patterns": Draw("the relation pattern of an item",
                         lambda db: launch.patterns(db, unmapped=False)),
    }

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        return stratified(copal_labels.candidates(db, None, worlds=filters.worlds,
                                               models=filters.models, patterns=filters.patterns))

    def unplaced(self, db: Database, campaign: str, judge: str | None) -> list[Candidate]:
        # The common case (nothing new) is two index scans; only new ids are read in full.
        ids = copal_labels.unplaced(db, campaign)
        if not ids:
            return []
        return stratified(copal_labels.candidates(db, ids), campaigns.stratum_sizes(db, campaign))

    def require(self, db: Database, subject: str) -> None:
        if reads.response(db, subject) is None:
            raise StoreError(f"unknown response {subject!r}")

    def label(self, db: Database, subject: str,
              label: CopalLabel) -> tuple[CopalLabel, str | None]:
        # The error, direction and kept facet follow from the marks on the contract as stored
        # now (what the content hash covers), whatever the screen derived when it drew them.
        content = _content(db, subject)
        stored = _from_marks(content, label.observed or [], label.facet, label.note)
        return stored, content_sha256(content.query, content.required, content.forbidden,
                                      content.response or "")


def copal_label(db: Database, response_id: str, observed: Iterable[str], *,
                facet: str | None = None, note: str | None = None) -> CopalLabel:
    """The label marks `observed` give on the response's contract as stored, for writers that
    have not read the contract themselves (the CLI, scripts); StoreError when they do not fit."""
    return _from_marks(_content(db, response_id), observed, facet, note)


def _content(db: Database, response_id: str) -> ResponseContent:
    content = reads.response_content(db, response_id)
    if content is None:
        raise StoreError(f"unknown response {response_id!r}")
    return content


def _from_marks(content: ResponseContent, observed: Iterable[str], facet: str | None,
                note: str | None) -> CopalLabel:
    from copal_tui.domain.annotation.payloads import CopalLabel

    try:
        return CopalLabel.from_marks(content.required, content.forbidden, observed,
                                     facet=facet, note=note)
    except ValueError as exc:
        raise StoreError(str(exc)) from None


_RULES: dict[str, Rules[Any]] = {}
# The fields of `Filters` a suite may draw by.
FILTERS = tuple(f.name for f in fields(Filters) if f.name != "seed")


def rules(name: str) -> Rules[Any]:
    """The annotation rules of the suite called `name`, as its descriptor names them
    (`copal_tui.domain.suites`); StoreError for an unknown suite."""
    try:
        spec = suite_named(name)
    except ValueError as exc:
        raise StoreError(str(exc)) from None
    if name not in _RULES:
        found: Rules[Any] = load(spec.annotation)()
        if found.name != name:
            raise StoreError(f"suite {name!r} names rules for {found.name!r}")
        stray = sorted(set(found.draws_by) - set(FILTERS))
        if stray:
            raise StoreError(f"suite {name!r} draws by {', '.join(stray)}, which are not "
                             f"filters (one of {', '.join(FILTERS)})")
        _RULES[name] = found
    return _RULES[name]


def drawn_by(field: str) -> list[str]:
    """The registered suites whose campaigns draw by `field` (a field of `Filters`)."""
    return [name for name in SUITES if field in rules(name).draws_by]
