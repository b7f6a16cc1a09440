"""What the interactive commands (`copal label`, `copal serve`) check before the terminal is
taken over: a dialogue judge to review, a campaign to label. A wrong name is then one line on
stderr rather than a broken screen."""

from __future__ import annotations

from copal_tui.services import reading
from store.db import Database


def dialogue_judges(db: Database) -> list[str]:
    """Judges with at least one scored (not failed) dialogue attempt, by name."""
    from store.annotation.dialogue_reviews import judges

    with reading(db):
        return judges(db)


def campaign_suite(db: Database, name: str) -> str | None:
    """The suite of the sampled campaign `name` (what `copal campaign create` made), or None
    when there is no such campaign (a suite's default queue is not a campaign one names)."""
    from store.annotation import campaigns

    with reading(db):
        found = campaigns.get(db, name)
    if found is None or found.kind != campaigns.SAMPLE:
        return None
    return found.suite
