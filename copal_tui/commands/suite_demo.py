"""A suite's part of `copal demo`: the sample data it imports, the stage runs it makes with the
offline engine, and the table it adds to the summary `copal demo --no-tui` prints. The suite's
descriptor names it (`Suite.demo`, "module:attribute"); the demo takes every registered suite's
part in registration order, so the command names no suite and a suite's samples stay in its
own module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copal_tui.domain.suites import SUITES, load

if TYPE_CHECKING:
    from rich.console import Console

    from copal_tui.pipeline.base import Options
    from store.db import Database


@dataclass(frozen=True)
class DemoSettings:
    """What every suite's part shares: the reference bots that are the targets, the offline
    judge and generator, and the demo's --budget (COPAL's selected items per world)."""

    models: tuple[str, ...]
    judge: str
    generator: str
    budget: int


# One run of the demo: the stages, in order, and the options they run with.
DemoRun = tuple[list[str], "Options"]


@dataclass(frozen=True)
class SuiteDemo:
    """`seed(db)`: import the suite's samples into the new store, {what: how many} for the
    demo's "imported" line; `runs(base, settings)`: its stage runs, from the options every run
    shares (`base`: the targets, the judge, the generator); `summary(console, db, settings)`:
    print its table of the summary (None: it adds none)."""

    seed: Callable[[Database], dict[str, int]]
    runs: Callable[[Options, DemoSettings], list[DemoRun]]
    summary: Callable[[Console, Database, DemoSettings], None] | None = None


def suite_demos() -> list[SuiteDemo]:
    """Every registered suite's part of the demo, in registration order."""
    return [load(spec.demo) for spec in SUITES.values() if spec.demo]
