"""Retry policy pieces for the client's single retry loop: what is retryable, how long to wait.

litellm's and the OpenAI SDK's own retries are switched off at every call, so this is the only
place that decides to try again: on 429, 5xx, timeouts and connection errors, with exponential
backoff and full jitter, or exactly the server's Retry-After when it sends one.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

# Status codes worth another try: request timeout, conflict/too early (transient), rate limit.
_RETRY_STATUS = {408, 409, 425, 429}
# Errors without a status code that still mean "the wire failed, try again".
_RETRY_CLASS_NAMES = {
    "APIConnectionError", "APITimeoutError", "Timeout", "TimeoutException", "TransportError",
    "ConnectError", "ReadTimeout", "RemoteProtocolError", "ServerDisconnectedError",
    "ClientConnectionError",
}
# The request itself or the credentials are wrong: every further item would fail the same way,
# so the run should stop rather than record thousands of failed items.
FATAL_STATUS = {401, 403, 404}


def status_of(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


def is_fatal(exc: BaseException) -> bool:
    """Bad key, unknown model or provider: no request of this model can succeed."""
    if status_of(exc) in FATAL_STATUS:
        return True
    text = str(exc)
    # litellm reports a missing key as a 500 from the client library: not worth retrying.
    return "LLM Provider NOT provided" in text or "Missing credentials" in text


def fatal_hint(status: int | None, *, model: str, key_env: str | None) -> str:
    """What to fix after a fatal answer, by its status ("" when the error says it itself)."""
    where = f"the variable {key_env}" if key_env else "its environment variable"
    if status == 401:
        return f"the provider refused the API key (HTTP 401): check the key in {where}"
    if status == 403:
        return f"the provider refused access (HTTP 403): check the key in {where} and its rights"
    if status == 404:
        return (f"the provider has no model {model!r} at this endpoint (HTTP 404): check the "
                "model string and api_base")
    return ""


def is_retryable(exc: BaseException) -> bool:
    if is_fatal(exc):
        return False
    return _transient(exc)


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    status = status_of(exc)
    if status is not None:
        return status in _RETRY_STATUS or status >= 500
    return any(cls.__name__ in _RETRY_CLASS_NAMES for cls in type(exc).__mro__)


def _headers_of(exc: BaseException) -> list[Mapping[str, str]]:
    # litellm attaches the provider's headers in different places depending on the route:
    # `litellm_response_headers` (mapped exceptions), `headers`, or `response.headers`.
    found = []
    for candidate in (
        getattr(exc, "litellm_response_headers", None),
        getattr(exc, "headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        if candidate is not None and hasattr(candidate, "get"):
            found.append(candidate)
    return found


def retry_after(exc: BaseException, *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), or None."""
    for headers in _headers_of(exc):
        try:
            ms = headers.get("retry-after-ms") or headers.get("Retry-After-Ms")
            if ms is not None:
                return max(0.0, float(ms) / 1000.0)
            value = headers.get("retry-after") or headers.get("Retry-After")
        except Exception:  # exotic header containers; the backoff still applies
            continue
        if value is None:
            continue
        parsed = parse_retry_after(str(value), now=now)
        if parsed is not None:
            return parsed
    return None


def parse_retry_after(value: str, *, now: float | None = None) -> float | None:
    """Retry-After is either delta-seconds or an HTTP date."""
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Full jitter: uniform in [0, min(cap, base * 2**(attempt-1))] (AWS architecture blog)."""
    return rng.uniform(0.0, min(cap, base * (2 ** max(0, attempt - 1))))


class RateLimiter:
    """Spaces request starts at least 60/rpm seconds apart (no bursts: providers count per
    second windows too)."""

    def __init__(self, rpm: float | None) -> None:
        self._interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0

    async def acquire(self) -> None:
        if not self._interval:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        # Reserve the slot before sleeping so concurrent callers queue behind each other.
        slot = max(now, self._next)
        self._next = slot + self._interval
        if slot > now:
            await asyncio.sleep(slot - now)
