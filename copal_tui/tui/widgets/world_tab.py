"""WorldTab: what a suite adds to the world screen, one tab of its own rows in that world.

A suite's descriptor names its tab (`Suite.world_tab`, "module:attribute" of a `WorldTab`); the
world screen (`copal_tui.tui.screens.world`) shows it after its own tabs, for every registered
suite that names one and whose rows the world has, numbered (and keyed) in the registry's order.
The tab is called as its suite is: its pane, its list (`<suite>-table`) and its key's binding
(`world.tab_<suite>`) carry the suite's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding

from copal_tui.domain.suites import SUITES, load
from copal_tui.services.browse import Page, PageRequest, WorldSummary
from copal_tui.tui.widgets.table_columns import Column

Row = dict[str, Any]


@dataclass(frozen=True)
class WorldTab:
    """One suite's tab on the world screen.

    - `title`: the tab's title (after its key: "6 COMPASS") and its key's description;
    - `columns(world_id)`: its list's columns (ids are shown short within the world);
    - `hint`: the filter line's placeholder, naming the filters its page function takes;
    - `page(db, world_id, request)`: one page of its rows (a `copal_tui.services` read);
    - `count(summary)`: how many rows the world has, from the world's summary; None when the
      world has none of the suite (no tab, its key inert);
    - `counted`: what the summary line calls those rows ("7 COMPASS queries");
    - `opens`, `opens_with`: enter on a row opens the screen named `opens` (one of the suite's
      screens) with the row's id as its keyword argument `opens_with`;
    - `related(row, world_id)`: the filter its own list takes when `r` follows a row (None: its
      rows have no related rows here)."""

    title: str
    columns: Callable[[str], list[Column]]
    hint: str
    page: Callable[[Any, str, PageRequest], Page]
    count: Callable[[WorldSummary], int | None]
    counted: str
    opens: str
    opens_with: str
    related: Callable[[Row, str], str] | None = None


def suite_tabs(first: int) -> dict[str, tuple[int, WorldTab]]:
    """{suite name: (its tab's number, its `WorldTab`)} for every registered suite whose
    descriptor names a world tab, numbered from `first` in the registry's order (a world
    without a suite's rows leaves its number unused, so a suite's key is the same in every
    world)."""
    named = [(name, load(spec.world_tab)) for name, spec in SUITES.items()
             if spec.world_tab is not None]
    return {name: (n, tab) for n, (name, tab) in enumerate(named, first)}


def tab_binding(n: int, name: str, title: str) -> Binding:
    """The world screen's key `n` for its tab `name`."""
    return Binding(str(n), f"tab('{name}')", title, show=False, id=f"world.tab_{name}")


def suite_bindings(tabs: dict[str, tuple[int, WorldTab]]) -> list[Binding]:
    # The digit keys run out at 9: a later suite's tab is reached with the mouse or tab key.
    return [tab_binding(n, name, tab.title) for name, (n, tab) in tabs.items() if n <= 9]
