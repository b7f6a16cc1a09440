"""The one ordered list of schema migrations: each step is a function named `mNNN_what_it_does`,
registered by the `@migration` decorator where it is defined (as simonw/llm's migrations are),
so its name is the function's name, its number its place, and nothing else lists it.

This module imports no sqlite-utils: `store.schema_state`, on every command's start-up path,
reads the names from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

Step = Callable[["Database"], None]

STEPS: list[Step] = []
_NAME = re.compile(r"^m(\d{3})_[a-z0-9_]+$")


def migration(step: Step) -> Step:
    """Add `step` to STEPS, in the order of its number (the modules that define steps may be
    imported in any order); a name that is not `mNNN_...` or a number already taken fails at
    import."""
    found = _NAME.match(step.__name__)
    if not found:
        raise ValueError(f"migration {step.__name__!r} is not named mNNN_what_it_does")
    number = int(found.group(1))
    taken = [s.__name__ for s in STEPS if int(s.__name__[1:4]) == number]
    if taken:
        raise ValueError(f"migration {step.__name__} has the number of {taken[0]}")
    STEPS.append(step)
    STEPS.sort(key=lambda s: int(s.__name__[1:4]))
    return step
