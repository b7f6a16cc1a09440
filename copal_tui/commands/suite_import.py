"""A suite's sources for `copal import --from`: what each reads, whether it takes --judge and
--replace, and the function that imports its paths. The suite's descriptor names them
(`Suite.importers`, {--from name: "module:attribute"}); `copal import` offers every registered
suite's, so the command names no suite and a suite's file formats stay in its own modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from copal_tui.commands.choices import Registered
from copal_tui.domain.suites import SUITES, load

if TYPE_CHECKING:
    from store.db import Database


@dataclass(frozen=True)
class Importer:
    """`help`: what PATHS are, for `--help`; `run(db, paths, judge, replace)`: import them in one
    transaction and return the lines that say what was imported; `judge`: the source needs
    --judge NAME (the judge whose outputs the files are); `replace`: it takes --replace."""

    help: str
    run: Callable[[Database, Sequence[Path], str | None, bool], list[str]]
    judge: bool = False
    replace: bool = False


def importer_refs() -> dict[str, str]:
    """{--from name: "module:attribute"} of every registered suite, in registration order (the
    default source, the first suite's first, first)."""
    return {name: ref for spec in SUITES.values() for name, ref in spec.importers.items()}


def importer(name: str) -> Importer:
    found: Importer = load(importer_refs()[name])
    return found


def check_flags(source: str, found: Importer, judge: str | None, replace: bool) -> str | None:
    """Why --judge/--replace do not fit `source` (None: they do), naming the sources they go
    with."""
    if found.judge and not judge:
        return f"--from {source} needs --judge NAME"
    for flag, given, takes in (("--judge", judge is not None, "judge"),
                               ("--replace", replace, "replace")):
        if given and not getattr(found, takes):
            others = [n for n in importer_refs() if getattr(importer(n), takes)]
            return f"{flag} goes with --from {' or '.join(others)}, not --from {source}"
    return None


class SourceChoice(Registered):
    """`--from NAME`: a source of a registered suite, read when the option is parsed, so a
    suite registered after this module loaded adds its sources too."""

    def __init__(self) -> None:
        super().__init__(importer_refs)
