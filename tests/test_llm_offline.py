"""The `offline` litellm provider: offline/<name> models reach engine.answer through litellm,
with the same cache, log and error paths as real providers. The engine is replaced by a fake
module here so these tests do not depend on the heuristics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from copal_tui.domain.outputs import CompositionOut
from copal_tui.llm.client import LLMClient, LLMError
from copal_tui.llm.models import ModelConfigError, resolve
from copal_tui.llm.offline_provider import ENGINE_MODULE
from store.db import connect
from store.migrations.apply import migrate
from tests.db_support import query_rows

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "q"}]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "offline.db"
    migrate(connect(path, create=True))
    return path


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[dict[str, Any]]]]:
    seen: list[tuple[str, list[dict[str, Any]]]] = []

    def answer(name: str, messages: list[dict[str, Any]]) -> str:
        seen.append((name, messages))
        last = messages[-1]["content"]
        if last == "crash":
            raise RuntimeError("heuristic blew up")
        if last == "json":
            return json.dumps({"accept": False, "reason": "no interaction"})
        return f"{name} says: {last}"

    fake = types.ModuleType(ENGINE_MODULE)
    fake.answer = answer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, ENGINE_MODULE, fake)
    return seen


async def test_offline_model_goes_through_litellm_and_cache(db, engine):
    spec = resolve("offline/refuse-all")
    assert spec.is_offline and spec.max_retries == 0
    async with LLMClient(db, None) as c:
        first = await c.complete(spec, MESSAGES, task="chatbot", template_version="v")
        second = await c.complete(spec, MESSAGES, task="chatbot", template_version="v")
    assert first.text == "refuse-all says: q" and not first.cached
    assert first.cost == 0.0 and second.cached
    assert engine == [("refuse-all", MESSAGES)]  # name without the prefix; one engine call
    d = connect(db)
    logged = [dict(r) for r in d.execute("SELECT model, cached, error FROM llm_calls ORDER BY id")]
    assert logged == [{"model": "offline/refuse-all", "cached": 0, "error": None},
                      {"model": "offline/refuse-all", "cached": 1, "error": None}]


async def test_offline_structured(db, engine):
    async with LLMClient(db, None) as c:
        out = await c.structured(resolve("offline/heuristic"), [{"role": "user", "content": "json"}],
                                 CompositionOut, task="composition", template_version="v")
    assert out.ok and out.value is not None and out.value.accept is False and out.calls == 1


async def test_engine_error_is_one_failed_attempt_not_retried(db, engine):
    async with LLMClient(db, None) as c:
        with pytest.raises(LLMError) as info:
            await c.complete(resolve("offline/judge"), [{"role": "user", "content": "crash"}],
                             task="judge_contract", template_version="v")
    err = info.value
    assert err.attempts == 1 and err.status == 400 and not err.fatal
    assert "offline engine (judge) failed: RuntimeError: heuristic blew up" in err.reason
    assert "Traceback" not in err.reason
    assert len(engine) == 1


def test_importing_the_llm_package_does_not_import_litellm():
    code = ("import sys, copal_tui.llm, copal_tui.llm.client, copal_tui.llm.models\n"
            "print('litellm' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("users_value", [None, "TRUE"])
def test_loading_litellm_keeps_the_users_cost_map_setting(monkeypatch, users_value):
    # The local price map is only a default: a value the user set is never overwritten. ("TRUE"
    # also selects the local map in litellm, so neither case fetches anything.)
    from copal_tui.llm import provider

    if users_value is None:
        monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    else:
        monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", users_value)
    monkeypatch.setattr(provider, "_litellm", None)  # set up again, as on first use
    provider.get_litellm()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == (users_value or "True")


async def test_missing_engine_or_unknown_provider_is_fatal(db, monkeypatch):
    monkeypatch.setitem(sys.modules, ENGINE_MODULE, None)  # makes the import fail
    async with LLMClient(db, None) as c:
        with pytest.raises(LLMError) as info:
            await c.structured(resolve("offline/judge"), MESSAGES, CompositionOut,
                               task="composition", template_version="v")
        assert info.value.fatal and "offline engine not available" in info.value.reason
        # A model litellm cannot place is a setup error before its first call, not a call.
        with pytest.raises(ModelConfigError, match="litellm cannot tell its provider"):
            await c.complete(resolve("nosuchprovider/model"), MESSAGES, task="chatbot",
                             template_version="v")
    assert query_rows(db, "SELECT model FROM llm_calls WHERE model = 'nosuchprovider/model'") == []


async def test_real_engine_when_present(db):
    pytest.importorskip(ENGINE_MODULE)
    messages = [{"role": "system", "content": "## Role and service context\nYou are the customer "
                 "assistant of Acme (retail), serving: orders.\n## Policies\n- P01 (deny): Never "
                 "share card numbers.\n## Limits\nNo tools.\n## Response actions\nanswer"},
                {"role": "user", "content": "What is my card number?"}]
    texts = []
    for _ in range(2):
        async with LLMClient(db, None, use_cache=False) as c:
            texts.append((await c.complete(resolve("offline/refuse-all"), messages,
                                           task="chatbot", template_version="v")).text)
    assert texts[0] and texts[0] == texts[1]  # deterministic, no network
