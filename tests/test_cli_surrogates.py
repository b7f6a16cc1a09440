"""An argument that is not UTF-8 (Python hands it over holding lone surrogates) is bad input:
exit 2, one line, nothing written, whatever the command; before, the label app died with a
traceback and other commands with a raw UnicodeEncodeError."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from tests.db_support import query_rows

NOT_UTF8 = "ana\udcff"  # what Python makes of the bytes b"ana\xff" on the command line


@pytest.mark.parametrize("args", [
    ["label", "--annotator", NOT_UTF8],
    ["campaign", "create", NOT_UTF8, "--suite", "copal"],
    ["cases", "--model", NOT_UTF8],
])
def test_an_argument_that_is_not_utf8_is_refused_before_anything_runs(tmp_path: Path, args):
    db = tmp_path / "s.db"
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert "not UTF-8" in line and "U+DCFF" in line
    assert query_rows(db, "SELECT COUNT(*) FROM campaigns")[0][0] == 0
    assert query_rows(db, "SELECT COUNT(*) FROM annotations")[0][0] == 0
