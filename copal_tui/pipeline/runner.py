"""Run stages by name: the one entry point used by `copal run`, `copal demo` and TUI jobs.

`run_stages` is synchronous: it runs each stage's event loop in the calling thread, so a TUI
worker thread can call it directly with its own cancel event and progress callback.

With `Options.batch` a stage that calls models (BATCH_STAGES) first runs dry: its requests are
collected (nothing is written), answered through the providers' batch APIs into the cache
(copal_tui/llm/batch.py), and then the stage runs as usual, reading those answers from the
cache; repairs, requests that depend on an earlier answer beyond BATCH_ROUNDS, failed batch
lines and models without a batch API go live.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from copal_tui.pipeline import REGISTRY, STAGES, Stage
from copal_tui.pipeline.base import Cancelled, Options, Progress, StageRun


def stage(name: str) -> Stage:
    if name not in REGISTRY:
        raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    return REGISTRY[name]


async def run_stage(db_path: Path, name: str, opts: Options, *,
                    on_progress: Callable[[Progress], None] | None = None,
                    cancel: threading.Event | None = None) -> Progress:
    execute = stage(name).execute()
    run = StageRun(db_path, name, opts, on_progress=on_progress, cancel=cancel)
    try:
        async with run:
            if opts.batch:
                await _batch_first(run, execute)
            await execute(run)
    except Cancelled:
        pass
    return run.progress


# The stages whose model calls can go through batches; another stage given --batch runs live.
BATCH_STAGES = ("respond", "judge", "compass_respond", "compass_judge", "dialogue_judge",
                "traffic_judge")
# Dry passes (and so batches) at most: a request that needs an earlier answer (a pre-filter
# decision, a few-shot reference) shows up in the pass after that answer is stored.
BATCH_ROUNDS = 3


class _DryRun(StageRun):
    """The stage as its batch dry pass runs it: the run's scope, options, templates and models,
    a client that collects requests, and nothing written or reported."""

    def __init__(self, run: StageRun, client: Any) -> None:
        super().__init__(run.db_path, run.stage, run.opts, cancel=run.cancel)
        self.db, self._llm = run.db, client
        self._templates, self._specs = run._templates, run._specs

    def later(self, fn: Callable[[Any], None]) -> None:
        pass

    def flush(self) -> None:
        pass

    def report(self, force: bool = False) -> None:
        pass


async def _batch_first(run: StageRun, execute: Callable[[StageRun], Awaitable[None]]) -> None:
    """Answer what the stage is about to ask through provider batches, into the cache."""

    def say(message: str) -> None:
        run.progress.message = message
        run.report(force=True)

    if run.stage not in BATCH_STAGES:
        say(f"--batch applies to {', '.join(BATCH_STAGES)}; {run.stage} calls models live")
        return
    from copal_tui.llm.batch import run_batches
    from copal_tui.llm.batch_collect import Collector

    asked: set[str] = set()
    told: set[str] = set()
    for _ in range(BATCH_ROUNDS):
        collector = Collector(run.db_path, run.opts.models_file)
        try:
            await execute(_DryRun(run, collector))
        finally:
            await collector.aclose()
        for name, why in collector.live.items():
            if name not in told:
                told.add(name)
                say(f"{name}: {why}; its calls go live")
        todo = [r for key, r in collector.requests.items() if key not in asked]
        if not todo:
            break
        asked.update(r.key for r in todo)
        totals = await run_batches(run.db, todo, run_id=run.run_id, say=say,
                                   stop=run.cancel.is_set)
        run.llm.calls += totals.calls
        run.llm.cost += totals.cost
        if totals.stopped:
            raise Cancelled()
    run.progress.message = ""


def run_stages(db_path: Path, names: list[str], opts: Options, *,
               on_progress: Callable[[Progress], None] | None = None,
               cancel: threading.Event | None = None) -> list[Progress]:
    """Run stages in pipeline order; stops after a cancelled stage."""
    ordered = sorted(dict.fromkeys(names), key=STAGES.index)
    for n in ordered:
        stage(n)  # fail fast on a typo before anything runs
    results = []
    for name in ordered:
        progress = asyncio.run(run_stage(db_path, name, opts, on_progress=on_progress,
                                         cancel=cancel))
        results.append(progress)
        if progress.status == "cancelled":
            break
    return results
