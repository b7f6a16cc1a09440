"""Provider batch APIs (`copal run ... --batch`): submit a stage's requests as one batch per model
through litellm's files and batches interface, poll it, and store every answer as an ordinary
call.

Batches cost about half of live calls (the providers' batch discount) and may take up to 24 h.
What goes in is exactly what the live path would send: the body is built by
`provider.request_kwargs` (minus the transport settings) and each line's `custom_id` is the
request's cache key. An answer is stored like a live one: a cache row under that key (so the
stage, run right after, and any later live run read it instead of calling again) and a call-log
row whose request JSON carries `"batch": <batch id>`, priced by litellm's batch prices
(`batch_cost_calculator`: the model map's `*_batches` rates, else half the live rates; None when
the model has no price, as for live calls). A line the provider failed, or an empty answer, is
logged with its error and not cached: the stage then asks for it live. Only the requests the
batch was submitted with are read from its result files: a line with any other `custom_id` is
ignored (counted, and said), and a request on several lines is stored and paid for once.

A batch is recorded in the store (`store.pipeline.batches`) with the request keys it covers
before it is polled: a run killed while waiting leaves it pending, and a re-run needing any of
those requests polls that batch again instead of submitting a second one. Providers litellm has
no batch API for (the offline engine, http targets, ollama, anthropic through this litellm
version, ...) are answered live by the stage; `no_batch_reason` says why.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from copal_tui.llm import provider
from copal_tui.llm.batch_results import BatchAnswer, answer_of, read_lines
from copal_tui.llm.models import ModelSpec
from copal_tui.llm.request import scrub, secret_values
from copal_tui.llm.results import LLMError
from copal_tui.llm.retry import is_fatal, status_of
from store.db import Database, dumps, utcnow
from store.pipeline import batches, llm_log

# Seconds between polls of a pending batch (a batch takes minutes to hours; tests shorten it).
POLL_ENV = "COPAL_BATCH_POLL"
POLL_DEFAULT = 30.0
ENDPOINT = "/v1/chat/completions"
# Provider states after which a batch changes no more.
TERMINAL = {"completed", "failed", "expired", "cancelled"}
# The request settings that belong to the live call's transport, not to the request itself.
_TRANSPORT = {"timeout", "num_retries", "max_retries", "api_base", "api_key"}
# Providers litellm's create_batch serves without a per-provider config (it has one for others).
_DIRECT = {"azure", "vertex_ai", "xai"}


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batch: its cache key, the model, what the call log stores about it and
    the chat-completions body the provider runs."""

    key: str
    spec: ModelSpec
    request_json: str
    body: dict[str, Any]


@dataclass
class BatchTotals:
    calls: int = 0  # answers and failed lines logged
    answered: int = 0  # answers stored in the cache
    cost: float = 0.0
    stopped: bool = False  # the run was cancelled while a batch was pending
    ignored: int = 0  # result lines not of their batch (a custom_id it never held)
    duplicates: int = 0  # further lines of a request already answered (counted once)
    notes: list[str] = field(default_factory=list)


def no_batch_reason(spec: ModelSpec) -> str | None:
    """None when litellm has a batch API for `spec`'s provider, else why not (one line)."""
    if spec.is_offline:
        return "the offline engine has no batch API"
    if spec.is_http:
        return "an http target (a deployed chatbot) has no batch API"
    name = batch_provider(spec)
    return None if name else f"litellm has no batch API for {spec.model!r}"


def batch_provider(spec: ModelSpec) -> str | None:
    """litellm's provider name for `spec` when litellm can create batches for it (the same
    dispatch as `litellm.create_batch`), else None."""
    litellm = provider.get_litellm()
    from litellm.types.utils import OPENAI_COMPATIBLE_BATCH_AND_FILES_PROVIDERS, LlmProviders
    from litellm.utils import ProviderConfigManager

    try:
        _, name, _, _ = litellm.get_llm_provider(model=spec.model)
    except Exception:  # noqa: BLE001 - a model litellm cannot place has no batch API either
        return None
    if name in OPENAI_COMPATIBLE_BATCH_AND_FILES_PROVIDERS or name in _DIRECT:
        return str(name)
    try:
        config = ProviderConfigManager.get_provider_batches_config(
            model=spec.model, provider=LlmProviders(name))
    except ValueError:
        return None
    return str(name) if config is not None else None


def request_of(spec: ModelSpec, messages: list[dict[str, Any]], key: str, request_json: str,
               response_format: dict[str, Any] | None) -> BatchRequest:
    """The batch line of a request the live path would send with these arguments."""
    kwargs = provider.request_kwargs(spec, messages, None, response_format)
    body = {k: v for k, v in kwargs.items() if k not in _TRANSPORT}
    body["model"] = provider.get_litellm().get_llm_provider(model=spec.model)[0]
    return BatchRequest(key, spec, request_json, body)


def poll_seconds() -> float:
    try:
        return max(0.01, float(os.environ.get(POLL_ENV) or POLL_DEFAULT))
    except ValueError:
        return POLL_DEFAULT


async def run_batches(db: Database, requests: Sequence[BatchRequest], *, run_id: str | None,
                      say: Callable[[str], None], stop: Callable[[], bool]) -> BatchTotals:
    """Answer `requests` through batches (resuming pending ones that cover them), storing every
    answer; returns what was logged. Requests left unanswered are for the live path."""
    totals = BatchTotals()
    groups: dict[str, list[BatchRequest]] = {}
    for r in requests:
        groups.setdefault(r.spec.name, []).append(r)
    jobs: list[_Job] = []
    for name, group in groups.items():
        spec = group[0].spec
        prov = await asyncio.to_thread(batch_provider, spec)
        if prov is None:
            continue
        by_key = {r.key: r for r in group}
        todo = set(by_key)
        for row, keys in batches.pending(db, name):
            if keys & todo:
                say(f"{name}: resuming batch {row.id} ({len(keys)} requests)")
                jobs.append(_Job(row, spec, prov, by_key, frozenset(keys)))
                todo -= keys
        if todo:
            job = await _submit(db, spec, prov, [by_key[k] for k in sorted(todo)], run_id, say,
                                by_key, totals)
            if job is not None:
                jobs.append(job)
    try:
        await _poll(db, jobs, run_id=run_id, say=say, stop=stop, totals=totals)
    finally:
        await _close_clients()
    return totals


async def _close_clients() -> None:
    # litellm's files and batches calls make an OpenAI SDK client each, left to the garbage
    # collector, whose finaliser closes it on whichever loop is running then: after this
    # stage's loop is gone that is the next stage's, and it fails there ("Event loop is
    # closed", printed on the terminal). Collected now, they close on their own loop.
    import gc

    gc.collect()
    for _ in range(3):
        await asyncio.sleep(0)


@dataclass
class _Job:
    row: batches.BatchRow
    spec: ModelSpec
    provider: str
    requests: dict[str, BatchRequest]  # what this run knows of the requests, by key
    keys: frozenset[str]  # the request keys the batch was submitted with (its custom_ids)
    done: bool = False


def _transport(spec: ModelSpec, prov: str) -> dict[str, Any]:
    # The same key, api_base and placeholder-key rules as a live call of this model.
    kwargs = provider.request_kwargs(spec, [], spec.api_key())
    out: dict[str, Any] = {"custom_llm_provider": prov}
    out.update({k: kwargs[k] for k in ("api_base", "api_key") if k in kwargs})
    return out


async def _submit(db: Database, spec: ModelSpec, prov: str, group: list[BatchRequest],
                  run_id: str | None, say: Callable[[str], None],
                  by_key: dict[str, BatchRequest], totals: BatchTotals) -> _Job | None:
    litellm = provider.get_litellm()
    lines = "".join(dumps({"custom_id": r.key, "method": "POST", "url": ENDPOINT,
                           "body": r.body}) + "\n" for r in group)
    auth = _transport(spec, prov)
    try:
        upload = await litellm.acreate_file(
            file=("copal-batch.jsonl", lines.encode("utf-8"), "application/jsonl"),
            purpose="batch", **auth)
        batch = await litellm.acreate_batch(
            completion_window="24h", endpoint=ENDPOINT, input_file_id=upload.id,
            metadata={"copal_run": run_id or ""}, model=spec.model, **auth)
    except Exception as exc:  # noqa: BLE001 - reported, and these requests go live
        reason = _first_line(exc, spec)
        if is_fatal(exc):
            raise LLMError(f"batch submission for {spec.name}: {reason}", attempts=1,
                           status=status_of(exc), fatal=True) from None
        note = f"{spec.name}: batch submission failed ({reason}); its requests go live"
        totals.notes.append(note)
        say(note)
        return None
    row = batches.BatchRow(id=str(batch.id), model=spec.name, provider=prov,
                               input_file_id=str(upload.id), requests=len(group), run_id=run_id,
                               provider_status=str(batch.status))
    batches.record(db, row, [r.key for r in group])
    say(f"{spec.name}: submitted batch {row.id} ({len(group)} requests)")
    return _Job(row, spec, prov, by_key, frozenset(r.key for r in group))


async def _poll(db: Database, jobs: list[_Job], *, run_id: str | None,
                say: Callable[[str], None], stop: Callable[[], bool],
                totals: BatchTotals) -> None:
    litellm = provider.get_litellm()
    while True:
        for job in (j for j in jobs if not j.done):
            auth = _transport(job.spec, job.provider)
            try:
                batch = await litellm.aretrieve_batch(batch_id=job.row.id, **auth)
            except Exception as exc:  # noqa: BLE001 - the next poll tries again
                if is_fatal(exc):
                    raise LLMError(f"batch {job.row.id}: {_first_line(exc, job.spec)}",
                                   attempts=1, status=status_of(exc), fatal=True) from None
                say(f"batch {job.row.id}: poll failed ({_first_line(exc, job.spec)}); "
                    "trying again")
                continue
            status = str(batch.status)
            counts = batch.request_counts
            done = (counts.completed + counts.failed) if counts else 0
            total = counts.total if counts else job.row.requests
            say(f"batch {job.row.id} ({job.spec.name}): {done}/{total} requests, {status}")
            if status in TERMINAL:
                ignored, duplicates = totals.ignored, totals.duplicates
                await _ingest(db, job, batch, status, run_id, totals)
                job.done = True
                if totals.ignored > ignored or totals.duplicates > duplicates:
                    say(f"batch {job.row.id}: {totals.ignored - ignored} result line(s) for "
                        "requests it does not hold ignored, "
                        f"{totals.duplicates - duplicates} repeated line(s) counted once")
            elif status != job.row.provider_status:
                batches.seen(db, job.row.id, status)
        if all(j.done for j in jobs):
            return
        deadline = time.monotonic() + poll_seconds()
        while time.monotonic() < deadline:
            if stop():
                totals.stopped = True
                return
            await asyncio.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


async def _ingest(db: Database, job: _Job, batch: Any, status: str, run_id: str | None,
                  totals: BatchTotals) -> None:
    auth = _transport(job.spec, job.provider)
    litellm = provider.get_litellm()
    lines: list[dict[str, Any]] = []
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            content = await litellm.afile_content(file_id=file_id, **auth)
            lines.extend(read_lines(content.content))
    secrets = secret_values(job.spec)
    calls: list[llm_log.CallRow] = []
    cache: list[llm_log.CacheRow] = []
    for key, got in _answers(lines, job, totals).items():
        request = _marked(job.requests[key].request_json if key in job.requests else None, job,
                          key)
        text = scrub(got.text, secrets) or ""
        error = scrub(got.error, secrets)
        if error is None and not text.strip():
            error = f"empty response (finish_reason={got.finish_reason})"
        now = utcnow()
        calls.append(llm_log.CallRow(key, run_id, job.spec.name, request, text or None,
                                     got.prompt_tokens, got.completion_tokens, None, got.cost,
                                     error, False, 1, now))
        totals.calls += 1
        totals.cost += got.cost or 0.0
        if error is None:
            cache.append(llm_log.CacheRow(key, job.spec.name, text, now))
            totals.answered += 1
    ours = "done" if status == "completed" else status
    batches.finish(db, job.row.id, status=ours, provider_status=status,
                       output_file_id=batch.output_file_id, error_file_id=batch.error_file_id,
                       calls=calls, cache=cache)


def _answers(lines: list[dict[str, Any]], job: _Job, totals: BatchTotals
             ) -> dict[str, BatchAnswer]:
    """One answer per request of the batch. A line whose custom_id the batch does not hold
    (another batch's, or made up) is ignored: it is neither paid for nor cached under a key
    this store never asked. A request answered on several lines counts once, an answer
    preferred to an error."""
    out: dict[str, BatchAnswer] = {}
    for line in lines:
        key = str(line.get("custom_id") or "")
        if key not in job.keys:
            totals.ignored += 1
            continue
        got = answer_of(line, job.provider, job.spec)
        if key in out:
            totals.duplicates += 1
            if out[key].error is None or got.error is not None:
                continue
        out[key] = got
    return out


def _marked(request_json: str | None, job: _Job, key: str) -> str:
    # The call log's request JSON, marked with the batch that answered it. A key of a resumed
    # batch this run did not ask for (its scope changed) is still paid for: stored all the same.
    data: dict[str, Any] = json.loads(request_json) if request_json else {"name": job.spec.name}
    data["batch"] = job.row.id
    return dumps(data)


def _first_line(exc: BaseException, spec: ModelSpec) -> str:
    from copal_tui.llm.request import describe

    text = scrub(describe(exc, spec), secret_values(spec)) or ""
    return (text.splitlines() or [""])[0][:300]
