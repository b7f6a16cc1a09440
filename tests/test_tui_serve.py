"""`copal serve` the command: which URLs it prints for which users, what it binds, its limits,
and what it refuses before serving anything. The server never serves here (its `serve` is
replaced, or its port is taken); the requests themselves are checked in test_serve_auth.py and
test_serve_limits.py.
"""

from __future__ import annotations

import shlex
import socket
from urllib.parse import parse_qs, urlsplit

import pytest

from copal_tui.serve.auth import Grant
from copal_tui.serve.limits import ServeLimits
from copal_tui.serve.server import CopalServer
from tests.test_import import snapshot


@pytest.fixture
def served(monkeypatch):
    """The CopalServer the command built, instead of serving it."""
    seen: list[CopalServer] = []
    monkeypatch.setattr(CopalServer, "serve", lambda self, debug=False: seen.append(self))
    return seen


def printed(output: str) -> dict[str, str]:
    """name -> token, from the `NAME<TAB>URL` lines."""
    urls = dict(line.split("\t") for line in output.splitlines() if "\t" in line)
    return {name: parse_qs(urlsplit(url).query)["token"][0] for name, url in urls.items()}


def test_label_mode_prints_one_url_per_annotator_bound_to_localhost(cli, initialised, served):
    result = cli("serve", "--port", "8765", "--mode", "label", "--annotator", "ana",
                 "--annotator", "ben")
    assert result.exit_code == 0, result.output
    [server] = served
    assert server.host == "127.0.0.1" and server.port == 8765
    assert all(line.startswith(("ana\thttp://127.0.0.1:8765/?token=",
                                "ben\thttp://127.0.0.1:8765/?token="))
               for line in result.stdout.splitlines())
    tokens = printed(result.stdout)
    assert sorted(tokens) == ["ana", "ben"] and tokens["ana"] != tokens["ben"]
    for name, token in tokens.items():
        grant = server.tokens.check(token)
        assert grant == Grant("label", name)
        args = shlex.split(server.command_for(grant))
        assert args[1:5] == ["-m", "copal_tui", "--db", str(initialised)]
        assert args[5:] == ["label", f"--annotator={name}"]


def test_annotators_file_and_suite(cli, initialised, served, tmp_path):
    names = tmp_path / "team.txt"
    names.write_text("# the Tuesday team\nana\n\n  ben  \n", encoding="utf-8")
    result = cli("serve", "--mode", "label", "--suite", "compass", "--annotators-file",
                 str(names), "--annotator", "cleo")
    assert result.exit_code == 0, result.output
    tokens = printed(result.stdout)
    assert sorted(tokens) == ["ana", "ben", "cleo"]
    command = served[0].command_for(served[0].tokens.check(tokens["ben"]))
    assert shlex.split(command)[-4:] == ["label", "--annotator=ben", "--suite", "compass"]


def test_browse_and_adjudicate_need_a_token_too(cli, initialised, served):
    result = cli("serve", "--mode", "browse")
    assert result.exit_code == 0, result.output
    tokens = printed(result.stdout)
    assert list(tokens) == ["operator"]
    browse = served[-1]
    assert shlex.split(browse.command_for(browse.tokens.check(tokens["operator"])))[-1] == "tui"

    result = cli("serve", "--mode", "adjudicate", "--annotator", "dee")
    assert result.exit_code == 0, result.output
    adjudicate = served[-1]
    grant = adjudicate.tokens.check(printed(result.stdout)["dee"])
    assert shlex.split(adjudicate.command_for(grant))[-2:] == ["adjudicate", "--adjudicator=dee"]

    result = cli("serve", "--mode", "adjudicate")
    assert result.exit_code == 0 and list(printed(result.stdout)) == ["operator"]


@pytest.mark.parametrize("args, message", [
    (["--mode", "label"], "--annotator NAME or --annotators-file"),
    (["--mode", "label", "--annotator", "ana", "--annotator", "ana"], "given twice"),
    (["--mode", "label", "--annotator", "ana\x1b[31m"], "control characters"),
    (["--mode", "label", "--annotator", "  "], "empty"),
    (["--mode", "browse", "--annotator", "ana"], "no annotators"),
    (["--mode", "browse", "--suite", "compass"], "--suite only applies"),
    (["--mode", "browse", "--host", "0.0.0.0"], "--public-url"),
    (["--mode", "browse", "--public-url", "ftp://x"], "not an http(s) URL"),
])
def test_refuses_before_serving(cli, initialised, served, args, message):
    result = cli("serve", *args)
    assert result.exit_code == 2 and message in result.output
    assert served == [] and "token=" not in result.output


def test_another_host_is_explicit_and_origins_follow_the_public_url(cli, initialised, served):
    result = cli("serve", "--mode", "browse", "--host", "0.0.0.0", "--port", "9000",
                 "--public-url", "http://copal.lab.example:9000/")
    assert result.exit_code == 0, result.output
    [server] = served
    assert server.host == "0.0.0.0"
    assert result.stdout.startswith("operator\thttp://copal.lab.example:9000/?token=")
    assert server.origins == {"http://copal.lab.example:9000"}


def test_serve_refuses_a_missing_database(cli, tmp_path, served):
    result = cli("serve", "--mode", "label", "--annotator", "ana", db=tmp_path / "none.db")
    assert result.exit_code != 0 and "copal init" in result.stderr
    assert served == []


def test_the_limits_are_options_with_the_documented_defaults(cli, initialised, served):
    result = cli("serve", "--mode", "browse")
    assert result.exit_code == 0, result.output
    assert served[-1].limits == ServeLimits(sessions_per_token=3, sessions_total=32,
                                            idle_close_s=1800, header_timeout_s=10,
                                            max_connections=256)
    result = cli("serve", "--mode", "browse", "--max-sessions-per-url", "1", "--max-sessions",
                 "5", "--idle-minutes", "1.5", "--header-timeout", "2.5", "--max-connections",
                 "20")
    assert result.exit_code == 0, result.output
    assert served[-1].limits == ServeLimits(sessions_per_token=1, sessions_total=5,
                                            idle_close_s=90, header_timeout_s=2.5,
                                            max_connections=20)


@pytest.mark.parametrize("args, names", [
    (["--max-sessions-per-url", "0"], ["--max-sessions-per-url", "0"]),
    (["--max-sessions", "-3"], ["--max-sessions", "-3"]),
    (["--idle-minutes", "0"], ["--idle-minutes", "0"]),
    (["--idle-minutes", "nan"], ["--idle-minutes", "nan"]),
    (["--idle-minutes", "inf"], ["--idle-minutes", "inf"]),
    (["--header-timeout", "soon"], ["--header-timeout", "soon"]),
    (["--max-connections", "10"], ["--max-connections 10", "--max-sessions 32"]),
    (["--port", "70000"], ["--port", "70000"]),
])
def test_bad_limits_are_refused_before_serving(cli, initialised, served, args, names):
    before = snapshot(initialised)
    result = cli("serve", "--mode", "browse", *args)
    assert result.exit_code == 2, result.output
    # One line names the option, the value and why.
    assert len([x for x in result.stderr.splitlines() if all(n in x for n in names)]) == 1, \
        result.stderr
    assert served == [] and "token=" not in result.output
    assert snapshot(initialised) == before


def test_a_port_in_use_is_one_line_and_exit_2(cli, initialised):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve", "--mode", "browse", "--port", str(port))
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.output
