"""The jobs screen through the Pilot: start a job with the offline engine on an imported world,
cancel one mid-stage, refuse incomplete jobs, page and filter past runs and show a manifest
literally. Assertions are on database rows (`runs` and the tables the stages write).

The app is started on the jobs screen (START patched) so these tests do not depend on the other
screens; workers are awaited with bounded polling loops, never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, SelectionList, Static

from copal_tui.pipeline.base import StageRun
from copal_tui.tui import app as app_module
from copal_tui.tui.app import make_app
from copal_tui.tui.job_manager import JobManager
from copal_tui.tui.settings import Settings
from copal_tui.tui.widgets.job_progress import JobProgressView
from copal_tui.tui.widgets.run_list import RunList
from store.db import connect
from store.pipeline import runs as pipeline_runs
from tests.db_support import query_rows

WORLD = "harbor-clinics"
# Generous: a hung worker fails the test instead of hanging it (no timing is asserted).
WAIT_S = 240.0


@pytest.fixture
def world_db(cli, initialised, samples) -> Path:
    result = cli("import", str(samples / "harbor_clinics.yaml"),
                 str(samples / "harbor_clinics.jsonl"))
    assert result.exit_code == 0, result.output
    return initialised


@pytest.fixture(autouse=True)
def start_on_jobs(monkeypatch):
    monkeypatch.setitem(app_module.START, "browse", "jobs")


async def wait_until(pilot: Any, check: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await pilot.pause(0.05)


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*[{"/": "slash", "-": "minus", " ": "space", ",": "comma",
                         ":": "colon"}.get(c, c) for c in text])


def progress_text(app: Any) -> str:
    return str(app.screen.query_one(JobProgressView).render())


async def test_start_job_with_offline_models(world_db):
    app = make_app(world_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        stages = app.screen.query_one("#job-stages", SelectionList)
        assert app.focused is stages
        # Keyboard only: tick respond and judge, the world, then type the model names.
        await pilot.press("end", "up", "space", "down", "space")
        await pilot.press("tab", "space")  # worlds: the only one, harbor-clinics
        await pilot.press("tab")
        await type_text(pilot, "offline/refuse-all")
        await pilot.press("tab")
        await type_text(pilot, "offline/judge")
        assert app.screen.query_one("#job-models", Input).value == "offline/refuse-all"
        await pilot.press("ctrl+g")
        manager = JobManager.of(app)
        job = manager.latest()
        assert job is not None and job.stages == ["respond", "judge"]
        assert job.opts.worlds == [WORLD] and job.opts.judges == ["offline/judge"]

        # The job belongs to the app: a second jobs screen sees it and follows it.
        app.action_open("jobs")
        await pilot.pause()
        second = app.screen
        await wait_until(pilot, lambda: (manager.latest() or job).final, "the job to end")
        await wait_until(pilot, lambda: "done" in progress_text(app) and
                         "judge" in progress_text(app), "the final progress on screen")
        assert manager.latest().status == "done", manager.latest().error  # type: ignore[union-attr]

        runs = query_rows(world_db, "SELECT * FROM runs ORDER BY rowid")
        assert [(r["stage"], r["status"]) for r in runs] == [("respond", "done"),
                                                             ("judge", "done")]
        assert runs[0]["calls"] == 12 and runs[1]["calls"] > 0
        answered = query_rows(world_db, "SELECT run_id FROM responses WHERE model = ?",
                              ("offline/refuse-all",))
        assert len(answered) == 12 and {r["run_id"] for r in answered} == {runs[0]["id"]}
        judged = query_rows(world_db, "SELECT COUNT(*) FROM judgments WHERE judge = "
                                      "'offline/judge' AND mode = 'contract' AND run_id = ?",
                            (runs[1]["id"],))
        assert judged[0][0] == 12  # the job's --model: only its 12 new responses are judged

        # The progress panel shows counters; the runs tab lists both runs with a manifest.
        text = progress_text(app)
        assert "12/12" in text and "24/24" in text and "cache hits" in text
        await pilot.press("ctrl+o")
        await pilot.pause()
        run_list = second.query_one(RunList)
        assert run_list.run_ids == [runs[1]["id"], runs[0]["id"]]
        manifest = str(second.query_one("#run-manifest-text", Static).render())
        assert runs[1]["id"] in manifest and "offline/judge" in manifest


@pytest.fixture
def judge_gate(monkeypatch):
    """A gate inside the judge stage: three units run, the next ones wait for `release`, so a
    cancel lands in the middle of the stage on any machine."""
    reached, release = threading.Event(), threading.Event()
    original = StageRun.each

    async def gated_each(self: StageRun, units: Any, fn: Any) -> None:
        started = 0

        async def unit(u: Any) -> None:
            nonlocal started
            started += 1
            if self.stage == "judge" and started > 3:
                reached.set()
                await asyncio.to_thread(release.wait, WAIT_S)
            await fn(u)

        await original(self, units, unit)

    monkeypatch.setattr(StageRun, "each", gated_each)
    yield reached, release
    release.set()


async def start_judge_job(app: Any, pilot: Any) -> None:
    await pilot.pause()
    app.screen.query_one("#job-stages", SelectionList).select("judge")
    await pilot.press("tab", "tab", "tab")  # worlds, models, judges
    await type_text(pilot, "offline/judge")
    app.screen.query_one("#job-concurrency", Input).value = "1"
    await pilot.press("ctrl+g")


async def test_cancel_a_running_job(world_db, judge_gate):
    reached, release = judge_gate
    app = make_app(world_db)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await start_judge_job(app, pilot)
            await wait_until(pilot, reached.is_set, "the judge stage to reach the gate")
            running = query_rows(world_db, "SELECT id, status FROM runs")
            assert [r["status"] for r in running] == ["running"]

            await pilot.press("ctrl+x")
            await pilot.pause()
            manager = JobManager.of(app)
            assert manager.latest().status == "cancelling"  # type: ignore[union-attr]
            assert "cancelling" in progress_text(app)
            release.set()
            await wait_until(pilot, lambda: manager.latest().final,  # type: ignore[union-attr]
                             "the job to stop")
            await wait_until(pilot, lambda: "cancelled" in progress_text(app),
                             "the cancelled status on screen")
            assert manager.latest().status == "cancelled"  # type: ignore[union-attr]
    finally:
        release.set()

    run = query_rows(world_db, "SELECT * FROM runs")
    assert [(r["stage"], r["status"]) for r in run] == [("judge", "cancelled")]
    assert run[0]["finished_at"] is not None
    judged = query_rows(world_db, "SELECT COUNT(*) FROM judgments WHERE run_id = ?",
                        (run[0]["id"],))
    # Three units before the gate, at most the two admitted by the semaphore after it.
    assert 3 <= judged[0][0] <= 5 < 36


async def test_quitting_mid_job_stops_it_cleanly(world_db, judge_gate):
    reached, release = judge_gate
    app = make_app(world_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_judge_job(app, pilot)
        await wait_until(pilot, reached.is_set, "the judge stage to reach the gate")
        await pilot.press("q")  # the app quits while the stage is half done
        release.set()
    # The worker sees the app's cancellation and ends the stage: no run is left 'running'.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while query_rows(world_db, "SELECT status FROM runs")[0][0] == "running":
        assert loop.time() < deadline, "the run was left running"
        await asyncio.sleep(0.05)
    run = query_rows(world_db, "SELECT * FROM runs")
    assert [(r["stage"], r["status"]) for r in run] == [("judge", "cancelled")]
    judged = query_rows(world_db, "SELECT COUNT(*) FROM judgments WHERE run_id = ?",
                        (run[0]["id"],))
    # The worker notices the quit at its next progress report, so a few more units may finish.
    assert 3 <= judged[0][0] < 36


async def test_incomplete_jobs_are_refused(world_db):
    app = make_app(world_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+g")
        await pilot.pause()
        error = app.screen.query_one("#job-form-error", Static)
        assert "Stages: tick at least one stage" in str(error.render())
        await pilot.press("end", "up", "space")  # respond, without a model
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert "Models: respond needs at least one model" in str(error.render())
        assert app.focused is app.screen.query_one("#job-models", Input)
        app.screen.query_one("#job-models", Input).value = "offline/comply-all"
        app.screen.query_one("#job-budget", Input).value = "0"
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert "Budget: must be between 1 and 10000" in str(error.render())
        assert app.focused is app.screen.query_one("#job-budget", Input)
        await pilot.press("ctrl+x")  # nothing to cancel: says so, changes nothing
        await pilot.pause()
        assert JobManager.of(app).latest() is None
    assert query_rows(world_db, "SELECT COUNT(*) FROM runs")[0][0] == 0


async def test_keys_follow_the_keymap(world_db):
    app = make_app(world_db, settings=Settings(keymap={"jobs.start": "f5"}))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "f5 starts it" in progress_text(app).lower()
        await pilot.press("f5")
        await pilot.pause()
        error = app.screen.query_one("#job-form-error", Static)
        assert "at least one stage" in str(error.render())


def _add_runs(db_path: Path, n: int) -> list[str]:
    db = connect(db_path)
    ids = []
    for i in range(n):
        rid = f"{'judge' if i % 2 else 'respond'}-2026010{i % 10}T000000-{i:06x}"
        manifest: dict[str, Any] = {"stage": rid.split("-")[0], "options": {"worlds": None},
                                    "errors": [], "error_count": 0}
        if i == n - 1:
            manifest["errors"] = [{"unit": "r1", "reason":
                                   "raw: [bold red]x[/bold red] \x1b[31mred\x1b[0m \u202eevil"}]
            manifest["error_count"] = 1
        pipeline_runs.start(db, rid, manifest["stage"], manifest)
        pipeline_runs.finish(db, rid, status="failed" if i == n - 1 else "done", calls=i,
                       cache_hits=0, failures=int(i == n - 1), cost=0.0, manifest=manifest)
        ids.append(rid)
    db.conn.close()
    return ids


async def test_runs_page_filter_and_literal_manifest(world_db):
    ids = _add_runs(world_db, 12)
    app = make_app(world_db, settings=Settings(page_size=10))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        run_list = app.screen.query_one(RunList)
        assert app.focused is run_list.table
        assert run_list.run_ids == ids[::-1][:10] and run_list.page_total == 12
        # The newest run failed with a reason full of markup, escapes and a bidi override.
        manifest = app.screen.query_one("#run-manifest-text", Static).render()
        text = str(manifest)
        assert "[bold red]x[/bold red]" in text and "\x1b" not in text
        assert "\u202e" not in text and "U+202E" in text
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert run_list.run_ids == ids[::-1][10:]
        await pilot.press("down")
        await pilot.pause()
        assert ids[0] in str(app.screen.query_one("#run-manifest-text", Static).render())
        await pilot.press("slash")
        await type_text(pilot, "status:failed")
        await pilot.pause()
        assert run_list.run_ids == [ids[-1]] and run_list.page_offset == 0
        await pilot.press("ctrl+a", "ctrl+k")
        await type_text(pilot, "judge")
        await pilot.pause()
        assert len(run_list.run_ids) == 6 and all(r.startswith("judge") for r in run_list.run_ids)

