"""Run stages by name: the one entry point used by `copal run`, `copal demo` and TUI jobs.

`run_stages` is synchronous: it runs each stage's event loop in the calling thread, so a TUI
worker thread can call it directly with its own cancel event and progress callback.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

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
            await execute(run)
    except Cancelled:
        pass
    return run.progress


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
