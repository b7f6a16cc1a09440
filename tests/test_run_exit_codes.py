"""`copal run` through the CLI: exit codes, a killed run's row, and two identical runs at once.

Exit 0 only when every unit is done, 3 when units failed (recorded; a re-run retries them), 2 for
bad input. A run killed with SIGKILL keeps the calls it logged in its row and shows as
interrupted; two identical runs never both do the stage (the second waits, then finds nothing
left), so neither fails and no row is written twice.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from copal_tui.commands.run_cmds import EXIT_UNITS_FAILED
from tests.http_stub_support import JsonHandler, serve_http
from tests.stub_server import Stub, serve

WORLD = "meridian-bank"
SECRET = "sk-exit-codes-7"
BOT = "offline/comply-all"
DEADLINE = 120.0  # bounds every polling loop; never reached when things work


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COPAL_TEST_KEY", SECRET)
    s = Stub()
    with serve(s) as url:
        yield s, url


def models_file(path: Path, url: str) -> Path:
    # No retries: a failed unit is one logged call and no backoff wait.
    path.write_text(f"stub-bot:\n  model: openai/stub-bot\n  api_base: {url}\n"
                    "  api_key_env: COPAL_TEST_KEY\n  timeout: 5\n  max_retries: 0\n",
                    encoding="utf-8")
    return path


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


def q(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def queries(db: Path) -> list[str]:
    return [r[0] for r in q(db, "SELECT query FROM items WHERE world_id = ? ORDER BY id",
                            (WORLD,))]


def respond(cli, models: Path, *extra: str):
    return cli("run", "respond", "--world", WORLD, "--model", "stub-bot", "--models-file",
               str(models), "--concurrency", "2", *extra)


def stub_responses(db: Path) -> tuple[int, int, int]:
    """(rows, distinct (item, model, variant), rows without a failure) of stub-bot."""
    [(n, distinct, ok)] = q(db, "SELECT COUNT(*), COUNT(DISTINCT item_id || model || variant), "
                                "SUM(failure IS NULL) FROM responses WHERE model = 'stub-bot'")
    return n, distinct, ok or 0


def copal(db: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen([sys.executable, "-m", "copal_tui", "--db", str(db), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for(db: Path, sql: str, at_least: int) -> int:
    """Poll the store until `sql` counts at least `at_least` (bounded by DEADLINE)."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            n = q(db, sql)[0][0]
        except sqlite3.OperationalError:  # busy for a moment: ask again
            n = 0
        if n >= at_least:
            return int(n)
        time.sleep(0.05)
    raise AssertionError(f"store never showed {at_least} for {sql}")


# ------------------------------------------------------------------ exit codes


def test_every_unit_failing_exits_3_and_a_fixed_rerun_exits_0(cli, world, stub, tmp_path):
    s, url = stub
    dead = models_file(tmp_path / "dead.yaml", closed_port_url())
    result = respond(cli, dead)
    assert result.exit_code == EXIT_UNITS_FAILED != 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert "12 unit(s) failed" in last and "re-run" in last
    assert stub_responses(world) == (12, 12, 0)  # every failure recorded, one row each
    [(status, calls, failures)] = q(world, "SELECT status, calls, failures FROM runs")
    assert (status, calls, failures) == ("done", 12, 12)

    fixed = respond(cli, models_file(tmp_path / "ok.yaml", url))
    assert fixed.exit_code == 0, fixed.output
    assert stub_responses(world) == (12, 12, 12)
    assert s.calls == 12  # exactly the failed units were asked again


def test_provider_500_on_every_unit_exits_3(cli, world, stub, tmp_path):
    s, url = stub
    s.broken.update(queries(world))
    result = respond(cli, models_file(tmp_path / "m.yaml", url))
    assert result.exit_code == EXIT_UNITS_FAILED, result.output
    assert stub_responses(world) == (12, 12, 0)
    assert s.calls == 12


def test_some_failing_exits_3_none_failing_exits_0(cli, world, stub, tmp_path):
    s, url = stub
    models = models_file(tmp_path / "m.yaml", url)
    s.broken.update(queries(world)[:3])
    some = respond(cli, models)
    assert some.exit_code == EXIT_UNITS_FAILED, some.output
    assert some.output.strip().splitlines()[-1].startswith("3 unit(s) failed")
    assert stub_responses(world) == (12, 12, 9)
    s.broken.clear()
    again = respond(cli, models)
    assert again.exit_code == 0, again.output
    assert "failed" not in again.output.strip().splitlines()[-1]
    assert stub_responses(world) == (12, 12, 12)


def test_offline_stages_without_failures_exit_0(cli, world):
    result = cli("run", "respond", "judge", "--world", WORLD, "--model", BOT, "--judge",
                 "offline/judge")
    assert result.exit_code == 0, result.output
    assert [r[0] for r in q(world, "SELECT status FROM runs")] == ["done", "done"]


@pytest.mark.parametrize("args", [
    ("run", "respond", "--world", WORLD),                        # no --model
    ("run", "judge", "--world", WORLD, "--all", "--judge", "offline/judge"),
    ("run", "nope"),
])
def test_bad_input_exits_2(cli, world, args):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert q(world, "SELECT COUNT(*) FROM runs") == [(0,)]


class RefusesTheKey(JsonHandler):
    """A provider that refuses every request's key (HTTP 401), counting them."""

    calls = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        type(self).calls += 1
        self.send_json(401, {"error": {"message": "Incorrect API key provided",
                                       "type": "invalid_request_error"}})


def test_a_refused_key_stops_the_run_reporting_its_failed_units(world, tmp_path, monkeypatch):
    monkeypatch.setenv("COPAL_TEST_KEY", SECRET)
    with serve_http(RefusesTheKey) as url:
        proc = copal(world, "run", "respond", "--world", WORLD, "--model", "stub-bot",
                     "--models-file", str(models_file(tmp_path / "m.yaml", url)),
                     "--concurrency", "2")
        out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 1, out + err
    [line] = [x for x in err.splitlines() if x.strip()]  # one line: no warning, no traceback
    assert line.startswith("copal: error: model 'stub-bot': ") and "401" in line, err
    [(status, calls, failures, manifest)] = q(world, "SELECT status, calls, failures, manifest "
                                                     "FROM runs")
    assert status == "failed"
    # No request after the provider refused the key: at most the two already under way.
    assert 1 <= calls == RefusesTheKey.calls <= 2
    # Each unit under way failed, and says why: the run does not report `failures 0`.
    assert failures >= calls
    reasons = [e["reason"] for e in json.loads(manifest)["errors"]]
    assert sum("401" in r for r in reasons) >= failures
    assert f"failures {failures} " in out


# ------------------------------------------------------------------ a killed run


def test_killed_run_shows_its_calls_and_is_not_finished(cli, world, stub, tmp_path):
    s, url = stub
    s.latency = 0.5  # slow enough that the run is still working when it is killed
    models = models_file(tmp_path / "m.yaml", url)
    proc = copal(world, "run", "respond", "--world", WORLD, "--model", "stub-bot",
                 "--models-file", str(models), "--concurrency", "1")
    try:
        wait_for(world, "SELECT COUNT(*) FROM llm_calls", 2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    [(run_id, logged)] = q(world, "SELECT run_id, COUNT(*) FROM llm_calls GROUP BY run_id")
    assert logged < 12  # killed mid-way, not after the end

    listed = cli("runs", "--json")
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert row["id"] == run_id
    assert row["status"] == "interrupted" and row["finished_at"]
    assert row["calls"] == logged > 0

    # The dead run holds nothing: a re-run finishes the stage without duplicates.
    again = respond(cli, models)
    assert again.exit_code == 0, again.output
    assert stub_responses(world) == (12, 12, 12)


# ------------------------------------------------------------------ two identical runs


def _no_traceback(*stderrs: str) -> None:
    for err in stderrs:
        assert "Traceback" not in err and "IntegrityError" not in err, err


def test_two_identical_runs_started_together(world):
    a = copal(world, "run", "respond", "--model", BOT, "--all")
    b = copal(world, "run", "respond", "--model", BOT, "--all")
    out_a, err_a = a.communicate(timeout=DEADLINE)
    out_b, err_b = b.communicate(timeout=DEADLINE)
    assert (a.returncode, b.returncode) == (0, 0), err_a + err_b
    _no_traceback(err_a, err_b)
    for out in (out_a, out_b):
        assert out.strip().splitlines()[-1].startswith("respond: done, "), out
    [(items,)] = q(world, "SELECT COUNT(*) FROM items i LEFT JOIN items p ON p.id = "
                          "i.parent_item_id WHERE i.selected = 1 OR p.selected = 1")
    [(n, distinct)] = q(world, "SELECT COUNT(*), COUNT(DISTINCT item_id || variant) "
                               "FROM responses WHERE model = ?", (BOT,))
    assert n == distinct == items > 0
    runs = q(world, "SELECT started_at, finished_at, calls, status FROM runs ORDER BY "
                    "started_at")
    assert [r[3] for r in runs] == ["done", "done"]
    assert runs[1][0] >= runs[0][1]  # the stage was never done by both at once
    assert sum(r[2] for r in runs) == items  # every unit answered once, by one of them


def test_second_run_waits_for_the_first_then_does_nothing(cli, world, stub, tmp_path):
    s, url = stub
    s.latency = 2.0  # the first run holds the stage until the second is seen waiting
    models = models_file(tmp_path / "m.yaml", url)
    args = ("run", "respond", "--world", WORLD, "--model", "stub-bot", "--models-file",
            str(models), "--concurrency", "1")
    first = copal(world, *args)
    try:
        wait_for(world, "SELECT COUNT(*) FROM runs WHERE status = 'running'", 1)
        second = copal(world, *args)
        assert second.stderr is not None
        said = second.stderr.readline()  # blocks until the second says something (or ends)
    finally:
        s.latency = 0.0  # let the first finish quickly
    out_1, err_1 = first.communicate(timeout=DEADLINE)
    out_2, err_2 = second.communicate(timeout=DEADLINE)
    assert (first.returncode, second.returncode) == (0, 0), err_1 + err_2
    _no_traceback(err_1, err_2)
    assert said.startswith(f"copal: respond: another copal run is doing this stage (pid "
                           f"{first.pid}, started ") and said.rstrip().endswith("waiting")
    assert "12/12 units" in out_1
    assert "0/0 units" in out_2 and "0 calls" in out_2
    assert stub_responses(world) == (12, 12, 12)
    assert s.calls == 12
