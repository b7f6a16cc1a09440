"""A model no call can succeed with is refused before any call, through `copal run`: exit 2,
one line naming what to fix, and the database untouched (no run row, no call logged).

An unknown model string (with its close matches), a missing key variable (the provider's own or
the entry's api_key_env), a model in a role it cannot take, and a models-file entry whose
api_base is not an http(s) address (refused alone: the file's other entries still run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.db_support import query_rows
from tests.stub_server import Stub, serve

WORLD = "meridian-bank"


def untouched(db: Path) -> bool:
    [row] = query_rows(db, "SELECT (SELECT COUNT(*) FROM runs) AS runs, "
                           "(SELECT COUNT(*) FROM llm_calls) AS calls")
    return (row["runs"], row["calls"]) == (0, 0)


def error_line(output: str) -> str:
    lines = [x for x in output.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("copal: error:")]
    assert len(errors) == 1, output
    assert not any("Error:" in x and not x.startswith("copal: error:") for x in lines), output
    return errors[0]


def respond(cli, *args: str):
    return cli("run", "respond", "--world", WORLD, *args)


def test_an_unknown_model_exits_2_naming_it_and_its_close_matches(cli, world, tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text("mybot:\n  model: offline/comply-all\n", encoding="utf-8")
    result = respond(cli, "--model", "mybott", "--models-file", str(models))
    assert result.exit_code == 2, result.output
    line = error_line(result.output)
    assert "'mybott'" in line and "provider/model" in line and "close matches: mybot" in line
    assert "BadRequestError" not in line and "LLM Provider NOT provided" not in line
    assert untouched(world)

    typo = respond(cli, "--model", "opnai/gpt-4o-mini")
    assert typo.exit_code == 2, typo.output
    assert "close matches: openai/gpt-4o-mini" in error_line(typo.output)
    assert untouched(world)


def test_a_missing_provider_key_exits_2_naming_the_variable(cli, world, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = respond(cli, "--model", "openai/gpt-4o-mini")
    assert result.exit_code == 2, result.output
    line = error_line(result.output)
    assert "'openai/gpt-4o-mini'" in line and "OPENAI_API_KEY" in line and "api_key_env" in line
    assert "InternalServerError" not in result.output and "RuntimeWarning" not in result.output
    assert untouched(world)


def test_an_entrys_unset_key_variable_exits_2_before_the_run_starts(cli, world, tmp_path,
                                                                    monkeypatch):
    monkeypatch.delenv("COPAL_UNSET_KEY", raising=False)
    models = tmp_path / "models.yaml"
    models.write_text("bot:\n  model: openai/bot\n  api_base: http://127.0.0.1:9/v1\n"
                      "  api_key_env: COPAL_UNSET_KEY\n", encoding="utf-8")
    result = respond(cli, "--model", "bot", "--models-file", str(models))
    assert result.exit_code == 2, result.output
    assert "COPAL_UNSET_KEY is not set" in error_line(result.output)
    assert untouched(world)


def test_every_stage_is_checked_before_the_first_one_runs(cli, world):
    result = cli("run", "respond", "judge", "--world", WORLD, "--model", "offline/comply-all",
                 "--judge", "judgebot")
    assert result.exit_code == 2, result.output
    assert "'judgebot'" in error_line(result.output)
    assert untouched(world)  # respond, which could have run, did not


@pytest.mark.parametrize("args, said", [
    (("run", "respond", "--model", "offline/judge"), "not an offline reference chatbot"),
    (("run", "respond", "--model", "offline/comply-al"), "close match: offline/comply-all"),
    (("run", "judge", "--judge", "offline/comply-all"), "is an offline reference chatbot"),
])
def test_an_offline_model_in_a_role_it_cannot_take_exits_2(cli, world, args, said):
    result = cli(*args, "--world", WORLD)
    assert result.exit_code == 2, result.output
    assert said in error_line(result.output)
    assert untouched(world)


@pytest.mark.parametrize("base", ["file:///etc/passwd", "localhost:8000/v1", "ftp://host/v1"])
def test_an_api_base_that_is_not_http_refuses_its_entry_alone(cli, world, tmp_path, base):
    stub = Stub()
    with serve(stub) as url:
        models = tmp_path / "models.yaml"
        models.write_text(f"bad:\n  model: openai/bad\n  api_base: {base}\n  max_retries: 3\n"
                          f"good:\n  model: openai/good\n  api_base: {url}\n  max_retries: 0\n",
                          encoding="utf-8")
        result = respond(cli, "--model", "bad", "--models-file", str(models))
        assert result.exit_code == 2, result.output
        line = error_line(result.output)
        assert str(models) in line and "entry 'bad'" in line and "api_base" in line
        assert "http:// or https://" in line
        assert untouched(world) and stub.calls == 0

        good = respond(cli, "--model", "good", "--models-file", str(models))
    assert good.exit_code == 0, good.output
    rows = query_rows(world, "SELECT COUNT(*) AS n, SUM(text IS NOT NULL) AS ok FROM responses "
                             "WHERE model = 'good'")
    assert (rows[0]["n"], rows[0]["ok"]) == (12, 12) and stub.calls == 12
