"""What identifies a model request, and keeping secrets out of what is stored about it.

The cache key is the sha256 of the canonical JSON of (model, endpoint, messages, temperature,
max_tokens, task, template_version, the reasoning effort when one is sent, and the JSON schema
sent as `response_format` when the model takes one): a new template version, sampling setting,
reasoning effort or schema is a new request, and a request sending neither a reasoning effort
nor a schema has neither key in its payload.

A request to an http target (a deployed bot) is what goes on the wire: URL, method, header NAMES
(never values) and the rendered body, plus the answer path (a changed path must not replay text
read with the old one). copal's task and template version are not part of it: the bot never sees
copal's prompts, so a new template version must not ask it again.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from copal_tui.llm.http_target import HttpTarget, render_body
from copal_tui.llm.models import ModelSpec
from copal_tui.llm.urls import REDACTED, public_url
from store.db import dumps


def request_payload(spec: ModelSpec, messages: list[dict[str, Any]], *, task: str,
                    template_version: str,
                    response_format: dict[str, Any] | None = None) -> dict[str, Any]:
    """What identifies a request (hashed for the cache key, stored in the call log). The
    schema and the reasoning effort are part of it only when sent, so a request without them
    keeps its key. `spec` is the spec as sent (`models.for_task`, the effort cleared where
    the model does not take it)."""
    if spec.http is not None:
        return http_payload(spec.http, messages)
    payload: dict[str, Any] = {
        "model": spec.model,
        "api_base": public_url(spec.api_base),
        "messages": messages,
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
        "task": task,
        "template_version": template_version,
    }
    if spec.reasoning_effort is not None:
        payload["reasoning_effort"] = spec.reasoning_effort
    if spec.seed is not None:  # in the key even where it is not sent: attempts stay apart
        payload["seed"] = spec.seed
    if response_format is not None:
        payload["response_format"] = response_format
    return payload


def http_payload(target: HttpTarget, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "http", "url": public_url(target.url), "method": target.method,
            "headers": sorted(target.headers), "body": render_body(target.body, messages),
            "answer": target.answer}


def json_schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-style `response_format` (litellm translates it for other providers). Not
    strict: strict mode rejects the optional fields our output models have."""
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64] or "output"
    return {"type": "json_schema", "json_schema": {"name": safe, "schema": schema,
                                                   "strict": False}}


def request_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(dumps(payload).encode("utf-8")).hexdigest()


def secret_values(spec: ModelSpec) -> list[str]:
    """The key and header variable values, and the credentials in the endpoint's URL, to scrub;
    never raises (a cache hit needs no key, but is scrubbed too)."""
    names = [spec.api_key_env] if spec.api_key_env else []
    names += spec.http.env_names() if spec.http is not None else []
    return [value for name in names if (value := os.environ.get(name))] + spec.url_secrets()


def scrub(text: str | None, secrets: list[str]) -> str | None:
    if text is None:
        return None
    for secret in sorted(filter(None, secrets), key=len, reverse=True):  # a key inside another
        text = text.replace(secret, REDACTED)
    return text


def describe(exc: BaseException, spec: ModelSpec) -> str:
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"timeout after {spec.timeout:g}s"
    return f"{type(exc).__name__}: {exc}"[:4000]
