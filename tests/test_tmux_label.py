"""`copal label` in a real terminal: tmux runs it on a test database, send-keys labels a few
responses, capture-pane shows them, the session is killed mid-label, and the database holds
every label that was submitted (and nothing that was not).

Skipped only when tmux is missing (CI installs the `tmux` apt package). Waits are bounded polls
of the pane or the database, never fixed sleeps or timing assertions.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable

import pytest

from tests.tui_label_support import build_db, rows

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed (apt package: tmux)")

DEADLINE_S = 60


def _wait(what: str, ready: Callable[[], bool]) -> None:
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if ready():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_label_in_tmux_survives_a_killed_session(tmp_path):
    db = build_db(tmp_path)
    sock = f"copal-test-{uuid.uuid4().hex[:8]}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], check=True, capture_output=True,
                              text=True).stdout

    def pane() -> str:
        return tmux("capture-pane", "-p", "-t", "copal")

    def labels() -> list[dict]:
        return rows(db, "SELECT id, json_extract(payload, '$.observed') AS observed, "
                    "json_extract(payload, '$.error') AS error, content_sha256 FROM "
                    "current_annotations WHERE annotator = 'tmuxer' ORDER BY id")

    command = shlex.join(["env", "COPAL_OVERLAP=3", "COPAL_BLIND=true", sys.executable,
                          "-m", "copal_tui", "--db", str(db), "label", "--annotator", "tmuxer"])
    env = {**os.environ, "TERM": "xterm-256color"}
    subprocess.run(["tmux", "-L", sock, "-f", os.devnull, "new-session", "-d", "-s", "copal",
                    "-x", "80", "-y", "24", command], check=True, env=env)
    try:
        _wait("the queue on screen", lambda: "0/72 labelled" in pane())
        first_screen = pane()
        assert "Query" in first_screen and "Contract" in first_screen

        tmux("send-keys", "-t", "copal", "c")
        _wait("the first label", lambda: len(labels()) == 1)
        _wait("progress 1/72", lambda: "1/72 labelled" in pane())

        tmux("send-keys", "-t", "copal", "1")
        tmux("send-keys", "-t", "copal", "Enter")
        _wait("the second label", lambda: len(labels()) == 2)

        tmux("send-keys", "-t", "copal", "c")
        _wait("the third label", lambda: len(labels()) == 3)
        _wait("progress 3/72", lambda: "3/72 labelled" in pane())
        shown = pane()
        assert "saved e=0 correct" in shown

        # Mark an item on the fourth response but do not submit, then kill the terminal.
        tmux("send-keys", "-t", "copal", "1")
        _wait("the mark on screen", lambda: "[x]" in pane())
        tmux("kill-session", "-t", "copal")
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)

    got = labels()
    assert len(got) == 3
    observed = [json.loads(g["observed"]) for g in got]
    assert len(observed[1]) == 1  # "1" then enter: exactly the first contract item
    assert all(g["error"] in (0, 1) and g["content_sha256"] for g in got)
    assert [g["error"] for g in got][0] == 0 and got[2]["error"] == 0
    events = rows(db, "SELECT action FROM annotations WHERE annotator = 'tmuxer'")
    assert [e["action"] for e in events] == ["label"] * 3  # the unsubmitted mark left no row
    assert rows(db, "PRAGMA integrity_check")[0]["integrity_check"] == "ok"
