"""A run's status says what happened to it: a run stopped with Ctrl-C (SIGINT) is `interrupted`,
as `copal runs` documents, not `failed`; and a run's heartbeat moves while its stage works, even
when the work holds the stage's event loop (a long planning step), so it never looks dead."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from copal_tui.pipeline.base import Options
from copal_tui.pipeline.runner import run_stages
from store.pipeline import runs
from tests.db_support import query_rows
from tests.stub_server import Stub, serve
from tests.test_run_exit_codes import DEADLINE, WORLD, models_file, wait_for

# How long the heartbeat test holds the stage's loop at most (heartbeats are 0.05 s apart).
BLOCKED = 10.0


def _default_sigint() -> None:
    # A process started in the background may inherit SIGINT ignored; Ctrl-C is what is tested.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_leaves_the_run_interrupted_with_its_calls(cli, world, tmp_path, monkeypatch):
    monkeypatch.setenv("COPAL_TEST_KEY", "sk-run-status")
    stub = Stub(latency=0.5)  # slow enough that the run is still working at the Ctrl-C
    with serve(stub) as url:
        models = models_file(tmp_path / "m.yaml", url)
        proc = subprocess.Popen(
            [sys.executable, "-m", "copal_tui", "--db", str(world), "run", "respond", "--world",
             WORLD, "--model", "stub-bot", "--models-file", str(models), "--concurrency", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
            preexec_fn=_default_sigint)
        try:
            wait_for(world, "SELECT COUNT(*) FROM llm_calls", 2)
        finally:
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode != 0, err
    assert "Traceback" not in err, err
    [row] = query_rows(world, "SELECT * FROM runs")
    [(logged,)] = query_rows(world, "SELECT COUNT(*) FROM llm_calls")
    assert row["status"] == "interrupted" and row["finished_at"], dict(row)
    assert row["calls"] == logged > 0
    assert 0 < logged < 12  # stopped mid-way

    listed = cli("runs", "--json")
    assert listed.exit_code == 0, listed.output
    assert [r["status"] for r in json.loads(listed.output)] == ["interrupted"]


def test_the_heartbeat_moves_while_a_stage_holds_its_loop(cli, world, monkeypatch):
    """A stage step that computes without yielding (compose's planning over a large world)
    keeps the stage's event loop busy; the heartbeat still beats meanwhile."""
    from copal_tui.pipeline import compose

    monkeypatch.setattr(runs, "HEARTBEAT_EVERY", 0.05)
    beats: set[str] = set()
    real_plan = compose.plan

    def slow_plan(run):
        # Holds the loop (no await) while it watches the run row: until three heartbeats were
        # seen (a few tenths of a second when the run beats), or for BLOCKED seconds.
        end = time.monotonic() + BLOCKED
        while len(beats) < 3 and time.monotonic() < end:
            beats.update(r["heartbeat_at"] for r in query_rows(
                world, "SELECT heartbeat_at FROM runs WHERE id = ?", (run.run_id,)))
            time.sleep(0.01)
        return real_plan(run)

    monkeypatch.setattr(compose, "plan", slow_plan)
    [done] = run_stages(world, ["compose"], Options(generator="offline/heuristic"))
    assert done.status == "done"
    assert len(beats) >= 3, beats
