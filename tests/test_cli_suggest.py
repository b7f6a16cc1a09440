"""A misspelled command gets the closest command names; the group's `--db` works after the
command name too (one definition, every command); a command's option typed before the command
name is told where it goes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.sample_store_support import copal, ok


def test_a_misspelled_command_is_offered_the_closest(tmp_path):
    # A process of its own: no command is loaded yet (they load when named).
    result = subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(tmp_path / "x.db"),
                             "reprot"], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "Did you mean" in result.stderr and "'report'" in result.stderr
    nested = copal(tmp_path / "x.db", "campaign", "lsit")
    assert nested.exit_code == 2 and "'list'" in nested.stderr


def test_db_after_the_command_name_is_the_database(initialised: Path, tmp_path):
    other = tmp_path / "other.db"
    ok(copal(None, "init", "--db", str(other)))
    assert other.exists()
    # Every command, nested ones too, reads the database named after its name.
    listed = ok(copal(None, "campaign", "list", "--json", "--db", str(initialised)))
    assert json.loads(listed.stdout) == []
    stats = json.loads(ok(copal(None, "stats", "--json", "--db", str(initialised))).stdout)
    assert stats["worlds"] == 0


def test_db_given_twice_with_two_paths_is_refused(initialised: Path, tmp_path):
    result = copal(initialised, "stats", "--db", str(tmp_path / "b.db"))
    assert result.exit_code == 2 and "--db given twice" in result.stderr
    assert not (tmp_path / "b.db").exists()
    same = copal(initialised, "stats", "--json", "--db", str(initialised))
    assert same.exit_code == 0, same.output


def test_an_option_before_the_command_name_is_told_where_it_goes(tmp_path):
    result = copal(tmp_path / "x.db", "--seed", "3", "report")
    assert result.exit_code == 2
    assert "copal report" in result.stderr and "after the command name" in result.stderr
    nested = copal(tmp_path / "x.db", "--suite", "compass", "campaign", "create", "c")
    assert nested.exit_code == 2 and "copal campaign create" in nested.stderr
