"""litellm stays out of the UI thread: starting the app and opening the jobs screen does not
import it, and when a job runs it is imported by the worker thread, not the main thread.

Checked in a fresh interpreter (another test may have imported litellm already) with an import
hook that records which thread first asks for litellm.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import asyncio, importlib.abc, json, sys, threading
    from pathlib import Path

    first_import = []

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "litellm" and not first_import:
                first_import.append(threading.current_thread() is threading.main_thread())
            return None

    sys.meta_path.insert(0, Watch())

    from copal_tui.tui.app import make_app
    from copal_tui.tui.job_manager import JobManager
    from textual.widgets import Input, SelectionList

    async def main():
        out = {}
        app = make_app(Path(sys.argv[1]))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            out["start_screen"] = type(app.screen).__name__
            await pilot.press("ctrl+j")  # the app's own key for the jobs screen
            await pilot.pause()
            out["jobs_screen"] = type(app.screen).__name__
            out["before_job"] = "litellm" in sys.modules
            app.screen.query_one("#job-stages", SelectionList).select("respond")
            app.screen.query_one("#job-models", Input).value = "offline/refuse-all"
            await pilot.press("ctrl+g")
            manager = JobManager.of(app)
            for _ in range(4800):  # bounded: a hung worker fails instead of hanging
                job = manager.latest()
                if job is not None and job.final:
                    break
                await pilot.pause(0.05)
            out["job"] = job.status if job else None
            out["error"] = job.error if job else None
        out["after_job"] = "litellm" in sys.modules
        out["imported_in_main_thread"] = first_import
        print(json.dumps(out))

    asyncio.run(main())
""")


def test_litellm_is_imported_only_by_the_job_worker(cli, initialised, samples, tmp_path: Path):
    result = cli("import", str(samples / "harbor_clinics.yaml"),
                 str(samples / "harbor_clinics.jsonl"))
    assert result.exit_code == 0, result.output
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(initialised)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["jobs_screen"] == "JobsScreen", out
    assert out["before_job"] is False, out
    assert out["job"] == "done", out
    assert out["after_job"] is True
    assert out["imported_in_main_thread"] == [False], out


async def test_exit_interrupts_a_query_still_running_in_a_worker(initialised):
    # A worker's long query (world statistics over a big database, a report) must not keep the
    # process alive once the app has exited: exit() interrupts every worker connection.
    import sqlite3
    import threading

    from copal_tui.tui.app import make_app

    app = make_app(initialised)
    started, outcome = threading.Event(), {}

    def endless() -> None:
        with app.worker_db() as db:
            # Signal from inside the running statement, so exit() cannot come before it starts.
            db.conn.set_progress_handler(lambda: started.set() or 0, 1000)
            try:  # a query that never finishes on its own
                db.execute("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                           "SELECT COUNT(*) FROM n").fetchone()
                outcome["result"] = "finished"
            except sqlite3.OperationalError as exc:
                outcome["result"] = str(exc)

    async with app.run_test() as pilot:
        thread = threading.Thread(target=endless, daemon=True)
        thread.start()
        assert started.wait(30)
        await pilot.pause()
        app.exit()
    thread.join(60)
    assert not thread.is_alive()
    assert outcome["result"] == "interrupted"
    assert app._worker_conns == set()  # closed and forgotten
