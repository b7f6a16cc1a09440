"""Reading a finished batch's output and error files: one answer (or error) per request line,
with its tokens and its cost at the batch price.

The line layouts are litellm's (`litellm.batches.batch_utils`): OpenAI-shaped lines carry
`response.status_code` and a chat-completion `response.body`; Anthropic's carry
`result.message`; Bedrock's `modelOutput`. The price is litellm's `batch_cost_calculator`: the
model map's batch rates (`input_cost_per_token_batches`, ...) or, where the map has none, half
the live rates; a model the map does not know has no price (None, as for a live call).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from copal_tui.llm import provider
from copal_tui.llm.models import ModelSpec


@dataclass(frozen=True)
class BatchAnswer:
    text: str
    error: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None


def read_lines(content: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (a malformed line is skipped: its request goes live)."""
    out = []
    for raw in content.splitlines():
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def answer_of(line: Mapping[str, Any], prov: str, spec: ModelSpec) -> BatchAnswer:
    # litellm's own private helpers, used on purpose: they are how litellm reads each
    # provider's output-line layout (OpenAI, Anthropic, Bedrock), litellm exposes no public
    # function per line, and the exact pin of litellm in pyproject.toml keeps them from
    # changing under us. Imported here for start-up speed: litellm is slow to load.
    from litellm.batches.batch_utils import (
        _batch_response_was_successful,
        _get_response_from_batch_job_output_file,
    )

    body: dict[str, Any] = dict(_get_response_from_batch_job_output_file(line, prov))
    if not _batch_response_was_successful(line, prov):
        return BatchAnswer("", _error_of(line, body), None, None, None, None)
    text, finish = _text_of(body)
    usage = body.get("usage") or {}
    prompt = _int(usage.get("prompt_tokens", usage.get("input_tokens")))
    completion = _int(usage.get("completion_tokens", usage.get("output_tokens")))
    return BatchAnswer(text, None, finish, prompt, completion,
                       batch_cost(spec, prompt, completion))


def batch_cost(spec: ModelSpec, prompt: int | None, completion: int | None) -> float | None:
    """The batch price of one answer; None when the model has no price in litellm's map."""
    if prompt is None and completion is None:
        return None
    litellm = provider.get_litellm()
    from litellm.cost_calculator import batch_cost_calculator

    try:
        litellm.get_model_info(model=spec.model)
    except Exception:  # noqa: BLE001 - not in the map: unknown, not free
        return None
    usage = litellm.Usage(prompt_tokens=prompt or 0, completion_tokens=completion or 0,
                          total_tokens=(prompt or 0) + (completion or 0))
    try:
        input_cost, output_cost = batch_cost_calculator(usage=usage, model=spec.model)
    except Exception:  # noqa: BLE001 - a pricing problem leaves the price unknown
        return None
    return float(input_cost) + float(output_cost)


def _text_of(body: Mapping[str, Any]) -> tuple[str, str | None]:
    choices = body.get("choices")
    if isinstance(choices, list) and choices:  # a chat completion
        first = choices[0] or {}
        message = first.get("message") or {}
        return str(message.get("content") or ""), first.get("finish_reason")
    content = body.get("content")  # an Anthropic message
    if isinstance(content, list):
        text = "".join(str(b.get("text") or "") for b in content
                       if isinstance(b, dict) and b.get("type") == "text")
        return text, body.get("stop_reason")
    return "", None


def _error_of(line: Mapping[str, Any], body: Mapping[str, Any]) -> str:
    for candidate in (line.get("error"), body.get("error"),
                      (line.get("result") or {}).get("error")):
        if isinstance(candidate, dict):
            message = candidate.get("message") or candidate.get("type")
            if message:
                return f"batch: {str(message)[:300]}"
        elif candidate:
            return f"batch: {str(candidate)[:300]}"
    status = (line.get("response") or {}).get("status_code")
    return f"batch: the provider answered this request with status {status}"


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None
