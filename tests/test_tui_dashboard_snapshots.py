"""Snapshots of the dashboard at 80x24 (error matrix) and 120x40 (judge validity with the
confusion matrices), on the showcase worlds plus the test judgments of test_tui_dashboard.
Regenerate with `pytest --snapshot-update tests/test_tui_dashboard_snapshots.py` after a
deliberate change, and look at the SVGs before committing them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copal_tui.tui.app import make_app
from tests import test_tui_dashboard as data

# Shared fixtures (aliases keep them out of the import list, where they would shadow).
dashboard_db = data.dashboard_db
dashboard_template = data.dashboard_template


def _open(tab: str) -> Any:
    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        pilot.app.action_open("dashboard", bootstrap=data.BOOTSTRAP, tab=tab)
        await data.ready(pilot)
        await pilot.pause()
    return run_before


def test_dashboard_errors_80x24(snap_compare: Any, dashboard_db: Path) -> None:
    assert snap_compare(make_app(dashboard_db), terminal_size=(80, 24),
                        run_before=_open("errors"))


def test_dashboard_validity_120x40(snap_compare: Any, dashboard_db: Path) -> None:
    assert snap_compare(make_app(dashboard_db), terminal_size=(120, 40),
                        run_before=_open("validity"))
