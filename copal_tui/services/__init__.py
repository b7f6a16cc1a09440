"""The services: between the interfaces and `store/`, the only code the screens and commands
reach the store's SQL modules through, and the one layer that opens transactions for them
(reads through `reading`, writes through `store.db.write`).

Screens (`copal_tui/tui/`), commands (`copal_tui/commands/`) and the browser server
(`copal_tui/serve/`) call a service with an open `store.db.Database` and get typed data back;
they open the database (`store.db.connect`) but never import a SQL module or begin a
transaction themselves (`lint-imports` checks the imports). The browse and jobs SQL modules
never begin one either, so a service can put several of their reads in one snapshot.

`browse` serves the browse screens (worlds, a world's lists and records, an item, a COMPASS
query), `jobs` the jobs screen (runs, a run's manifest, the choices of a new job), `runs` the
`copal runs` listing, `store_admin` the store commands (stats, migrations, backup, dialogue
imports, the demo's summary) and `launch` the checks the interactive commands make before
taking over the terminal, `cases` the responses behind a report figure (the export's validity
file uses it too), `report` the report (it reads everything a report needs; metrics compute
from those reads), `export` an export folder (the report's files, the validity cases, the
manifest and the store as JSONL), and the package `annotation` the labelling workflow (the one annotation
queue of every suite, what differs between suites, campaigns, adjudication, and what the label
screens read).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from store.db import Database


@contextmanager
def reading(db: Database) -> Iterator[Database]:
    """A read transaction: the statements inside see one snapshot of the database (a page and
    its total count agree even while a pipeline run commits). Inside another transaction it is
    a savepoint of that one. Never takes the write lock."""
    with db.atomic():
        yield db
