"""Labelling campaigns: a frozen sample of subjects of one suite that annotators label in full
(`copal label --campaign NAME`), drawn once by `copal campaign create`.

Drawing: every subject of the suite that can be annotated now and matches the filters, in the
suite's queue order (copal_tui.services.annotation.suites), the first `size` of them when a
size is given. `balanced` draws round robin over the suite's strata instead (COPAL: pattern x
model; COMPASS: query type x model; judge mistakes: judge x kind of mistake), so a 200-subject
audit like the paper's human audit of 200 pairs covers every stratum as evenly as the data
allows (COPAL's queue order is already balanced this way); a suite that samples at random
(traffic) draws a seeded random sample, `balanced` giving each source its share in proportion
to its pairs (the suite's `Rules.draw`). The sample is stored with its positions
and never changes: responses added later are in no campaign created before them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from copal_tui.services.annotation.queue import DEFAULT_PREFIX
from copal_tui.services.annotation.suites import Filters, rules
from store.annotation import campaigns
from store.annotation.campaigns import AnnotatorProgress, Campaign
from store.db import Database, StoreError, write


@dataclass(frozen=True)
class Report:
    """A campaign with what each annotator has done on it, and its strata."""

    campaign: Campaign
    annotators: list[AnnotatorProgress]
    strata: dict[str, int]


def create(db: Database, name: str, suite: str, filters: Filters, *, balanced: bool = False,
           size: int | None = None) -> Campaign:
    """Draw and freeze a campaign (one transaction); StoreError when the name is taken or
    nothing matches."""
    name = name.strip()
    if not name or name.startswith(DEFAULT_PREFIX):
        raise StoreError(f"a campaign name must be non-empty and not start with "
                         f"{DEFAULT_PREFIX!r} (the default queues' names)")
    chooser = rules(suite)  # StoreError for an unknown suite
    if size is not None and size < 1:
        raise StoreError("a campaign's size must be at least 1")
    with write(db):
        if campaigns.get(db, name) is not None:
            raise StoreError(f"a campaign named {name!r} exists already")
        if filters.seed and not chooser.seeded:
            raise StoreError(f"the {suite} queue has a fixed order: a seed applies to a suite "
                             "that samples at random (traffic)")
        found = chooser.candidates(db, filters)
        chosen = chooser.draw(found, balanced, size)
        if not chosen:
            raise StoreError("no subject matches: nothing to label")
        spec: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v
                                for k, v in asdict(filters).items() if v}
        spec.update(balanced=balanced, size=size, matched=len(found))
        campaigns.create(db, name, suite, campaigns.SAMPLE, spec)
        campaigns.add_subjects(db, name, ((c.subject, c.stratum) for c in chosen))
    made = campaigns.get(db, name)
    assert made is not None
    return made


def listed(db: Database) -> list[Campaign]:
    """The named campaigns, oldest first (the default queues are not campaigns one picks)."""
    return campaigns.all_campaigns(db, campaigns.SAMPLE)


def report(db: Database, name: str) -> Report:
    found = campaigns.get(db, name)
    if found is None:
        raise StoreError(f"no campaign named {name!r}")
    strata: dict[str, int] = {}
    for member in campaigns.members(db, name):
        strata[member.stratum] = strata.get(member.stratum, 0) + 1
    return Report(found, campaigns.progress(db, name, found.suite), dict(sorted(strata.items())))
