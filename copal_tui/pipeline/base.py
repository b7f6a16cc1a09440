"""What every stage shares: options, the run row and manifest, progress, batched writes, cancel.

A stage runs in one thread with its own event loop and its own SQLite connection (workers never
share a connection). Results are written in small batches: each batch is one `BEGIN IMMEDIATE`
transaction, so a killed run loses at most the last batch, whose answers the LLM cache still holds.
The same transaction refreshes the run row (heartbeat, failures, now and then the manifest), and
the call log's batches move its call counters, so a killed run's row shows what it did; a
heartbeat thread beats meanwhile (`runs.Heartbeat`). Ctrl-C ends a run `interrupted`.

Before it starts, a stage claims its run row (`store.pipeline.runs.claim`): while a live run of the same
stage covers an overlapping scope (worlds x target models or judges), it waits, saying so in its
progress message, and then starts on whatever that run left undone.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from copal_tui import __version__
from copal_tui.pipeline import missing_model
from copal_tui.pipeline.options import (  # noqa: F401 - the stages' options, used by callers
    CompassOptions,
    CopalOptions,
    DialogueOptions,
    Options,
)
from store.db import Database, connect, write
from store.pipeline import runs
from store.pipeline.rows import ClauseRow, PolicyRow, WorldRow
from store.schema_state import require_current, schema_version

T = TypeVar("T")

# Stages whose rows are keyed by the target model (or the judge): runs for different ones never
# write the same row, so they may run side by side. Other stages conflict on any shared world.
MODEL_KEYED = {"respond": "models", "compass_respond": "models", "judge": "judges",
               "compass_judge": "judges", "dialogue_judge": "judges", "traffic_judge": "judges"}
# Stages that work on stored dialogues or traffic, not on worlds: any two runs of one of them
# overlap.
WORLDLESS = {"dialogue_judge", "dialogue_variants", "traffic_judge"}
# How often a stage waiting for another run's claim tries again (seconds).
WAIT_POLL = 0.5
# The manifest (errors, counts) is rewritten at most this often while a run works (seconds).
MANIFEST_EVERY = 1.0


@dataclass
class Progress:
    stage: str
    run_id: str
    done: int = 0
    total: int = 0
    failures: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost: float = 0.0
    status: str = "running"
    message: str = ""


class Cancelled(Exception):
    pass


class StageRun:
    """One execution of one stage: owns the connection, the LLM client and the run row."""

    def __init__(
        self,
        db_path: Path,
        stage: str,
        opts: Options,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.db_path, self.stage, self.opts = Path(db_path), stage, opts
        self.run_id = f"{stage}-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        self.on_progress = on_progress
        self.cancel = cancel or threading.Event()
        self.progress = Progress(stage, self.run_id)
        self.errors: list[dict[str, Any]] = []
        self._failed: set[str] = set()
        self.counts: dict[str, int] = {}
        self._pending: list[Callable[[Database], None]] = []
        self._last_flush = time.monotonic()
        self._last_report = 0.0
        self._last_beat = self._last_manifest = 0.0
        self._beaten_failures = 0
        self._heart: runs.Heartbeat | None = None
        self.db: Database
        self._llm: Any = None
        self._templates: dict[str, Any] = {}
        self._specs: dict[str, Any] = {}
        self._fixed: dict[str, Any] | None = None  # manifest parts that do not change in a run

    # ------------------------------------------------------------------ lifecycle

    def manifest(self) -> dict[str, Any]:
        if self._fixed is None:
            from copal_tui import prompts

            # Taken once, at the start: the versions the run used (a template edited mid-run
            # is not what it sent), and hashing every template again at the end cost a short
            # stage a noticeable share of its wall time.
            self._fixed = {"litellm_version": _dist_version("litellm"),
                           "prompt_versions": prompts.versions()}
        return {
            "stage": self.stage,
            "tool_version": __version__,
            "schema_version": schema_version(self.db),
            "litellm_version": self._fixed["litellm_version"],
            "options": {k: (str(v) if isinstance(v, Path) else v)
                        for k, v in asdict(self.opts).items()},
            "prompt_versions": self._fixed["prompt_versions"],
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "scope": self.scope(),
            "progress": {"done": self.progress.done, "total": self.progress.total,
                         "failures": self.progress.failures},
            "counts": dict(self.counts),
            # Structured answers per model and task: valid at once, repaired, failed.
            "outputs": self._llm.outputs if self._llm is not None else {},
            # What each model was sent, per role: temperature, max_tokens, and the reasoning
            # effort its entry asks for with whether litellm let it be sent.
            "model_settings": self._llm.settings_record() if self._llm is not None else {},
            "errors": self.errors[:50],
            "error_count": len(self.errors),
        }

    def scope(self) -> dict[str, list[str] | None]:
        """What this run may write: the worlds and models (None: all) a concurrent run of the
        same stage must not share."""
        key = MODEL_KEYED.get(self.stage)
        return {"worlds": None if self.stage in WORLDLESS else self.opts.worlds,
                "models": list(getattr(self.opts, key)) if key else None}

    @property
    def llm(self) -> Any:
        if self._llm is None:
            # Imported here: building the client is what may import litellm, and only a
            # stage that calls a model pays for it.
            from copal_tui.llm.client import LLMClient

            self._llm = LLMClient(self.db_path, self.run_id, concurrency=self.opts.concurrency,
                                  models_file=self.opts.models_file,
                                  backoff_base=self.opts.backoff_base)
        return self._llm

    def template(self, task: str) -> Any:
        """The task's template, loaded once per run: the version recorded is the text sent."""
        if task not in self._templates:
            from copal_tui import prompts

            self._templates[task] = prompts.template(task)
        return self._templates[task]

    @property
    def generator(self) -> str:
        """The suite-building model (a run of a stage that needs one never starts without it:
        see `__aenter__`; this says so again if a stage asks outside that path)."""
        if not self.opts.generator:
            raise ValueError(f"{self.stage} needs --generator MODEL")
        return self.opts.generator

    @property
    def prefilter(self) -> str:
        """The COMPASS pre-filter model (required by the pre-filter variant)."""
        if not self.opts.compass.prefilter:
            raise ValueError(f"{self.stage}'s pre-filter variant needs --prefilter MODEL")
        return self.opts.compass.prefilter

    def model(self, name: str) -> Any:
        if name not in self._specs:
            from copal_tui.llm.models import resolve

            self._specs[name] = resolve(name, self.opts.models_file)
        return self._specs[name]

    async def __aenter__(self) -> StageRun:
        # Checked before anything is written (the CLI says the same, as exit 2; a job started
        # from the TUI fails with this reason).
        why = missing_model(self.stage, generator=self.opts.generator,
                            prefilter=self.opts.compass.prefilter,
                            verifier=self.opts.compass.verifier,
                            compass_variants=tuple(self.opts.compass.variants))
        if why:
            raise ValueError(why)
        self.db = connect(self.db_path)
        try:
            require_current(self.db)
            await self._claim()
        except BaseException:
            self.db.conn.close()
            raise
        self.progress.status, self.progress.message = "running", ""
        self._heart = runs.Heartbeat(self.db_path, self.run_id, lambda: self._last_beat)
        self._heart.start()
        self.report(force=True)
        return self

    async def _claim(self) -> None:
        """Insert the run row, first waiting while a live run holds an overlapping claim."""
        while (holder := runs.claim(self.db, self.run_id, self.stage, self.manifest())) is not None:
            if self.progress.status != "waiting":
                where = f" on {holder.host}" if holder.host != socket.gethostname() else ""
                started = str(holder.started_at)[:19].replace("T", " ")
                self.progress.status = "waiting"
                self.progress.message = (f"another copal run is doing this stage (pid "
                                         f"{holder.pid}{where}, started {started} UTC); "
                                         "waiting")
                self.report(force=True)
            if self.cancel.is_set():
                self.progress.status = "cancelled"
                self.report(force=True)
                raise Cancelled()
            await asyncio.sleep(WAIT_POLL)

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._heart is not None:
            self._heart.stop()
        try:
            self.flush()
        finally:
            if self._llm is not None:
                await self._llm.aclose()
            status = runs.ended(exc_type, cancelled=exc_type is Cancelled
                                or self.cancel.is_set())
            if status == "failed":
                self.errors.append({"unit": "stage", "reason": f"{exc_type.__name__}: {exc}"})
            self.sync_counters()
            self.progress.status = status
            runs.finish(self.db, self.run_id, status=status, calls=self.progress.calls,
                        cache_hits=self.progress.cache_hits, failures=self.progress.failures,
                        cost=self.progress.cost, manifest=self.manifest())
            self.report(force=True)
            self.db.conn.close()

    # ------------------------------------------------------------------ work

    def sync_counters(self) -> None:
        if self._llm is not None:
            self.progress.calls = self._llm.calls
            self.progress.cache_hits = self._llm.cache_hits
            self.progress.cost = self._llm.cost

    def report(self, force: bool = False) -> None:
        # Coalesce: at most ~10 progress messages a second reach the UI.
        now = time.monotonic()
        if self.on_progress and (force or now - self._last_report > 0.1):
            self.sync_counters()
            self._last_report = now
            self.on_progress(Progress(**asdict(self.progress)))

    def fail(self, unit: str, reason: str) -> None:
        # Failures count units: a unit whose two parallel calls both failed is one failed unit
        # (every reason is still kept in the errors).
        if unit not in self._failed:
            self._failed.add(unit)
            self.progress.failures += 1
        self.errors.append({"unit": unit, "reason": reason[:500]})

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def later(self, fn: Callable[[Database], None]) -> None:
        """Queue a write; flushed in batches (one transaction each)."""
        self._pending.append(fn)
        if len(self._pending) >= 50 or time.monotonic() - self._last_flush > 0.25:
            self.flush()

    def insert_later(self, fn: Callable[[Database, dict[str, Any], str | None], None],
                     rows: list[dict[str, Any]]) -> None:
        """Queue inserts of several rows made by one unit (written in one batch)."""

        def go(db: Database) -> None:
            for row in rows:
                fn(db, row, self.run_id)

        self.later(go)

    def flush(self) -> None:
        if self._pending:
            batch, self._pending = self._pending, []
            with write(self.db):
                for fn in batch:
                    fn(self.db)
                self.beat()  # the row's failures move with the failed units' rows
        elif self.progress.failures != self._beaten_failures:
            self.beat()  # a failure that wrote nothing (e.g. a rejected projection)
        self._last_flush = time.monotonic()

    def beat(self) -> None:
        """Refresh the run row: heartbeat, failures, and the manifest at most once a second."""
        now = time.monotonic()
        manifest = self.manifest() if now - self._last_manifest >= MANIFEST_EVERY else None
        runs.progress(self.db, self.run_id, failures=self.progress.failures, manifest=manifest)
        self._last_beat, self._beaten_failures = now, self.progress.failures
        if manifest is not None:
            self._last_manifest = now

    async def each(self, units: Iterable[T], fn: Callable[[T], Awaitable[None]]) -> None:
        """Run `fn` over units with bounded concurrency, counting progress; stops on cancel, and
        on a unit's error (raised once the units under way have ended)."""
        todo = list(units)
        self.progress.total += len(todo)
        self.report(force=True)
        sem = asyncio.Semaphore(max(1, self.opts.concurrency) * 2)
        stopped: list[Exception] = []

        async def one(index: int, unit: T) -> None:
            async with sem:
                if self.cancel.is_set() or stopped:
                    return
                try:
                    await fn(unit)
                except Exception as exc:  # noqa: BLE001 - re-raised below, once all have ended
                    # A fatal error stops the stage: no unit starts after it, and each unit it
                    # took down counts as failed (a run whose every call failed says so).
                    stopped.append(exc)
                    self.fail(f"{self.stage} unit {index + 1}", f"{type(exc).__name__}: {exc}")
                    return
                self.progress.done += 1
                self.report()

        await asyncio.gather(*(one(i, u) for i, u in enumerate(todo)))
        self.flush()
        if stopped:
            raise stopped[0]
        if self.cancel.is_set():
            raise Cancelled()


@functools.lru_cache(maxsize=8)
def _dist_version(name: str) -> str | None:
    # Scanning the installed distributions takes tens of ms; the answer cannot change while
    # the process runs.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


async def ask(run: StageRun, model_name: str, task: str, payload: dict[str, Any],
              unit: str) -> Any:
    """One structured call; returns the validated output or None (failure recorded)."""
    from copal_tui import prompts
    from copal_tui.domain.outputs import TASK_OUTPUTS

    spec = run.model(model_name)
    tpl = run.template(task)
    messages = prompts.render(task, payload, using=tpl)
    result = await run.llm.structured(
        spec, messages, TASK_OUTPUTS[task], task=task, template_version=tpl.version,
    )
    if result.value is None:
        raw = (result.raw or "")[:300]
        run.fail(unit, f"{task}: {result.reason}" + (f" | raw: {raw}" if raw else ""))
    return result.value


# ------------------------------------------------------------------ prompt views
# The typed rows become plain mappings here, at the prompt boundary, with the keys and values the
# prompts have always carried (the trailer's JSON, and with it the call cache key, depends on
# them byte for byte).


def world_payload(world: WorldRow) -> dict[str, str]:
    return {"id": world.id, "name": world.name, "industry": world.industry,
            "use_case": world.use_case, "context": world.context}


def world_view(world: WorldRow) -> dict[str, Any]:
    """Every column of the world, for the chatbot prompts (which read the system prompts too)."""
    return asdict(world)


def policy_view(policy: PolicyRow) -> dict[str, str]:
    return {"id": policy.id, "kind": policy.kind, "text": policy.text}


def policy_views(policies: Iterable[PolicyRow]) -> list[dict[str, str]]:
    return [policy_view(p) for p in policies]


def clause_payload(clause: ClauseRow) -> dict[str, Any]:
    return {"id": clause.id, "policy_ids": list(clause.policy_ids), "trigger": clause.trigger,
            "scope": clause.scope, "effect": clause.effect, "source_span": clause.source_span}
