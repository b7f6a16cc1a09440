"""Schema as append-only migrations, each step a function in a module grouped by what it
creates, registered in order by `@migration` (`store.migrations.registry.STEPS`).

Never edit a migration once it has landed on main: add a new `mNNN_...` function with
`@migration` and the next number, in the module of what it creates (a new `steps_*` module is
found by its name). `NAMES` is read from the functions; applying them (sqlite-utils
`Migrations`) is `store.migrations.apply`'s, which interactive commands never load: the TUI and the other interactive commands refuse a
database with pending migrations (`store.schema_state.require_current`) rather than migrating
under several annotators at once, and `copal migrate` applies them.
"""

from __future__ import annotations

import importlib
import pkgutil

from store.migrations.registry import STEPS

# Every `steps_*` module of this package is imported for its `@migration` registrations (a
# step's number gives its place): a suite's tables come with its own steps module, and no list
# here names it.
for _found in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _found.startswith("steps_"):
        importlib.import_module(f"{__name__}.{_found}")

NAMES: tuple[str, ...] = tuple(step.__name__ for step in STEPS)

__all__ = ["NAMES", "STEPS"]
