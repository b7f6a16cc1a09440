"""Run stages by name: the one entry point used by `copal run`, `copal demo` and TUI jobs.

`run_stages` is synchronous: it runs each stage's event loop in the calling thread, so a TUI
worker thread can call it directly with its own cancel event and progress callback.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from copal_tui.pipeline import STAGES
from copal_tui.pipeline.base import Cancelled, Options, Progress, StageRun


def stage_module(name: str) -> ModuleType:
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    return importlib.import_module(f"copal_tui.pipeline.{name}")


async def run_stage(db_path: Path, name: str, opts: Options, *,
                    on_progress: Callable[[Progress], None] | None = None,
                    cancel: threading.Event | None = None) -> Progress:
    module = stage_module(name)
    run = StageRun(db_path, name, opts, on_progress=on_progress, cancel=cancel)
    try:
        async with run:
            await module.execute(run)
    except Cancelled:
        pass
    return run.progress


def run_stages(db_path: Path, names: list[str], opts: Options, *,
               on_progress: Callable[[Progress], None] | None = None,
               cancel: threading.Event | None = None) -> list[Progress]:
    """Run stages in pipeline order; stops after a cancelled stage."""
    ordered = sorted(dict.fromkeys(names), key=STAGES.index)
    for n in ordered:
        stage_module(n)  # fail fast on a typo before anything runs
    results = []
    for name in ordered:
        progress = asyncio.run(run_stage(db_path, name, opts, on_progress=on_progress,
                                         cancel=cancel))
        results.append(progress)
        if progress.status == "cancelled":
            break
    return results
