"""The dashboard's traffic tab: Table 11, the ratio, the annotators' agreement and the automatic
labeller's rows shown as the report has them, cell by cell; the HEURISTIC caveat where the
labels are the offline labeller's; enter on a Table 11 count names the `copal cases --suite traffic`
line that lists its pairs.

The stores are `tests.traffic_support`'s log labelled as test_traffic_cases labels it (people
and the offline labeller), or by the offline labeller alone.
"""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.tui.app import make_app
from copal_tui.tui.screens.dashboard import DashboardScreen
from tests import test_traffic_cases as cases_tests
from tests.test_tui_dashboard import BOOTSTRAP, f3, open_dashboard, ready, report, row, table

JUDGE = cases_tests.JUDGE
# test_traffic_cases's stores (test_traffic_report's labels, one adjudication, the offline
# labeller; the offline labeller alone), built outside the tests' event loop: a stage run
# starts its own.
labelled = cases_tests.labelled
judged = cases_tests.judged
offline_only = cases_tests.offline_only


def _ci(low: float, high: float) -> str:
    """An interval as the dashboard shows it (the report's dict has NaN where undefined)."""
    return "n/a" if math.isnan(low) or math.isnan(high) else f"[{f3(low)}, {f3(high)}]"


def _shown(screen: DashboardScreen, name: str) -> str:
    return str(screen.query_one(f"#dash-{name}").render())


async def _traffic_tab(pilot: Any) -> DashboardScreen:
    screen = await open_dashboard(pilot)
    await pilot.press("6")
    await pilot.pause()
    assert screen.query_one("#dash-tabs").active == "traffic"  # type: ignore[attr-defined]
    return screen


async def test_the_traffic_tab_shows_the_reports_traffic_figures(
        judged: tuple[Path, dict[str, str]]) -> None:
    db, _names = judged
    doc = report(db)
    audit = doc["traffic_audit"]
    assert audit["labels"] == "human" and len(audit["rows"]) == 12
    async with make_app(db).run_test(size=(120, 40)) as pilot:
        screen = await _traffic_tab(pilot)
        caption = _shown(screen, "traffic-caption")
        assert "Table 11 by human reference labels" in caption
        assert f"{audit['pairs']} pair(s)" in caption and "flagged sensitive 1" in caption
        assert "HEURISTIC" not in caption  # the labels are people's
        for r in audit["rows"]:
            assert row(screen, "traffic-audit", f"{r['source']}\t{r['category']}") == [
                r["source"], r["category"], str(r["cases"]), str(r["errors"]),
                f3(r["error_rate"]), _ci(r["ci_low"], r["ci_high"]),
                f3(r["share_of_cases"]), f3(r["share_of_errors"])]
        for q in audit["ratios"]:
            assert row(screen, "traffic-ratio", q["source"]) == [
                q["source"], f3(q["multi_rate"]), f3(q["single_rate"]), f3(q["ratio"]),
                _ci(q["ci_low"], q["ci_high"])]
        agreement = doc["traffic_agreement"]
        for field in ("category", "error"):
            f = agreement[field]
            assert row(screen, "traffic-agreement", field) == [
                field, str(f["n_pairs"]), str(f["n_annotators"]), f3(f["kappa"]),
                f3(f["alpha"])]
        [labeller] = doc["traffic_labeller"]
        assert row(screen, "traffic-labeller", JUDGE) == [
            JUDGE, str(labeller["pairs"]), str(labeller["failed"]), str(labeller["sample"]),
            *(f3(labeller[k]) for k in ("category_agreement", "category_kappa",
                                        "error_precision", "error_recall", "error_f1",
                                        "error_kappa"))]
        # An undefined figure is n/a with the report's reason.
        assert math.isnan(labeller["error_precision"])
        notes = table(screen, "traffic-labeller").section.notes  # type: ignore[union-attr]
        assert f"{JUDGE} precision: {labeller['error_precision_reason']}" in notes
        # The labeller is the offline engine: its rows say so.
        assert _shown(screen, "traffic-caveat").startswith("HEURISTIC")
        for r in doc["traffic_corrected"]:
            assert row(screen, "traffic-corrected", f"{r['judge']}\t{r['category']}")[:4] == [
                r["judge"], r["category"], str(r["pairs"]), str(r["errors"])]

        # Enter on web/multi's errors: the command listing those pairs, which lists as many.
        t = table(screen, "traffic-audit").table
        t.focus()
        keys = [str(k.value) for k in t.rows]
        t.move_cursor(row=keys.index("web\tmulti"), column=3)
        await pilot.press("enter")
        await pilot.pause()
        said = [n.message for n in pilot.app._notifications]
        line = "copal cases --suite traffic --source web --category multi --erroneous yes"
        assert said == [f"The pairs behind this count: {line}"]
    listed = CliRunner().invoke(main, ["--db", str(db), *shlex.split(line)[1:], "--format",
                                       "jsonl"], catch_exceptions=False)
    web_multi = next(r for r in audit["rows"] if (r["source"], r["category"]) ==
                     ("web", "multi"))
    assert listed.exit_code == 0 and len(listed.stdout.splitlines()) == web_multi["errors"]


async def test_table11_by_the_offline_labeller_carries_the_heuristic_caveat(
        offline_only: Path) -> None:
    db = offline_only
    doc = report(db)
    audit = doc["traffic_audit"]
    assert audit["labels"] == JUDGE
    async with make_app(db).run_test(size=(100, 30)) as pilot:
        screen = await _traffic_tab(pilot)
        caption = _shown(screen, "traffic-caption")
        assert f"Table 11 by the automatic labeller {JUDGE}" in caption
        assert audit["caveat"].startswith("HEURISTIC") and audit["caveat"] in caption
        total = next(r for r in audit["rows"] if (r["source"], r["category"]) ==
                     ("all", "total"))
        assert row(screen, "traffic-audit", "all\ttotal")[2:4] == [
            str(total["cases"]), str(total["errors"])]
        # No human label: no annotators' agreement; the labeller's sample is empty.
        assert "traffic_agreement" not in doc
        assert not screen.query_one("#dash-traffic-agreement").display
        [labeller] = doc["traffic_labeller"]
        assert labeller["sample"] == 0
        assert row(screen, "traffic-labeller", JUDGE)[3:5] == ["0", "n/a"]


async def test_dashboard_opened_on_the_traffic_tab(offline_only: Path) -> None:
    async with make_app(offline_only).run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        pilot.app.action_open("dashboard", bootstrap=BOOTSTRAP, tab="traffic")
        screen = await ready(pilot)
        await pilot.pause()
        assert screen.query_one("#dash-tabs").active == "traffic"  # type: ignore[attr-defined]
