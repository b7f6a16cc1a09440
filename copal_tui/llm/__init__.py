"""Model access: model specs, the LLM client (cache, call log, limits, retries) and the offline
provider. The only package that imports litellm, and only when a call is made."""

from copal_tui.llm.client import Completion, LLMClient, LLMError, Structured
from copal_tui.llm.models import ModelConfigError, ModelSpec, resolve

__all__ = [
    "Completion",
    "LLMClient",
    "LLMError",
    "ModelConfigError",
    "ModelSpec",
    "Structured",
    "resolve",
]
