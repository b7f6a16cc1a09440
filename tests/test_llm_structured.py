"""Structured output through litellm's `response_format`, and complete contract marks.

Against the in-process OpenAI-compatible stub of test_llm_http: a model litellm knows to take a
JSON schema gets the output model's schema as `response_format` (and the schema is part of the
cache key); a model it does not know gets the prompt-and-repair path with no `response_format`.
A contract judge that leaves an item unmarked is sent to the repair round, then failed.
"""

from __future__ import annotations

import json

import pytest

from copal_tui.domain.outputs import CompositionOut, complete_marks
from copal_tui.llm.models import ModelSpec
from tests.test_llm_http import GOOD, MESSAGES, client, db, rows, stub  # noqa: F401 - fixtures


async def test_a_schema_capable_model_gets_the_schema_as_response_format(stub, db):  # noqa: F811
    server, url = stub
    server.default = ("ok", GOOD)
    spec = ModelSpec(name="mini", model="openai/gpt-4o-mini", api_base=url)
    async with client(db) as c:
        got = await c.structured(spec, MESSAGES, CompositionOut, task="composition",
                                 template_version="v1")
    assert got.value is not None and got.value.accept is True
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"]["properties"].keys() >= {"accept", "pattern", "reason"}
    logged = json.loads(rows(db)[0]["request"])
    assert logged["response_format"]["json_schema"]["name"] == "CompositionOut"


async def test_an_unknown_model_is_asked_by_prompt_alone(stub, db):  # noqa: F811
    server, url = stub
    server.default = ("ok", GOOD)
    spec = ModelSpec(name="local", model="openai/some-local-model", api_base=url)
    async with client(db) as c:
        got = await c.structured(spec, MESSAGES, CompositionOut, task="composition",
                                 template_version="v1")
    assert got.value is not None
    assert "response_format" not in server.requests[0]
    assert "response_format" not in json.loads(rows(db)[0]["request"])


async def test_an_unmarked_contract_item_is_repaired_then_failed(stub, db):  # noqa: F811
    server, url = stub
    lazy = json.dumps({"marks": [{"id": "R1", "present": True, "evidence": "Here are the facts"}],
                       "rationale": "F1 not mentioned"})
    server.default = ("ok", lazy)
    spec = ModelSpec(name="local", model="openai/some-local-model", api_base=url)
    async with client(db) as c:
        got = await c.structured(spec, MESSAGES, complete_marks(["R1", "F1"]),
                                 task="judge_contract", template_version="v1")
    assert got.value is None and got.calls == 2
    assert "no present/absent mark for F1" in (got.reason or "")
    # The repair message told the judge what was missing.
    assert "F1" in server.requests[1]["messages"][-1]["content"]


async def test_a_repaired_answer_with_every_mark_is_kept(stub, db):  # noqa: F811
    server, url = stub
    lazy = json.dumps({"marks": [{"id": "R1", "present": True, "evidence": "facts"}]})
    full = json.dumps({"marks": [{"id": "R1", "present": True, "evidence": "facts"},
                                 {"id": "F1", "present": False}]})
    server.script = [("ok", lazy), ("ok", full)]
    spec = ModelSpec(name="local", model="openai/some-local-model", api_base=url)
    async with client(db) as c:
        got = await c.structured(spec, MESSAGES, complete_marks(["R1", "F1"]),
                                 task="judge_contract", template_version="v1")
    assert got.value is not None and got.calls == 2
    assert {m.id: m.present for m in got.value.marks} == {"R1": True, "F1": False}


def test_present_without_evidence_is_not_a_mark():
    with pytest.raises(ValueError, match="without an evidence quote"):
        complete_marks(["R1"]).model_validate({"marks": [{"id": "R1", "present": True}]})
