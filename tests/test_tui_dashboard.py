"""The dashboard screen: numbers shown equal the report dict, NaN shows as n/a with its reason,
the judge selector recomputes, and the export key writes the `copal export` files + manifest.

The database: the two showcase worlds imported through import_paths, plus a small judgment
JSONL (two contract judges derived from ana's labels, one of them with a few marks dropped) and
two projections of harbor-clinics:I01 answered and judged, so the paired contrast has one row
with numbers and others that are n/a.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copal_tui.interchange.importer import import_paths
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.options import ReportOptions
from copal_tui.resources import sample_worlds_dir
from copal_tui.services.report import build_document
from copal_tui.tui.app import make_app
from copal_tui.tui.screens.dashboard import DashboardScreen
from copal_tui.tui.widgets import dashboard_sections as sections
from copal_tui.tui.widgets.dashboard_export import ExportDialog
from copal_tui.tui.widgets.dashboard_table import DashboardTable
from store.db import connect
from store.migrations.apply import migrate
from tests.db_support import copy_db

W = "harbor-clinics"
I01 = f"{W}:I01"
JUDGE_A, JUDGE_B = "test/judge-a", "test/judge-b"
BOOTSTRAP = 50  # the screen takes the same option; small keeps the tests quick


def _judgment(rid: str, judge: str, observed: list[str]) -> dict[str, Any]:
    return {"type": "judgment", "id": f"{rid}+{judge}", "response_id": rid, "judge": judge,
            "mode": "contract", "observed": observed, "rationale": "test", "evidence": None}


def _projection(k: int, clause: str, side: str) -> dict[str, Any]:
    entry = {"id": "R1" if side == "required" else "F1", "text": f"projection {k}",
             "kind": "content", "clause_id": f"{W}:{clause}"}
    return {"type": "item", "id": f"{I01}:p{k}", "world_id": W, "composition_id": f"{W}:K01",
            "pattern": None, "facet": None, "query": f"projection query {k}",
            "required": [entry] if side == "required" else [],
            "forbidden": [entry] if side == "forbidden" else [],
            "method": "projection", "parent_item_id": I01, "selected": False, "trap": None}


def extra_records(samples: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [
        _projection(1, "C09", "required"), _projection(2, "C10", "forbidden"),
        {"type": "response", "id": f"{I01}:p1:a", "item_id": f"{I01}:p1",
         "model": "sample/assistant-a", "text": "An in-person visit suits this."},
        {"type": "response", "id": f"{I01}:p2:a", "item_id": f"{I01}:p2",
         "model": "sample/assistant-a", "text": "Please see a clinician."},
        _judgment(f"{I01}:p1:a", JUDGE_A, ["R1"]), _judgment(f"{I01}:p2:a", JUDGE_A, []),
    ]
    n = 0
    for world in ("harbor_clinics", "meridian_bank"):
        for line in (samples / f"{world}.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec["type"] != "label" or rec["annotator"] != "ana":
                continue
            n += 1
            observed = list(rec["observed"])
            records.append(_judgment(rec["response_id"], JUDGE_A, observed))
            # judge-b misses the last mark on every third response: a different confusion matrix.
            records.append(_judgment(rec["response_id"], JUDGE_B,
                                     observed[:-1] if n % 3 == 0 else observed))
    return records


def build_dashboard_db(path: Path, samples: Path) -> Path:
    extra = path.parent / "dashboard_judgments.jsonl"
    extra.write_text("".join(json.dumps(r) + "\n" for r in extra_records(samples)),
                     encoding="utf-8")
    db = connect(path, create=True)
    try:
        migrate(db)
        import_paths(db, [samples / "harbor_clinics.yaml", samples / "meridian_bank.yaml",
                          samples / "harbor_clinics.jsonl", samples / "meridian_bank.jsonl",
                          extra])
    finally:
        db.conn.close()
    return path


@pytest.fixture(scope="session")
def dashboard_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_dashboard_db(tmp_path_factory.mktemp("dashboard") / "template.db",
                              sample_worlds_dir())


@pytest.fixture
def dashboard_db(dashboard_template: Path, tmp_path: Path) -> Path:
    return copy_db(dashboard_template, tmp_path / "dashboard.db")


def report_doc(db_path: Path, judge: str | None = None) -> ReportDocument:
    db = connect(db_path)
    try:
        return build_document(db, ReportOptions(judge=judge, bootstrap=BOOTSTRAP))
    finally:
        db.conn.close()


def report(db_path: Path, judge: str | None = None) -> dict[str, Any]:
    """The report in its JSON layout (NaN where JSON has null)."""
    return report_doc(db_path, judge).to_dict()


async def ready(pilot: Any) -> DashboardScreen:
    """Wait (bounded) until the dashboard has shown a report."""
    for _ in range(200):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = pilot.app.screen
        if isinstance(screen, DashboardScreen) and screen.doc is not None:
            return screen
    raise AssertionError("the dashboard never showed its report")


async def open_dashboard(pilot: Any) -> DashboardScreen:
    await pilot.pause()
    pilot.app.action_open("dashboard", bootstrap=BOOTSTRAP)
    return await ready(pilot)


def table(screen: DashboardScreen, name: str) -> DashboardTable:
    return screen.query_one(f"#dash-{name}", DashboardTable)


def row(screen: DashboardScreen, name: str, key: str) -> list[str]:
    t = table(screen, name)
    assert t.section is not None
    return [t.cell(key, i) for i in range(len(t.section.columns))]


f3 = sections.f3


async def test_numbers_equal_the_report(dashboard_db: Path) -> None:
    typed = report_doc(dashboard_db)
    doc = typed.to_dict()
    assert doc["scope"]["primary_judge"] == {"judge": JUDGE_A, "mode": "contract"}
    async with make_app(dashboard_db).run_test(size=(120, 40)) as pilot:
        screen = await open_dashboard(pilot)
        assert screen.doc is not None
        assert screen.doc.to_dict()["error_rates"] == doc["error_rates"]

        patterns = sections.patterns_of(typed)
        assert len(patterns) == 4
        for r in doc["error_rates"]:
            shown = row(screen, "errors", r["model"])
            assert shown[0] == r["model"]
            assert shown[1:1 + len(patterns)] == [
                f3(r["by_pattern"][p]["error_rate"]) for p in patterns]
            assert shown[-3:] == [f3(r["error_rate"]), str(r["errors"]), str(r["n"])]
        assert row(screen, "errors", "(all models)")[-3:] == [
            f3(doc["overall"]["error_rate"]), str(doc["overall"]["errors"]),
            str(doc["overall"]["n"])]

        for facet, a in doc["facet_atlas"].items():
            assert row(screen, "facets", facet)[2:] == [
                str(a["n"]), str(a["errors"]), f3(a["under_enforcement_share"]),
                f3(a["over_enforcement_share"]), f3(a["mixed_share"])]

        # assistant-a has I01 with both projections judged; the others are n/a with a reason.
        contrast = {r["model"]: r for r in doc["paired_contrast"]}
        a = contrast["sample/assistant-a"]
        assert a["n"] == 1
        assert row(screen, "contrast", "sample/assistant-a")[1:5] == [
            "1", f3(a["single_error_rate"]), f3(a["composed_error_rate"]),
            f3(a["composition_induced_rate"])]
        b = contrast["sample/assistant-b"]
        assert row(screen, "contrast", "sample/assistant-b")[2:6] == ["n/a"] * 4
        notes = table(screen, "contrast").section.notes  # type: ignore[union-attr]
        assert f"sample/assistant-b single: {b['single_error_rate_reason']}" in notes
        shown_notes = str(table(screen, "contrast").query_one(".dash-notes").render())
        assert b["single_error_rate_reason"] in shown_notes

        assert {v["judge"] for v in doc["judge_validity"]} == {JUDGE_A, JUDGE_B}
        for v in doc["judge_validity"]:
            key = f"{v['judge']}@{v['mode']}"
            assert row(screen, "validity", key)[1:] == [
                str(v[k]) for k in ("n", "tp", "fp", "fn", "tn")] + [
                f3(v[k]) for k in ("agreement", "precision", "recall", "f1", "kappa")]
            # Rows: the human reference (no error, error); columns: the judge (no error, error).
            assert row(screen, "confusion", f"{key}\tno error")[1:] == [
                "no error", f"tn {v['tn']}", f"fp {v['fp']}"]
            assert row(screen, "confusion", f"{key}\terror")[1:] == [
                "error", f"fn {v['fn']}", f"tp {v['tp']}"]
        a_v, b_v = (next(v for v in doc["judge_validity"] if v["judge"] == j)
                    for j in (JUDGE_A, JUDGE_B))
        assert (a_v["fn"], a_v["tp"]) != (b_v["fn"], b_v["tp"])

        ha = doc["human_agreement"]
        assert ha["n_multiply_labelled"] > 0
        summary = str(screen.query_one("#dash-agreement").render())
        assert f"Krippendorff's alpha {f3(ha['krippendorff_alpha'])}" in summary
        assert f"mean pairwise kappa {f3(ha['mean_pairwise_kappa'])}" in summary
        assert f"multiply labelled {ha['n_multiply_labelled']} of {ha['n_responses']}" in summary
        for pr in ha["pairwise"]:
            assert row(screen, "pairs", f"{pr['annotator_a']}\t{pr['annotator_b']}")[2:] == [
                str(pr["n"]), f3(pr["agreement"]), f3(pr["kappa"])]


async def test_judge_selector_recomputes(dashboard_db: Path) -> None:
    doc_b = report(dashboard_db, judge=JUDGE_B)
    async with make_app(dashboard_db).run_test(size=(80, 24)) as pilot:
        screen = await open_dashboard(pilot)
        await pilot.press("j")
        screen = await ready(pilot)
        assert screen.doc is not None
        assert screen.doc.to_dict()["scope"]["primary_judge"]["judge"] == JUDGE_B
        for r in doc_b["error_rates"]:
            assert row(screen, "errors", r["model"])[-3:] == [
                f3(r["error_rate"]), str(r["errors"]), str(r["n"])]
        await pilot.press("4")
        assert screen.query_one("#dash-tabs").active == "validity"  # type: ignore[attr-defined]
        await pilot.press("b")
        assert not isinstance(pilot.app.screen, DashboardScreen)


async def test_export_key_writes_files_and_manifest(dashboard_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "exported"
    async with make_app(dashboard_db).run_test(size=(80, 24)) as pilot:
        screen = await open_dashboard(pilot)
        # Beside the report: the responses behind its judge-validity counts.
        for fmt, expected in (("md", ["report.md", "validity_cases.csv"]),
                              ("json", ["report.json", "validity_cases.jsonl"]), ("csv", None)):
            folder = out / fmt
            await pilot.press("e")
            await pilot.pause()
            dialog = pilot.app.screen
            assert isinstance(dialog, ExportDialog)
            for _ in range(10):  # the formats cycle: bounded, a key that goes astray fails
                if dialog.fmt == fmt:
                    break
                await pilot.press("ctrl+f")
            assert dialog.fmt == fmt
            dialog.query_one("#export-folder").value = str(folder)  # type: ignore[attr-defined]
            await pilot.press("enter")
            for _ in range(200):
                await pilot.app.workers.wait_for_complete()
                await pilot.pause()
                if (folder / "manifest.json").exists():
                    break
            assert pilot.app.screen is screen
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            names = sorted(p.name for p in folder.iterdir() if p.name != "manifest.json")
            if expected is not None:
                assert names == expected
            else:
                assert names and all(n.endswith(".csv") for n in names)
            # The manifest lists every other file with its sha256 (written last: complete).
            assert sorted(Path(f["path"]).name for f in manifest["files"]) == names
        exported = json.loads((out / "json" / "report.json").read_text(encoding="utf-8"))
        assert exported["error_rates"][0]["error_rate"] == \
            screen.doc.to_dict()["error_rates"][0]["error_rate"]  # type: ignore[union-attr]


async def test_export_again_needs_replace_existing_files(dashboard_db: Path,
                                                        tmp_path: Path) -> None:
    folder = tmp_path / "again"

    async def export(pilot, force: bool) -> None:
        await pilot.press("e")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, ExportDialog)
        for _ in range(10):  # the formats cycle: bounded, a key that goes astray fails
            if dialog.fmt == "json":
                break
            await pilot.press("ctrl+f")
        assert dialog.fmt == "json"
        dialog.query_one("#export-folder").value = str(folder)  # type: ignore[attr-defined]
        dialog.query_one("#export-force").value = force  # type: ignore[attr-defined]
        await pilot.press("enter")
        for _ in range(50):
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    async with make_app(dashboard_db).run_test(size=(80, 24)) as pilot:
        await open_dashboard(pilot)
        await export(pilot, force=False)
        first = (folder / "report.json").read_bytes()
        (folder / "report.json").write_text("edited by hand")
        await export(pilot, force=False)  # refused: the hand-edited file stays
        assert (folder / "report.json").read_text() == "edited by hand"
        await export(pilot, force=True)   # asked for: replaced
        assert (folder / "report.json").read_bytes() == first


async def test_bindings_have_ids(dashboard_db: Path) -> None:
    assert all(b.id for b in DashboardScreen.BINDINGS)  # type: ignore[union-attr]
    assert all(b.id for b in ExportDialog.BINDINGS)  # type: ignore[union-attr]
    async with make_app(dashboard_db).run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+d")
        screen = await ready(pilot)
        commands = [c[0] for c in screen.palette_commands()]
        assert f"Judge: {JUDGE_B}@contract" in commands


async def test_a_table_shows_every_row_when_the_pane_is_laid_out_before_it_measures(
        dashboard_db: Path) -> None:
    """A DataTable measures new rows when it is next idle. When the screen laid the pane out
    between `show` and that idle (a race the CI hit about once in twenty runs), Textual kept the
    table at the height it had before the rows came (none), and they never reached the screen.
    Here the screen's layout pass is run at exactly that point, on a table laid out empty."""
    async with make_app(dashboard_db).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        pilot.app.action_open("dashboard", bootstrap=BOOTSTRAP, tab="validity")
        screen = await ready(pilot)
        section = table(screen, "confusion").section
        assert section is not None and section.rows
        fresh = DashboardTable("a table laid out before its rows", id="dash-fresh")
        await screen.query_one("TabPane#validity VerticalScroll").mount(fresh)
        await pilot.pause()
        assert fresh.table.region.height == 0  # laid out with no rows yet
        fresh.show(section)
        screen._refresh_layout()  # the layout pass before the DataTable is idle
        want = fresh.table.header_height + len(section.rows)
        for _ in range(50):
            await pilot.pause()
            if fresh.table.region.height == want:
                break
        assert fresh.table.region.height == want
