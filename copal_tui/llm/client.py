"""LLMClient: every model call of a run goes through here (cache, call log, limits, retries).

One client per run, used from one event loop; it opens its own SQLite connection, lazily, in
the loop's thread. A request is answered from the cache when an identical one (same model,
endpoint, messages, sampling settings, task and template version) was answered before, so a
re-run costs nothing and a crashed run resumes. Otherwise it goes to the provider under the
model's concurrency cap and rpm limit, with a per-attempt timeout and ONE retry loop (litellm's
retries are off). Every attempt is logged. A model's first call is preceded by
copal_tui.llm.preflight's check (no call is made to a model that cannot answer any), and after
a fatal error (a refused key) its later requests fail at once, unasked. This file owns what is asked and when (cache
lookup, in-flight sharing, limits, retries, the structured repair round); where the answers and
the log rows are kept, buffered and flushed in batches, is copal_tui.llm.call_store's.

API key values are read from the environment at call time and scrubbed from everything stored.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from copal_tui.llm import http_target, parsing, preflight, provider
from copal_tui.llm.call_store import CallStore
from copal_tui.llm.models import (
    ModelConfigError,
    ModelSpec,
    SentSettings,
    for_task,
    resolve,
    role_of,
)
from copal_tui.llm.request import (
    describe,
    json_schema_format,
    request_hash,
    request_payload,
    scrub,
    secret_values,
)
from copal_tui.llm.results import Completion, LLMError, ProviderAnswer, Structured
from copal_tui.llm.retry import (
    RateLimiter,
    backoff_delay,
    fatal_hint,
    is_fatal,
    is_retryable,
    retry_after,
    status_of,
)
from store.db import dumps, utcnow
from store.pipeline import llm_log

T = TypeVar("T", bound=BaseModel)


class LLMClient:
    def __init__(
        self,
        db_path: str | PathLike[str],
        run_id: str | None,
        *,
        concurrency: int | None = None,
        backoff_base: float = 1.0,
        backoff_cap: float = 30.0,
        retry_after_cap: float = 120.0,
        timeout_grace: float = 1.0,
        flush_interval: float = 0.2,
        flush_rows: int = 50,
        use_cache: bool = True,
        models_file: str | PathLike[str] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.db_path = db_path
        self.run_id = run_id
        self.concurrency = concurrency
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.retry_after_cap = retry_after_cap
        # litellm enforces spec.timeout itself; this outer guard (a little later) also covers
        # providers that ignore it.
        self.timeout_grace = timeout_grace
        self.use_cache = use_cache
        self.models_file = Path(models_file) if models_file is not None else None
        self._rng = rng or random.Random()
        self._store = CallStore(db_path, flush_interval=flush_interval, flush_rows=flush_rows)
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._limiters: dict[str, RateLimiter] = {}
        self._inflight: dict[str, asyncio.Future[None]] = {}
        self._closed = False
        self.calls = 0  # provider attempts
        self.cache_hits = 0
        self.failures = 0  # requests (items) that ended without a usable answer
        self.cost = 0.0
        # Structured answers by model and task: valid at once, valid after the repair round,
        # or failed (no usable answer): what `copal runs` and the report count.
        self.outputs: dict[str, dict[str, dict[str, int]]] = {}
        # What each model was sent, by role (the manifest's `model_settings`), and whether
        # litellm lists a model string as taking a reasoning effort.
        self.settings: dict[str, dict[str, SentSettings]] = {}
        self._reasoning: dict[str, bool] = {}
        self._checked: set[str] = set()  # models that passed preflight.check
        # A model's fatal error (bad key, unknown model): its later requests fail with it at
        # once, without asking the provider again.
        self._fatal: dict[str, LLMError] = {}

    # -- public API ---------------------------------------------------------------------------

    @property
    def counters(self) -> dict[str, float | int]:
        return {"calls": self.calls, "cache_hits": self.cache_hits,
                "failures": self.failures, "cost": self.cost}

    def settings_record(self) -> dict[str, dict[str, dict[str, Any]]]:
        """{model name: {role: settings sent}} for the run manifest."""
        return {name: {role: sent.as_json() for role, sent in sorted(roles.items())}
                for name, roles in sorted(self.settings.items())}

    def resolve(self, name: str) -> ModelSpec:
        """A model name resolved against this run's models file (see models.resolve)."""
        return resolve(name, self.models_file)

    async def complete(self, spec: ModelSpec, messages: list[dict[str, Any]], *, task: str,
                       template_version: str) -> Completion:
        """Free-text answer; raises LLMError when there is none after the retries."""
        try:
            return await self._complete(spec, messages, task=task, template_version=template_version)
        except LLMError:
            self.failures += 1
            raise

    async def structured(self, spec: ModelSpec, messages: list[dict[str, Any]], out_type: type[T],
                         *, task: str, template_version: str,
                         context: Mapping[str, Any] | None = None,
                         seed: int | None = None) -> Structured[T]:
        """A validated `out_type`, after at most one repair round; a failure comes back as a
        Structured with value None, the raw text and the reason. Fatal errors (bad key, unknown
        model) are raised as LLMError instead.

        Where litellm reports that the model takes a JSON schema, `out_type`'s schema goes as
        `response_format` (structured output); the prompt's own description and the repair
        round remain the path for every other model, and the check after either. Each outcome
        is counted in `outputs` (valid, repaired, failed) per model and task. `context` is
        pydantic's validation context for `out_type`'s validators (what an answer is checked
        against beyond its shape, such as the response whose words a judge must quote); an
        answer it rejects goes to the repair round like any other invalid one. `seed` is part
        of the request (sent where the provider takes one): repeated attempts at the same
        messages stay separate calls."""
        # Structured calls judge and build suites: a deployed bot or a reference chatbot only
        # answers as a target.
        problem = preflight.role_problem(spec, target=False)
        if problem:
            raise ModelConfigError(problem)
        if seed is not None:
            spec = spec.model_copy(update={"seed": seed})
        result = await self._structured(spec, messages, out_type, task=task,
                                        template_version=template_version, context=context)
        outcome = "failed" if result.value is None else "repaired" if result.calls > 1 else "valid"
        tally = self.outputs.setdefault(spec.name, {}).setdefault(
            task, {"valid": 0, "repaired": 0, "failed": 0})
        tally[outcome] += 1
        return result

    async def _structured(self, spec: ModelSpec, messages: list[dict[str, Any]],
                          out_type: type[T], *, task: str, template_version: str,
                          context: Mapping[str, Any] | None) -> Structured[T]:
        kw: dict[str, Any] = {"task": task, "template_version": template_version,
                              "response_format": await self._schema_format(spec, out_type)}
        try:
            first = await self._complete(spec, messages, **kw)
        except LLMError as exc:
            if exc.fatal or not exc.empty:
                self.failures += 1
                if exc.fatal:
                    raise
                return Structured(None, exc.raw, exc.reason, cached=False, calls=1,
                                  attempts=exc.attempts)
            bad, problem, done = "", "the answer was empty", (exc.attempts, 0.0, False)
            first_key = ""
        else:
            try:
                value = parsing.validate(first.text, out_type, context)
                return Structured(value, first.text, None, cached=first.cached, calls=1,
                                  attempts=first.attempts, cost=first.cost or 0.0)
            except parsing.OutputProblem as problem_exc:
                bad, problem = first.text, str(problem_exc)
                first_key = first.key
                done = (first.attempts, first.cost or 0.0, first.cached)

        attempts, cost, first_cached = done
        try:
            second = await self._complete(spec, parsing.repair_messages(messages, bad, problem), **kw)
        except LLMError as exc:
            self.failures += 1
            if exc.fatal:
                raise
            self._store.evict(first_key)
            return Structured(None, exc.raw or bad or None,
                              f"{problem}; the repair call failed: {exc.reason}", cached=False,
                              calls=2, attempts=attempts + exc.attempts, cost=cost,
                              first_raw=bad)
        attempts += second.attempts
        cost += second.cost or 0.0
        cached = first_cached and second.cached
        try:
            value = parsing.validate(second.text, out_type, context)
        except parsing.OutputProblem as exc:
            self.failures += 1
            # Neither answer stays cached: a re-run must ask again, not replay the failure.
            # (After a successful repair both stay, so a re-run replays it for free.)
            self._store.evict(first_key)
            self._store.evict(second.key)
            cut = " (cut off at the token limit)" if second.finish_reason == "length" else ""
            return Structured(None, second.text, f"invalid after one repair: {exc}{cut} (first "
                              f"answer: {problem})", cached=cached, calls=2, attempts=attempts,
                              cost=cost, first_raw=bad, invalid=True)
        return Structured(value, second.text, None, cached=cached, calls=2, attempts=attempts,
                          cost=cost, first_raw=bad)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._store.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- one request --------------------------------------------------------------------------

    async def _schema_format(self, spec: ModelSpec, out_type: type[BaseModel]
                             ) -> dict[str, Any] | None:
        if spec.is_offline:
            return None
        if not provider.loaded():
            await asyncio.to_thread(provider.get_litellm)
        if not provider.supports_schema(spec):
            return None
        return json_schema_format(out_type.__name__, out_type.model_json_schema())

    async def _complete(self, spec: ModelSpec, messages: list[dict[str, Any]], *, task: str,
                        template_version: str,
                        response_format: dict[str, Any] | None = None) -> Completion:
        if self._closed:
            raise RuntimeError("LLMClient is closed")
        spec = await self._as_sent(spec, task)
        payload = request_payload(spec, messages, task=task, template_version=template_version,
                                  response_format=response_format)
        key = request_hash(payload)
        # An identical request already on its way: wait for it and take its answer from the
        # cache rather than paying twice (shield: a cancelled waiter must not cancel the owner).
        while (pending := self._inflight.get(key)) is not None:
            await asyncio.shield(pending)
        request_json = scrub(dumps({"name": spec.name, **payload}), secret_values(spec)) or ""
        if self.use_cache:
            hit = self._store.get(key)
            if hit is not None:
                self.cache_hits += 1
                self._log(llm_log.CallRow(key, self.run_id, spec.name, request_json, hit, None, None,
                                          0.0, 0.0, None, True, 0, utcnow()))
                return Completion(hit, True, 0.0, None, None, 0.0, 0, key=key)
        owner: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inflight[key] = owner
        try:
            return await self._call_with_retries(spec, messages, key, request_json,
                                                 response_format)
        finally:
            del self._inflight[key]
            owner.set_result(None)

    async def _as_sent(self, spec: ModelSpec, task: str) -> ModelSpec:
        """The spec this task's call is sent with: the role's defaults where the entry sets no
        temperature or max_tokens, and no reasoning effort where litellm does not list the
        model as taking one (sending it would make litellm refuse every call). Recorded per
        model and role, with the effort asked for and whether it was sent."""
        sent = for_task(spec, task)
        effort = sent.reasoning_effort
        if effort is not None and not await self._takes_reasoning(sent):
            sent = sent.model_copy(update={"reasoning_effort": None})
        if not spec.is_http:  # a deployed bot's settings are its own
            self.settings.setdefault(spec.name, {})[role_of(task) or "other"] = SentSettings(
                sent.model, sent.temperature, sent.max_tokens, effort,
                sent.reasoning_effort is not None)
        return sent

    async def _takes_reasoning(self, spec: ModelSpec) -> bool:
        known = self._reasoning.get(spec.model)
        if known is None:
            if not spec.is_offline and not provider.loaded():
                await asyncio.to_thread(provider.get_litellm)  # seconds: not on the loop
            known = self._reasoning[spec.model] = provider.supports_reasoning(spec)
        return known

    async def _call_with_retries(self, spec: ModelSpec, messages: list[dict[str, Any]], key: str,
                                 request_json: str,
                                 response_format: dict[str, Any] | None = None) -> Completion:
        api_key = spec.api_key()  # ModelConfigError propagates: a setup problem, not an item's
        if not provider.loaded() and not spec.is_http:
            # The import takes seconds: not inside the first attempt's timeout, and not blocking
            # the event loop (which may be the TUI's).
            await asyncio.to_thread(provider.get_litellm)
        if spec.name not in self._checked:
            # Before its first call: a model no call can succeed with (litellm cannot place
            # it, its key is missing) is a setup error, not a failure per item.
            preflight.check(spec)
            self._checked.add(spec.name)
        secrets = spec.secrets()  # the key and header values sent, scrubbed from all text
        max_attempts = spec.max_retries + 1
        for attempt in range(1, max_attempts + 1):
            async with self._semaphore(spec):
                if (earlier := self._fatal.get(spec.name)) is not None:
                    raise LLMError(earlier.reason, attempts=0, status=earlier.status, fatal=True)
                # Rate slot taken inside the concurrency slot: starts stay spaced even when
                # requests queue on the semaphore.
                await self._limiter(spec).acquire()
                started = time.perf_counter()
                try:
                    async with asyncio.timeout(spec.timeout + self.timeout_grace):
                        answer = await (http_target.acall(spec, messages) if spec.is_http else
                                        provider.acall(spec, messages, api_key, response_format))
                except Exception as exc:
                    latency = (time.perf_counter() - started) * 1000
                    error = scrub(describe(exc, spec), secrets) or ""
                    self.calls += 1
                    self._log(llm_log.CallRow(key, self.run_id, spec.name, request_json, None, None,
                                              None, latency, None, error, False, attempt, utcnow()))
                    if not is_retryable(exc) or attempt == max_attempts:
                        tries = f" after {attempt} attempts" if attempt > 1 else ""
                        first_line = (error.splitlines() or [""])[0][:300]
                        fatal, status = is_fatal(exc), status_of(exc)
                        reason = f"{first_line}{tries}"
                        if fatal:  # said on the terminal as the run stops: what to fix first
                            hint = fatal_hint(status, model=spec.model, key_env=spec.api_key_env)
                            reason = f"model {spec.name!r}: {hint}{' | ' if hint else ''}{reason}"
                        failed = LLMError(reason, attempts=attempt, status=status, fatal=fatal)
                        if fatal:
                            self._fatal.setdefault(spec.name, failed)
                        raise failed from None
                    delay = self._delay(exc, attempt)
                else:
                    latency = (time.perf_counter() - started) * 1000
                    return self._success(spec, key, request_json, answer, attempt, latency, secrets)
            await asyncio.sleep(delay)  # outside the semaphore: others may use the slot meanwhile
        raise AssertionError("unreachable")  # pragma: no cover

    def _success(self, spec: ModelSpec, key: str, request_json: str, answer: ProviderAnswer,
                 attempt: int, latency: float, secrets: list[str]) -> Completion:
        self.calls += 1
        self.cost += answer.cost or 0.0
        text = scrub(answer.text, secrets) or ""
        empty = not text.strip()
        error = f"empty response (finish_reason={answer.finish_reason})" if empty else None
        self._log(llm_log.CallRow(key, self.run_id, spec.name, request_json, text,
                                  answer.prompt_tokens, answer.completion_tokens, latency,
                                  answer.cost, error, False, attempt, utcnow()))
        if empty:
            # Not retried (a filter or a too-small max_tokens answers the same way again) and
            # not cached (a later run should ask again).
            raise LLMError(error or "empty response", attempts=attempt, raw=text, empty=True)
        if self.use_cache:
            self._store.cache(llm_log.CacheRow(key, spec.name, text, utcnow()))
        return Completion(text, False, answer.cost, answer.prompt_tokens, answer.completion_tokens,
                          latency, attempt, answer.finish_reason, key=key)

    def _delay(self, exc: BaseException, attempt: int) -> float:
        asked = retry_after(exc)
        if asked is not None:
            return min(asked, self.retry_after_cap)
        return backoff_delay(attempt, self.backoff_base, self.backoff_cap, self._rng)

    def _semaphore(self, spec: ModelSpec) -> asyncio.Semaphore:
        sem = self._sems.get(spec.name)
        if sem is None:
            size = spec.max_concurrency
            if self.concurrency:
                size = min(size, self.concurrency)
            sem = self._sems[spec.name] = asyncio.Semaphore(size)
        return sem

    def _limiter(self, spec: ModelSpec) -> RateLimiter:
        limiter = self._limiters.get(spec.name)
        if limiter is None:
            limiter = self._limiters[spec.name] = RateLimiter(spec.rpm)
        return limiter

    def _log(self, row: llm_log.CallRow) -> None:
        """Every attempt and cache hit goes to the call log (a dry pass overrides this)."""
        self._store.log(row)
