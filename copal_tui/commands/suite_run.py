"""A suite's part of `copal run`: its options on the command line, which of its stages read
each, how they set the suite's options model (`Options.<suite>`), and its scope check (exit 2
for a value that names nothing stored). The suite's descriptor names its `SuiteRun`
(`Suite.run_options`, "module:attribute"); `copal run` adds every registered suite's options,
so a suite's options live in its own module and the command names none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from copal_tui.domain.suites import SUITES, load

if TYPE_CHECKING:
    from copal_tui.pipeline.base import Options
    from store.db import Database

Params = Mapping[str, Any]


@dataclass(frozen=True)
class SuiteRun:
    """`options`: click option decorators, in the order `--help` lists them; `read_by`: the
    stages that read each (by parameter name); `apply`: set the suite's options from the
    parameters; `check`: refuse (BadValue) a scope that names nothing stored or leaves the
    suite's stages in `stages` nothing to work on."""

    options: tuple[Callable[[Any], Any], ...]
    read_by: Callable[[], Mapping[str, tuple[str, ...]]]
    apply: Callable[[Options, Params], None]
    check: Callable[[Database, Sequence[str], Params], None] | None = None


def suite_runs() -> list[SuiteRun]:
    """Every registered suite's part of `copal run`, in registration order."""
    return [load(spec.run_options) for spec in SUITES.values() if spec.run_options]


def with_suite_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """`f` with every suite's options added (their values reach it as keyword arguments)."""
    for part in reversed(suite_runs()):
        for option in reversed(part.options):
            f = option(f)
    return f


def apply_all(opts: Options, params: Params) -> None:
    for part in suite_runs():
        part.apply(opts, params)


def check_all(db: Database, stages: Sequence[str], params: Params) -> None:
    for part in suite_runs():
        if part.check is not None:
            part.check(db, stages, params)
