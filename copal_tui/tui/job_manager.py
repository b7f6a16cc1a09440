"""Background pipeline jobs of one app: start, watch, cancel.

A job is a list of stages with one set of options, run by `copal_tui.pipeline.runner.run_stages`
in a Textual thread worker. The worker is owned by the app, not by the jobs screen, so a job keeps
running while the user browses elsewhere, and a jobs screen opened later finds it again
(`JobManager.of(app)`). The runner opens its own SQLite connection in the worker thread and is
imported there, so litellm (imported by the LLM client) is never loaded by the UI thread.

Progress is coalesced twice: the stage reports at most ~10 times a second, and a listener gets
at most one pending `JobUpdated` message per job; it reads the newest state when it handles the
message (`JobManager.snapshot`), so a slow UI never queues a backlog.
"""

from __future__ import annotations

import copy
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

from copal_tui.pipeline import STAGES
from copal_tui.pipeline.base import Options, Progress

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump
    from textual.worker import Worker

# Job states; the last three are final.
FINAL = ("done", "failed", "cancelled")


class JobError(Exception):
    """A job that cannot start (shown to the user as one line)."""


class JobUpdated(Message):
    """Something changed in a job; read it with `JobManager.snapshot(job_id)`."""

    def __init__(self, job_id: int) -> None:
        super().__init__()
        self.job_id = job_id


@dataclass
class Job:
    id: int
    stages: list[str]
    opts: Options
    cancel: threading.Event = field(default_factory=threading.Event)
    status: str = "starting"  # starting, running, cancelling, done, failed, cancelled
    # The newest progress of each stage that has started, in pipeline order.
    progress: dict[str, Progress] = field(default_factory=dict)
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None

    @property
    def final(self) -> bool:
        return self.status in FINAL

    @property
    def run_ids(self) -> list[str]:
        return [p.run_id for p in self.progress.values()]


def check_request(stages: list[str], opts: Options) -> None:
    """What `copal run` refuses, refused before a worker starts."""
    if not stages:
        raise JobError("choose at least one stage")
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise JobError(f"unknown stage {unknown[0]!r}")
    if "respond" in stages and not opts.models:
        raise JobError("respond needs at least one model")
    if "judge" in stages and not opts.judges:
        raise JobError("judge needs at least one judge")
    if "judge" in stages and not opts.copal.modes:
        raise JobError("judge needs at least one mode")


_MANAGERS: weakref.WeakKeyDictionary[Any, JobManager] = weakref.WeakKeyDictionary()


class JobManager:
    """The jobs of one app (one at a time: stages of one database run in pipeline order)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.jobs: list[Job] = []
        self._lock = threading.Lock()
        self._listeners: list[MessagePump] = []
        # (id(listener), job id) pairs with a JobUpdated message not yet handled.
        self._pending: set[tuple[int, int]] = set()

    @classmethod
    def of(cls, app: App[Any]) -> JobManager:
        manager = _MANAGERS.get(app)
        if manager is None:
            manager = _MANAGERS[app] = cls(app)
        return manager

    # ---------------------------------------------------------------- listeners (UI thread)

    def subscribe(self, node: MessagePump) -> None:
        with self._lock:
            if node not in self._listeners:
                self._listeners.append(node)

    def unsubscribe(self, node: MessagePump) -> None:
        with self._lock:
            self._listeners = [n for n in self._listeners if n is not node]
            self._pending = {p for p in self._pending if p[0] != id(node)}

    def snapshot(self, job_id: int, node: MessagePump | None = None) -> Job | None:
        """A copy of the job, safe to read in the UI thread; clears the listener's pending flag."""
        with self._lock:
            if node is not None:
                self._pending.discard((id(node), job_id))
            job = next((j for j in self.jobs if j.id == job_id), None)
            if job is None:
                return None
            out = copy.copy(job)
            out.progress = {k: copy.copy(v) for k, v in job.progress.items()}
            return out

    def active(self) -> Job | None:
        with self._lock:
            return next((j for j in reversed(self.jobs) if not j.final), None)

    def latest(self) -> Job | None:
        with self._lock:
            job = self.jobs[-1] if self.jobs else None
        return None if job is None else self.snapshot(job.id)

    # ---------------------------------------------------------------- actions (UI thread)

    def start(self, stages: list[str], opts: Options) -> Job:
        check_request(stages, opts)
        if self.active() is not None:
            raise JobError("a job is already running: wait for it or cancel it first")
        ordered = sorted(dict.fromkeys(stages), key=STAGES.index)
        with self._lock:
            job = Job(id=len(self.jobs) + 1, stages=ordered, opts=opts)
            self.jobs.append(job)
        self.app.run_worker(lambda: self._work(job), name=f"copal job {job.id}",
                            group="copal-jobs", thread=True, exit_on_error=False)
        self._notify(job)
        return job

    def cancel(self) -> Job | None:
        """Ask the running job to stop: units in flight finish, no new unit starts."""
        job = self.active()
        if job is None:
            return None
        job.cancel.set()
        with self._lock:
            if not job.final:
                job.status = "cancelling"
        self._notify(job)
        return job

    # ---------------------------------------------------------------- worker thread

    def _work(self, job: Job) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        status, error = "failed", None
        try:
            # Imported here, in the worker thread: the stages load the LLM client (and litellm).
            from copal_tui.pipeline.runner import run_stages

            results = run_stages(self.app.db_path,  # type: ignore[attr-defined]
                                 job.stages, job.opts,
                                 on_progress=lambda p: self._on_progress(job, p, worker),
                                 cancel=job.cancel)
            if job.cancel.is_set() or any(p.status == "cancelled" for p in results):
                status = "cancelled"
            elif any(p.status != "done" for p in results):
                status = "failed"
            else:
                status = "done"
        except Exception as exc:  # noqa: BLE001 - any failure is shown on the job, not raised
            error = f"{type(exc).__name__}: {exc}"
            status = "cancelled" if job.cancel.is_set() else "failed"
        finally:
            with self._lock:
                job.status, job.error, job.finished = status, error, time.monotonic()
            self._notify(job)

    def _on_progress(self, job: Job, progress: Progress, worker: Worker[Any]) -> None:
        if worker.is_cancelled:
            # The app is shutting down: stop cleanly (run rows end 'cancelled', not 'running').
            job.cancel.set()
        with self._lock:
            job.progress[progress.stage] = progress
            if job.status == "starting":
                job.status = "running"
        self._notify(job)

    def _notify(self, job: Job) -> None:
        """Post one JobUpdated per listener unless one is already waiting (thread-safe)."""
        with self._lock:
            targets = [n for n in self._listeners if (id(n), job.id) not in self._pending]
            for node in targets:
                self._pending.add((id(node), job.id))
        for node in targets:
            if not node.post_message(JobUpdated(job.id)):
                with self._lock:
                    self._pending.discard((id(node), job.id))
