"""`copal serve` hands the same app to textual-serve, bound to localhost only."""

from __future__ import annotations

import textual_serve.server as ts


def test_serve_binds_localhost_and_runs_the_app(cli, initialised, monkeypatch):
    seen = {}

    class FakeServer:
        def __init__(self, command, host="localhost", port=8000, title=None, **kw):
            seen.update(command=command, host=host, port=port)

        def serve(self):
            seen["served"] = True

    monkeypatch.setattr(ts, "Server", FakeServer)
    result = cli("serve", "--port", "8765", "--mode", "label")
    assert result.exit_code == 0, result.output
    assert seen["host"] == "127.0.0.1" and seen["port"] == 8765 and seen["served"]
    assert "copal_tui" in seen["command"] and seen["command"].endswith(" label")
    assert str(initialised) in seen["command"]


def test_serve_refuses_a_missing_database(cli, tmp_path):
    result = cli("serve", db=tmp_path / "none.db")
    assert result.exit_code != 0 and "copal init" in result.stderr
