"""The names the store holds that a command may be asked to narrow by: the relation patterns and
facets of items, the target models of COPAL and COMPASS responses, the dialogues' domains.

`any_row` says whether a table has a row at all (what a command says the store still lacks).
Each distinct-value read walks an index (`idx_items_pattern_facet`, `idx_items_facet`, `idx_responses_model`,
`idx_compass_responses_model`, `idx_dialogues_domain`) one distinct value at a time, a seek per
name, never the table's rows: checking a command's filter costs as many seeks as there are
names, whatever the size of the store. Worlds, judge settings, dialogue ids, dialogue judges
and campaigns have their reads where their tables are read anyway.
"""

from __future__ import annotations

from store.db import Database
from store.report.coded import distinct

# (table, column) pairs whose column leads an index: the only ones `_distinct` walks.
_INDEXED = {("items", "pattern"), ("items", "facet"), ("responses", "model"),
            ("compass_responses", "model"), ("dialogues", "domain")}


def _distinct(db: Database, table: str, column: str) -> list[str]:
    """Every non-NULL value of an indexed column, sorted: the report's skip scan."""
    assert (table, column) in _INDEXED, "only an indexed column is read this way"
    return distinct(db, column, table)


def item_patterns(db: Database) -> list[str]:
    """The relation patterns items have (an item without one has none: not listed)."""
    return _distinct(db, "items", "pattern")


def item_facets(db: Database) -> list[str]:
    """The target facets items have."""
    return _distinct(db, "items", "facet")


def response_models(db: Database) -> list[str]:
    """Target models with a COPAL response, by name (their variants not told apart)."""
    return _distinct(db, "responses", "model")


def response_variants(db: Database, model: str) -> list[str]:
    """The variants `model` answered COPAL items as ('base' and any imported ones), sorted.
    Walks that model's entries of `idx_responses_model` (one model's responses)."""
    return [r[0] for r in db.execute(
        "SELECT DISTINCT variant FROM responses WHERE model = ? ORDER BY variant", (model,))]


def compass_models(db: Database) -> list[str]:
    """Target models with a COMPASS response."""
    return _distinct(db, "compass_responses", "model")


def dialogue_domains(db: Database) -> list[str]:
    """The domains of the stored dialogues."""
    return _distinct(db, "dialogues", "domain")


# The tables whose first row `any_row` looks for (a command saying what the store still lacks).
_ANY = ("worlds", "items", "responses", "judgments", "dialogues")


def any_row(db: Database, table: str) -> bool:
    """Whether `table` (one of `_ANY`) has a row: one seek."""
    assert table in _ANY, "only these tables are asked"
    return db.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0] == 1
