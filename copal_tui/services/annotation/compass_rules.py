"""The COMPASS suite's part of the one annotation queue: a subject is a target's response to a
COMPASS query (`compass_responses.id`), a label a `CompassLabel`, what the annotator was shown
the query, the intended policy, the world's policies and the response (their hash makes a label
stale when any of them is edited).

Order: by response id. Campaigns draw by world, target model and query type (`--pattern`, a
query type spelled as stored: `allowed-edge` is `allowed_edge`); balanced, round robin over
query type x model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from copal_tui.domain.compass import QUERY_TYPES
from copal_tui.domain.contract import content_sha256
from copal_tui.services import launch
from copal_tui.services.annotation.suites import WORLD, Draw, Filters, Rules
from store.annotation import compass_labels
from store.annotation.campaigns import Candidate
from store.annotation.compass_labels import CompassContext
from store.db import Database, StoreError

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import CompassLabel


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
    draws_by: ClassVar[Mapping[str, Draw]] = {
        "worlds": WORLD,
        "models": Draw("a target model with a COMPASS response", launch.compass_models),
        "patterns": Draw("a COMPASS query type", spellings=QUERY_TYPES, means="the query type"),
    }

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
