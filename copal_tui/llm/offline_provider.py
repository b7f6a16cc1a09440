"""The `offline` litellm custom provider: serves `offline/<name>` models from the offline engine.

Registering the engine as a litellm provider (instead of short-cutting it in the client) keeps
one code path: offline calls are cached, logged and retried exactly like real ones. The engine
(`copal_tui.offline.engine.answer(name, messages) -> str`) never imports litellm; only this
adapter does, and only when the first call is made.
"""

from __future__ import annotations

import importlib
from typing import Any

PROVIDER = "offline"
ENGINE_MODULE = "copal_tui.offline.engine"


def engine_answer(name: str, messages: list[dict[str, Any]]) -> str:
    # Looked up at call time so tests can substitute the engine module (and so the engine is
    # imported only when an offline model is actually used).
    engine = importlib.import_module(ENGINE_MODULE)
    answer = engine.answer(name, messages)
    if not isinstance(answer, str):
        raise TypeError(f"engine returned {type(answer).__name__}, expected str")
    return answer


def make_handler() -> Any:
    """Build the CustomLLM instance (the class derives from litellm's, so it is built lazily)."""
    from litellm import CustomLLM
    from litellm.llms.custom_llm import CustomLLMError
    from litellm.types.utils import Usage

    class OfflineLLM(CustomLLM):
        def _answer(self, model: str, messages: list[dict[str, Any]], model_response: Any) -> Any:
            name = model.split("/", 1)[1] if model.startswith(PROVIDER + "/") else model
            try:
                text = engine_answer(name, messages)
            except ImportError as exc:
                # Every offline call would fail the same way: 404 makes it fatal for the run.
                raise CustomLLMError(
                    status_code=404, message=f"offline engine not available: {exc}"
                ) from exc
            except Exception as exc:
                # A status code makes litellm map this to a 400 (no retry: the engine is
                # deterministic, so a retry fails the same way) instead of a generic
                # connection error carrying a traceback.
                raise CustomLLMError(
                    status_code=400,
                    message=f"offline engine ({name}) failed: {type(exc).__name__}: {exc}",
                ) from exc
            model_response.choices[0].message.content = text
            model_response.choices[0].finish_reason = "stop"
            model_response.model = f"{PROVIDER}/{name}"
            # Not a language model: there are no tokens to count, and no cost.
            model_response.usage = Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0)
            # Stamping the cost spares litellm its price-map search for a model it cannot
            # know (most of its per-call overhead for offline calls).
            model_response._hidden_params["response_cost"] = 0.0
            return model_response

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            return self._answer(model, messages, kwargs["model_response"])

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            return self._answer(model, messages, kwargs["model_response"])

    return OfflineLLM()
