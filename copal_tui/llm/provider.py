"""The one doorway to litellm: lazy import, offline provider registration, one provider call.

litellm is imported here only when the first call is made (it takes seconds, and the TUI must
start without it), with the local cost map chosen first unless the user's environment says
otherwise (else it fetches the map over the network at import) and its debug banners off. Each
call switches litellm's and the OpenAI SDK's own retries off: the client's retry loop is the
only one.

Throughput is bounded by litellm's own CPU cost per call, not by copal's code around it
(benchmarks/bench_pipeline.py prints that ceiling; what was measured and tried is in
BENCHMARKS.md, "Pipeline throughput and litellm").
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from copal_tui.llm.models import ModelSpec
from copal_tui.llm.results import ProviderAnswer

_litellm: Any = None
_lock = threading.Lock()


def loaded() -> bool:
    return _litellm is not None


def get_litellm() -> Any:
    """litellm, imported and set up on first use (safe to call from any thread)."""
    global _litellm
    with _lock:
        if _litellm is not None:
            return _litellm
        # The bundled price map, not a network fetch at import; a value the user set wins
        # (library code never overwrites the user's environment).
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        # Otherwise unexpected errors carry a traceback and a prefilled bug-report URL in their
        # message, which would end up in the call log.
        os.environ.setdefault("LITELLM_DISABLE_BUG_REPORT_LINK", "true")
        import litellm

        litellm.suppress_debug_info = True
        if not os.environ.get("LITELLM_LOG"):
            # Its warnings would land on the terminal (under the TUI); every attempt and error
            # is in llm_calls instead. LITELLM_LOG=... turns them back on for debugging.
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logging.getLogger(name).setLevel(logging.ERROR)
        _register_offline(litellm)
        # The first real call spends most of a second importing litellm's lazy modules; a mock
        # call (no network) pays that here, so it does not eat into the first attempt's timeout.
        litellm.completion(model="openai/copal-warmup", api_key="unused", mock_response="ok",
                           messages=[{"role": "user", "content": "warm up"}])
        _litellm = litellm
        return _litellm


def _register_offline(litellm: Any) -> None:
    from copal_tui.llm.offline_provider import PROVIDER, make_handler

    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": PROVIDER, "custom_handler": make_handler()},
        ]


def supports_schema(spec: ModelSpec) -> bool:
    """Whether litellm reports that `spec`'s model takes a JSON schema as `response_format`
    (its model map; unknown models, local servers and the offline engine say no, and get the
    prompt-and-repair path)."""
    if spec.is_offline:
        return False
    litellm = get_litellm()
    try:
        return bool(litellm.supports_response_schema(model=spec.model))
    except Exception:  # noqa: BLE001 - an unmapped model is simply not known to support it
        return False


def supports_seed(spec: ModelSpec) -> bool:
    """Whether litellm lists `seed` among the parameters `spec`'s provider takes (CompliBench
    sends it where its provider takes one and drops it elsewhere, as this does; litellm would
    refuse the call otherwise)."""
    if spec.is_offline or spec.is_http:
        return False
    litellm = get_litellm()
    try:
        model, name, _key, _base = litellm.get_llm_provider(model=spec.model,
                                                             api_base=spec.api_base)
        params = litellm.get_supported_openai_params(model=model, custom_llm_provider=name)
    except Exception:  # noqa: BLE001 - an unknown provider is not known to take it
        return False
    return "seed" in (params or [])


def supports_reasoning(spec: ModelSpec) -> bool:
    """Whether litellm's model map lists `spec`'s model as taking `reasoning_effort` (unknown
    models, local servers and the offline engine say no: sending it to a model without it
    makes litellm refuse the call)."""
    if spec.is_offline or spec.is_http:
        return False
    litellm = get_litellm()
    try:
        return bool(litellm.supports_reasoning(model=spec.model))
    except Exception:  # noqa: BLE001 - an unmapped model is simply not known to support it
        return False


def request_kwargs(spec: ModelSpec, messages: list[dict[str, Any]],
                   api_key: str | None,
                   response_format: dict[str, Any] | None = None) -> dict[str, Any]:
    """The arguments of one `litellm.acompletion` call for `spec` (also what the throughput
    benchmark sends to measure litellm's own ceiling with exactly copal's requests)."""
    kwargs: dict[str, Any] = {
        "model": spec.model,
        "messages": messages,
        "timeout": spec.timeout,
        "num_retries": 0,
        "max_retries": 0,
    }
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
    if api_key:
        kwargs["api_key"] = api_key
    elif spec.api_base and not spec.is_offline:
        # A local OpenAI-compatible server (vLLM, a stub) needs no key, but the OpenAI client
        # refuses to send a request without one: send a placeholder, never a real key.
        kwargs["api_key"] = "no-key"
    if spec.temperature is not None:
        kwargs["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        kwargs["max_tokens"] = spec.max_tokens
    if spec.reasoning_effort is not None:  # the client clears it where it is not supported
        kwargs["reasoning_effort"] = spec.reasoning_effort
    if response_format is not None:
        kwargs["response_format"] = response_format
    if spec.seed is not None and supports_seed(spec):
        kwargs["seed"] = spec.seed
    return kwargs


async def acall(spec: ModelSpec, messages: list[dict[str, Any]], api_key: str | None,
                response_format: dict[str, Any] | None = None) -> ProviderAnswer:
    """One attempt at the provider; raises whatever litellm raises."""
    litellm = get_litellm()
    response = await litellm.acompletion(**request_kwargs(spec, messages, api_key,
                                                          response_format))
    choice = response.choices[0]
    text = getattr(choice.message, "content", None) or ""
    usage = getattr(response, "usage", None)
    return ProviderAnswer(
        text=text,
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost=0.0 if spec.is_offline else _cost(litellm, response),
    )


def _cost(litellm: Any, response: Any) -> float | None:
    # litellm prices every response itself and stamps the result in _hidden_params (None when
    # the model is not in its price map: unknown, not zero). Pricing it again with
    # completion_cost() is a second pricing pass, a measurable share of the pipeline's CPU
    # (BENCHMARKS.md); it is only the fallback when no stamp is there.
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        stamped = hidden["response_cost"]
        return None if stamped is None else float(stamped)
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:
        return None
