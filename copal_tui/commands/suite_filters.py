"""Which filters a suite's subjects are chosen by (`copal campaign create --world/--model/
--pattern/--judge`, `copal label --judge`): the suite's annotation rules say (`Rules.draws_by`,
copal_tui.services.annotation.suites), so no command names a suite. A filter the suite does not
draw by is refused, naming the suites that take it and what the suite's own filters mean; each
value given must name something the store holds (exit 2 with the closest names).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from copal_tui.commands.choices import require_known

if TYPE_CHECKING:
    from store.db import Database

# The option of each filter (a field of `Filters`).
OPTIONS = {"worlds": "--world", "models": "--model", "patterns": "--pattern",
           "judges": "--judge"}


def refuse_filters(suite: str, given: Mapping[str, tuple[str, ...]]) -> None:
    """UsageError when a filter is given (`given`: field -> values; every field the command
    offers) that `suite` does not draw by: one line naming, for each, the suites that take it,
    and the filters of `given` the suite does take with what each means."""
    from copal_tui.services.annotation.suites import drawn_by, rules
    from store.db import StoreError

    try:
        takes = rules(suite).draws_by
    except StoreError as exc:
        raise click.UsageError(str(exc)) from None
    refused = [f for f, values in given.items() if values and f not in takes]
    if not refused:
        return
    others = [f"{OPTIONS[f]} (for {_suites(drawn_by(f))})" for f in refused]
    line = f"--suite {suite} takes no {_joined(others, 'or')}"
    chosen = [f"{OPTIONS[f]} ({d.meaning})" for f, d in takes.items() if f in given]
    if chosen:
        line += f"; its subjects are chosen by {_joined(chosen, 'and')}"
    raise click.UsageError(line)


def check_filters(db: Database, suite: str, given: Mapping[str, tuple[str, ...]]
                  ) -> dict[str, tuple[str, ...]]:
    """Each given filter value names something of the suite that is stored (else exit 2 with
    the closest names); returns the values as stored (a value of a fixed set as it is spelled
    there: a COMPASS query type `allowed-edge` is `allowed_edge`). The filters are those
    `refuse_filters` let through."""
    from copal_tui.domain.spelling import canonical
    from copal_tui.services.annotation.suites import rules

    takes = rules(suite).draws_by
    checked = {}
    for field, values in given.items():
        draw = takes.get(field)
        if draw is not None and values:
            values = tuple(canonical(v, draw.spellings) or v for v in values) \
                if draw.spellings else values
            require_known(OPTIONS[field], values, draw.names(db), draw.what,
                          none_yet=draw.none_yet)
        checked[field] = values
    return checked


def _suites(names: list[str]) -> str:
    return f"--suite {_joined(names, 'or')}" if names else "no suite"


def _joined(words: list[str], last: str) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"
