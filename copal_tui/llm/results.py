"""What a model call gives back: a provider's raw answer (ProviderAnswer, from litellm or an http
target), a Completion, a validated Structured output, or an LLMError."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

@dataclass(frozen=True)
class ProviderAnswer:
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None


class LLMError(Exception):
    """A request that produced no usable answer. `fatal` means every request will fail the same
    way (bad key, unknown model): stop the run instead of failing item after item."""

    def __init__(self, reason: str, *, attempts: int, status: int | None = None,
                 raw: str | None = None, empty: bool = False, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts
        self.status = status
        self.raw = raw
        self.empty = empty
        self.fatal = fatal


@dataclass(frozen=True)
class Completion:
    text: str
    cached: bool
    cost: float | None  # None: the provider's price is unknown
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    attempts: int  # provider attempts made for this request (0 when cached)
    finish_reason: str | None = None
    key: str = ""  # the request hash (cache key)


@dataclass(frozen=True)
class Structured(Generic[T]):
    value: T | None
    raw: str | None  # the last answer's text (kept for the failure record)
    reason: str | None  # why there is no value
    cached: bool  # every request was answered from the cache
    calls: int  # requests made: 1, or 2 with the repair round
    attempts: int = 0  # provider attempts over all requests
    cost: float = 0.0
    # The first answer's text when the repair round was used ("" for an empty answer; None
    # when the first answer was valid): what a reference parser without a repair round would
    # have scored.
    first_raw: str | None = None
    # No value because the model's answers (after the repair round) were invalid, not because
    # a call failed: the model did answer.
    invalid: bool = False

    @property
    def ok(self) -> bool:
        return self.value is not None
