"""What differs between the suites for the one queue: which subjects can be annotated and in
what order, which payload model a label is (copal_tui.domain.annotation.payloads), what is
derived from it at write time, and the hash of what the annotator was shown. Everything else
(leases, overlap, done, undo, progress, campaigns) is the same code for every suite
(copal_tui.services.annotation.queue).

Orders: COPAL responses are stratified by (pattern, model): the k-th response of every stratum
comes before the (k+1)-th of any, so the first few dozen labels already cover every pattern
and model; within and between strata the order follows sha256 of the ids, so it is stable
across runs and machines. COMPASS responses go by response id, judge mistakes by dialogue,
judge, attempt and turn (a reviewer reads a conversation forwards). A balanced campaign
stratifies any suite the COPAL way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from copal_tui.domain.annotation.subjects import dialogue_parts
from copal_tui.domain.contract import content_sha256
from copal_tui.domain.suites import load
from copal_tui.domain.suites import suite as suite_named
from store.annotation import campaigns, compass_labels, dialogue_reviews
from store.annotation import labels as copal_labels
from store.annotation.campaigns import Candidate
from store.annotation.compass_labels import CompassContext
from store.artifacts import dialogue, reads
from store.artifacts.records import ResponseContent
from store.db import Database, StoreError

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import (
        CompassLabel,
        CopalLabel,
        DialogueReview,
        LabelPayload,
    )

# The payload model of one suite's labels (the payload models load with the first write).
P = TypeVar("P", bound="LabelPayload")


@dataclass(frozen=True)
class Filters:
    """Which subjects a campaign draws from: worlds, models and patterns (COMPASS: query
    types) for COPAL and COMPASS; judges for judge mistakes; for a suite that samples at
    random (traffic), the seed of its order."""

    worlds: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    seed: int = 0


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stratified(rows: Iterable[Candidate], sizes: Mapping[str, int] | None = None
               ) -> list[Candidate]:
    """Round robin over strata (continuing after `sizes` already placed per stratum), sha256
    order within and between strata."""
    sizes = sizes or {}
    seen: dict[str, int] = {}
    keyed = []
    for row in sorted(rows, key=lambda r: _sha(r.subject)):
        rank = sizes.get(row.stratum, 0) + seen.get(row.stratum, 0)
        seen[row.stratum] = seen.get(row.stratum, 0) + 1
        keyed.append(((rank, _sha(row.stratum)), row))
    keyed.sort(key=lambda k: k[0])
    return [row for _, row in keyed]


class Rules(Generic[P]):
    """The per-suite part of the queue (one instance per suite, see `rules`); the suite's
    descriptor (`copal_tui.domain.suites.Suite`) names its subclass."""

    name = ""
    stratified = False  # whether the default queue is stratified (else the natural order)
    seeded = False  # whether its order is a seeded random draw (`Filters.seed`)

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


def compass_shown_sha256(ctx: CompassContext) -> str:
    """The hash of what a COMPASS annotator is shown (the query, the intended policy, the
    world's policies and the response): a later edit of any part makes the label stale."""
    response = ctx.response
    if response is not None and not response.whole:
        raise ValueError("the hash covers the whole response: read the context whole")
    intended = {"id": ctx.policy_id, "kind": ctx.policy_kind, "text": ctx.policy_text}
    return content_sha256(ctx.query, intended, ctx.policies,
                          "" if response is None else response.text)


class Compass(Rules["CompassLabel"]):
    name = "compass"

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        return compass_labels.candidates(db, worlds=filters.worlds, models=filters.models,
                                         query_types=filters.patterns)

    def require(self, db: Database, subject: str) -> None:
        if not compass_labels.exists(db, subject):
            raise StoreError(f"unknown COMPASS response {subject!r}")

    def label(self, db: Database, subject: str,
              label: CompassLabel) -> tuple[CompassLabel, str | None]:
        ctx = compass_labels.label_context(db, subject)
        if ctx is None:
            raise StoreError(f"unknown COMPASS response {subject!r}")
        return label, compass_shown_sha256(ctx)


class Dialogue(Rules["DialogueReview"]):
    name = "dialogue"

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        judges = filters.judges or (None,)
        return [c for judge in judges for c in dialogue_reviews.candidates(db, judge)]

    def require(self, db: Database, subject: str) -> None:
        key = dialogue_reviews.ReviewKey(*dialogue_parts(subject))
        if not dialogue_reviews.is_mistake(db, key):
            raise StoreError(f"not a wrong prediction: {key.judge} attempt {key.attempt} on "
                             f"{key.dialogue_id} turn {key.turn_index}")

    def label(self, db: Database, subject: str,
              label: DialogueReview) -> tuple[DialogueReview, str | None]:
        self.require(db, subject)
        key = dialogue_reviews.ReviewKey(*dialogue_parts(subject))
        row = dialogue_reviews.mistake(db, key)
        d = dialogue.stored_dialogue(db, key.dialogue_id)
        # What the reviewer is shown: the conversation up to the turn, the turn's truth and the
        # judge's prediction (the mistake's row holds both), as the columns they were read from
        # (so the hash is the one earlier reviews were given).
        shown = {"turns": [(t.role, t.content) for t in (d.turns if d else ())
                           if t.turn_index <= key.turn_index],
                 "mistake": {} if row is None else asdict(row)}
        sha = _sha(json.dumps(shown, sort_keys=True, ensure_ascii=False, default=str))
        # An empty note is no note.
        stored = label if label.note or label.note is None else \
            type(label)(error_type=label.error_type, note=None)
        return stored, sha


_RULES: dict[str, Rules[Any]] = {}


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
        _RULES[name] = found
    return _RULES[name]
