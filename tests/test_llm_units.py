"""Pure pieces of the LLM layer: retry decisions, Retry-After, backoff, JSON extraction, keys."""

from __future__ import annotations

import random
from email.utils import formatdate

import httpx
import pytest

from copal_tui.domain.outputs import CompositionOut
from copal_tui.llm import parsing
from copal_tui.llm.models import ModelSpec
from copal_tui.llm.request import public_url, request_hash, request_payload, scrub
from copal_tui.llm.retry import backoff_delay, is_retryable, parse_retry_after, retry_after


class StatusError(Exception):
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"status {status}")
        self.status_code = status
        self.response = httpx.Response(status, headers=headers or {})


@pytest.mark.parametrize("exc, expected", [
    (StatusError(429), True), (StatusError(500), True), (StatusError(503), True),
    (StatusError(408), True), (StatusError(400), False), (StatusError(401), False),
    (StatusError(404), False), (TimeoutError(), True), (ConnectionResetError(), True),
    (ValueError("x"), False),
])
def test_is_retryable(exc, expected):
    assert is_retryable(exc) is expected


def test_retry_after_forms():
    assert retry_after(StatusError(429, {"Retry-After": "2.5"})) == 2.5
    assert retry_after(StatusError(429, {"retry-after-ms": "1500"})) == 1.5
    assert retry_after(StatusError(429)) is None
    assert parse_retry_after(formatdate(1000.0 + 30, usegmt=True), now=1000.0) == 30
    assert parse_retry_after("garbage") is None
    assert parse_retry_after("-3") == 0


def test_backoff_is_full_jitter_and_capped():
    rng = random.Random(1)
    delays = [backoff_delay(4, 1.0, 5.0, rng) for _ in range(500)]
    assert 0 <= min(delays) < 0.5 and 4.5 < max(delays) <= 5.0  # uniform on [0, min(cap, 8)]
    assert all(backoff_delay(1, 0.1, 30, rng) <= 0.1 for _ in range(100))


def test_extract_json_tolerates_fences_and_prose():
    assert parsing.extract_json('Sure!\n```json\n{"a": 1}\n```\nDone.') == {"a": 1}
    assert parsing.extract_json('Here: {"a": {"b": 2}} ok') == {"a": {"b": 2}}
    with pytest.raises(parsing.OutputProblem, match="cut off"):
        parsing.extract_json('{"a": [1, 2')
    with pytest.raises(parsing.OutputProblem, match="empty"):
        parsing.extract_json("  ")
    with pytest.raises(parsing.OutputProblem, match="not valid JSON"):
        parsing.extract_json("no json here")


def test_validate_names_the_problem():
    assert parsing.validate('{"accept": true, "reason": "r", "extra": 1}', CompositionOut).accept
    with pytest.raises(parsing.OutputProblem, match="reason"):
        parsing.validate('{"accept": true}', CompositionOut)
    with pytest.raises(parsing.OutputProblem, match="not an object"):
        parsing.validate("[1, 2]", CompositionOut)


def test_repair_messages():
    msgs = [{"role": "user", "content": "q"}]
    fixed = parsing.repair_messages(msgs, "{bad", "it is not valid JSON")
    assert fixed[1] == {"role": "assistant", "content": "{bad"}
    assert fixed[2]["content"].startswith("Your answer was invalid because it is not valid JSON.")
    assert len(parsing.repair_messages(msgs, "", "empty")) == 2


def test_request_hash_covers_what_changes_the_answer():
    spec = ModelSpec(name="n", model="openai/x", api_base="https://user:tok@host:8443/v1")
    msgs = [{"role": "user", "content": "q"}]
    base = request_payload(spec, msgs, task="t", template_version="v1")
    assert base["api_base"] == "https://host:8443/v1"  # credentials in the URL are dropped
    h = request_hash(base)
    assert h == request_hash(request_payload(spec, list(msgs), task="t", template_version="v1"))
    for changed in (
        request_payload(spec, msgs, task="t", template_version="v2"),
        request_payload(spec, msgs, task="u", template_version="v1"),
        request_payload(spec.model_copy(update={"temperature": 0.5}), msgs, task="t",
                        template_version="v1"),
        request_payload(spec.model_copy(update={"max_tokens": 9}), msgs, task="t",
                        template_version="v1"),
        request_payload(spec, [{"role": "user", "content": "r"}], task="t", template_version="v1"),
    ):
        assert request_hash(changed) != h
    assert public_url(None) is None and public_url("http://h/v1") == "http://h/v1"
    assert scrub("key sk-1 and sk-1", ["sk-1"]) == "key [redacted] and [redacted]"


def test_missing_credentials_is_fatal_not_retried():
    from copal_tui.llm.retry import is_fatal, is_retryable

    class InternalServerError(Exception):
        status_code = 500

    exc = InternalServerError("OpenAIException - Missing credentials. Please pass an `api_key`")
    assert is_fatal(exc) and not is_retryable(exc)
    assert is_retryable(InternalServerError("upstream exploded"))


@pytest.mark.parametrize("url, public", [
    ("https://copal:sk-u-1234567@h:8443/v1", "https://h:8443/v1"),
    ("http://h/key/sk-path-123456/v1", "http://h/key/[redacted]/v1"),
    ("http://h/v1/abcdEFGH1234ijklMNOP5678/x", "http://h/v1/[redacted]/x"),
    ("http://h/v1?key=AIzaSyD-0123456789abcdef&api-version=2024-06-01",
     "http://h/v1?key=[redacted]&api-version=2024-06-01"),
    ("http://h/v1?x=1&Access_Token=short", "http://h/v1?x=1&Access_Token=[redacted]"),
    ("http://h/v1?sk-bare-0123456789", "http://h/v1?[redacted]"),
    ("http://h/v1#token=abc123456", "http://h/v1#token=[redacted]"),
    # What is not a credential stays: model and deployment names, versions, ports.
    ("http://h:8000/openai/deployments/Meta-Llama-3.1-70B-Instruct-Turbo/x?api-version=1",
     "http://h:8000/openai/deployments/Meta-Llama-3.1-70B-Instruct-Turbo/x?api-version=1"),
])
def test_credentials_in_every_part_of_a_url_are_redacted(url, public):
    assert public_url(url) == public
    spec = ModelSpec(name="n", model="openai/x", api_base=url)
    stored = scrub(f"error calling {url}", spec.url_secrets()) or ""
    for part in ("sk-u-1234567", "sk-path-123456", "AIzaSyD-0123456789abcdef", "sk-bare-0123456789",
                 "abc123456", "abcdEFGH1234ijklMNOP5678"):
        assert part not in stored
