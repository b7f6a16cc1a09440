"""`copal serve` the command: which URLs it prints for which users, what it binds, and what it
refuses before serving anything. The server never starts here (its `serve` is replaced); the
requests themselves are checked in test_serve_auth.py.
"""

from __future__ import annotations

import shlex
from urllib.parse import parse_qs, urlsplit

import pytest

from copal_tui.serve.auth import Grant
from copal_tui.serve.server import CopalServer


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
