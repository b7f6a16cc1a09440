"""Deployed chatbots over HTTP ("http targets"): the models-file fields of one, the request body
rendered from a conversation, the answer read from the response, and one attempt at the endpoint.

Auditors test an organisation's deployed bot, not a raw model. Such a bot has its own system
prompt, so copal sends it only the user's query and, when there is one, the conversation before
it (earlier user/assistant turns; copal's system prompt is dropped).

Body template: any JSON object or array; string values are searched for two placeholders.
- A string that is exactly `"{query}"` or `"{conversation}"` is replaced by a JSON value: the
  query as a JSON string, the conversation as a JSON list of `{"role", "content"}` objects
  (empty when there are no earlier turns).
- A placeholder inside a longer string inserts text: the query text, or the conversation list
  written as compact JSON text.
Keys are never substituted, other braces stay as they are, and substitution is a single pass
(a query that itself contains `{conversation}` is sent verbatim).

Answer path: `$` (optional) then dotted keys and `[index]` steps, e.g. `$.reply.text`,
`choices[0].message.content`, `$.data["key.with.dots"]`; the value found must be a string.

Header values may reference environment variables as `${NAME}`; only the NAME is kept in the
spec, the value is read at call time and scrubbed from everything stored.

The endpoint is called with aiohttp (a declared dependency), one session per attempt: deployed
bots are rate-limited to tens of requests a minute, so the handshake per request is negligible,
and it leaves nothing to close across the per-stage event loops. Redirects are not followed
(headers carrying secrets must not be forwarded to another host).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from copal_tui.llm.results import ProviderAnswer
from copal_tui.llm.urls import http_url_problem

if TYPE_CHECKING:
    from copal_tui.llm.models import ModelSpec

PLACEHOLDER = re.compile(r"\{(query|conversation)\}")
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_STEP = re.compile(r"""\.([^.\[\]"']+)|\[(-?\d+)\]|\[(["'])(.*?)\3\]""")
MAX_ANSWER_BYTES = 4 * 1024 * 1024
EXCERPT = 200

Step = str | int


class HttpAnswerError(ValueError):
    """The endpoint answered, but not with text copal can read (not JSON, path not found).
    Not retried: the same request gets the same kind of answer."""


class HttpStatusError(Exception):
    """A non-2xx answer. `status_code` and `headers` are read by the retry policy (429/5xx are
    retried, Retry-After honoured; 401/403/404 stop the run)."""

    def __init__(self, status: int, reason: str, headers: Mapping[str, str], body: str) -> None:
        super().__init__(f"HTTP {status} {reason}".strip() + (f": {body}" if body else ""))
        self.status_code = status
        self.headers = {k.lower(): v for k, v in headers.items()}


class HttpTarget(BaseModel):
    """The endpoint fields of a `kind: http` models-file entry (limits live on the ModelSpec)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="http(s) address of the bot's API")
    method: Literal["POST", "PUT", "PATCH"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict,
                                    description="values may use ${ENV_VAR}; only names stored")
    body: dict[str, Any] | list[Any] = Field(description="JSON template with {query}")
    answer: str = Field(min_length=1, description="path of the answer text in the response")

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if "${" in value:
            raise ValueError("${VAR} is only expanded in header values: put secrets in headers")
        problem = http_url_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, template in value.items():
            if not HEADER_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a valid header name")
            if "\r" in template or "\n" in template:
                raise ValueError(f"the value of {name} has a line break")
            if "${" in ENV_REF.sub("", template):
                raise ValueError(f"the value of {name} has a malformed ${{...}} reference")
        return value

    @field_validator("body")
    @classmethod
    def _body(cls, value: Any) -> Any:
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a JSON value ({exc})") from None
        if not any("{query}" in s for s in _strings(value)):
            raise ValueError("must use the {query} placeholder in a value (the user's text)")
        return value

    @field_validator("answer")
    @classmethod
    def _answer(cls, value: str) -> str:
        parse_path(value)
        return value

    def env_names(self) -> list[str]:
        """Names of the environment variables the header values read (never their values)."""
        return list(dict.fromkeys(m.group(1) for t in self.headers.values()
                                  for m in ENV_REF.finditer(t)))

    def render_headers(self, env: Mapping[str, str]) -> dict[str, str]:
        return {name: ENV_REF.sub(lambda m: env.get(m.group(1), ""), template)
                for name, template in self.headers.items()}


# ------------------------------------------------------------------ body


def split_messages(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, str]]]:
    """(query, conversation before it): system messages dropped, the last turn is the query."""
    turns = [{"role": str(m["role"]), "content": str(m.get("content") or "")}
             for m in messages if m.get("role") != "system"]
    if not turns or turns[-1]["role"] != "user":
        raise ValueError("a request to an http target must end with the user's query")
    return turns[-1]["content"], turns[:-1]


def render_body(template: Any, messages: list[dict[str, Any]]) -> Any:
    """The template with its placeholders filled (see the module docstring)."""
    query, conversation = split_messages(messages)
    values: dict[str, Any] = {"query": query, "conversation": conversation}

    def text(name: str) -> str:
        value = values[name]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            whole = PLACEHOLDER.fullmatch(node)
            if whole:
                return json.loads(json.dumps(values[whole.group(1)]))  # a fresh copy
            return PLACEHOLDER.sub(lambda m: text(m.group(1)), node)
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        return node

    return fill(template)


def _strings(node: Any) -> list[str]:
    """Every string value of a JSON template (keys are not substituted, so not listed)."""
    if isinstance(node, str):
        return [node]
    items = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [s for item in items for s in _strings(item)]


def uses_conversation(template: Any) -> bool:
    return any("{conversation}" in s for s in _strings(template))


# ------------------------------------------------------------------ answer path


def parse_path(path: str) -> tuple[Step, ...]:
    """`$.a.b[0]["c.d"]` -> ("a", "b", 0, "c.d"); ValueError naming where it cannot read."""
    rest = path.strip()
    if rest.startswith("$"):
        rest = rest[1:]
    elif rest and rest[0] not in ".[":
        rest = "." + rest  # `reply.text` is `$.reply.text`
    steps: list[Step] = []
    pos = 0
    while pos < len(rest):
        m = _STEP.match(rest, pos)
        if m is None:
            raise ValueError(f"cannot read {rest[pos:]!r} in {path!r} (use dotted keys and "
                             "[index], e.g. $.reply.text or choices[0].text)")
        key, index, _, quoted = m.groups()
        steps.append(int(index) if index is not None else key if key is not None else quoted)
        pos = m.end()
    return tuple(steps)


def _kind(node: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(node), "a number")


def extract(data: Any, path: str) -> str:
    """The string at `path` in `data`; HttpAnswerError saying where the path stopped."""
    node, where = data, "$"
    for step in parse_path(path):
        if isinstance(step, int):
            if not isinstance(node, list):
                raise HttpAnswerError(f"answer path {path}: {where} is {_kind(node)}, not a list")
            if not -len(node) <= step < len(node):
                raise HttpAnswerError(f"answer path {path}: {where} has {len(node)} item(s), "
                                      f"no [{step}]")
            node, where = node[step], f"{where}[{step}]"
        else:
            if not isinstance(node, dict):
                raise HttpAnswerError(f"answer path {path}: {where} is {_kind(node)}, "
                                      "not an object")
            if step not in node:
                keys = ", ".join(repr(k)[:40] for k in list(node)[:10]) or "none"
                raise HttpAnswerError(f"answer path {path}: no key {step!r} at {where} "
                                      f"(keys: {keys})")
            node, where = node[step], f"{where}.{step}"
    if not isinstance(node, str):
        raise HttpAnswerError(f"answer path {path}: {where} is {_kind(node)}, not text")
    return node


# ------------------------------------------------------------------ the call


def variant_problem(spec: ModelSpec, variant: str) -> str | None:
    """Why a COMPASS target variant cannot be sent to this target (None: it can)."""
    if spec.http is None:
        return None
    if variant == "explicit-refusal":
        return (f"{spec.name!r} is an http target: the explicit-refusal variant changes the "
                "system prompt, and a deployed bot keeps its own")
    if variant == "few-shot" and not uses_conversation(spec.http.body):
        return (f"{spec.name!r} is an http target whose body does not use {{conversation}}: "
                "the few-shot demonstrations would not be sent")
    return None


def _excerpt(raw: bytes) -> str:
    text = raw[:EXCERPT * 4].decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "..."


async def acall(spec: ModelSpec, messages: list[dict[str, Any]]) -> ProviderAnswer:
    """One attempt at the endpoint; raises HttpStatusError, HttpAnswerError or aiohttp's and
    asyncio's own errors (connection, timeout), which the client's retry policy sorts."""
    import aiohttp

    target = spec.http
    if target is None:
        raise ValueError(f"{spec.name!r} is not an http target")
    data = json.dumps(render_body(target.body, messages), ensure_ascii=False).encode("utf-8")
    headers = target.render_headers(os.environ)  # set: the client checked spec.secrets()
    if not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    # trust_env: proxy settings from the environment apply, as they do to model calls.
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=spec.timeout),
                                     trust_env=True) as session, \
            session.request(target.method, target.url, data=data, headers=headers,
                            allow_redirects=False) as resp:
        raw = await _read(resp)
        status, reason, ctype = resp.status, resp.reason or "", resp.content_type
        resp_headers = dict(resp.headers)
    if not 200 <= status < 300:
        raise HttpStatusError(status, reason, resp_headers, _excerpt(raw))
    try:
        body = json.loads(raw)
    except ValueError:
        raise HttpAnswerError(f"the answer is not JSON (HTTP {status}, "
                              f"{ctype or 'no content type'}): {_excerpt(raw)}") from None
    return ProviderAnswer(text=extract(body, target.answer), finish_reason=None,
                          prompt_tokens=None, completion_tokens=None,
                          cost=None)  # the organisation's bill, unknown to copal


async def _read(resp: Any) -> bytes:
    chunks, size = [], 0
    async for chunk in resp.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise HttpAnswerError(f"the answer is larger than {MAX_ANSWER_BYTES >> 20} MiB")
        chunks.append(chunk)
    return b"".join(chunks)
