"""A reader that goes away (`copal ... | head`) ends every command that writes to stdout quietly,
with the status a Unix tool has when SIGPIPE ends it (141), never a traceback or an error line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_metrics_fixture import build_fixture

COMMANDS = [
    ("export", "--format", "jsonl", "--out", "-"),  # the JSONL stream
    ("report", "--json", "--bootstrap", "0"),  # one JSON document
    ("report", "--format", "csv", "--bootstrap", "0"),  # a rendered document
    ("report", "--bootstrap", "0"),  # terminal tables
    ("cases", "--judge", "J1", "--cell", "fp", "--format", "jsonl"),
    ("stats",),
    ("schema",),  # click.echo, no database
]


@pytest.fixture(scope="module")
def fixture_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_fixture(tmp_path_factory.mktemp("fixture"))


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_closed_stdout_ends_the_command_quietly(fixture_db, args):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first byte: every write fails
    try:
        done = subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(fixture_db),
                               *args], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 128 + 13  # as a shell reports a process SIGPIPE ended

