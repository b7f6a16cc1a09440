"""Schema as append-only migrations, each step a function in a module grouped by what it
creates, registered in order by `@migration` (`store.migrations.registry.STEPS`).

Never edit a migration once it has landed on main: add a new `mNNN_...` function with
`@migration` and the next number, in the module of what it creates (a new module is imported
below). `NAMES` is read
from the functions; applying them (sqlite-utils `Migrations`) is `store.migrations.apply`'s,
which interactive commands never load: the TUI and the other interactive commands refuse a
database with pending migrations (`store.schema_state.require_current`) rather than migrating
under several annotators at once, and `copal migrate` applies them.
"""

from __future__ import annotations

# Imported for their `@migration` registrations (a step's number gives its place).
from store.migrations import (  # noqa: F401
    steps_annotations,
    steps_batch,
    steps_compass,
    steps_core,
    steps_dialogue,
    steps_report,
    steps_suite_names,
    steps_suites,
    steps_traffic,
)
from store.migrations.registry import STEPS

NAMES: tuple[str, ...] = tuple(step.__name__ for step in STEPS)

__all__ = ["NAMES", "STEPS"]
