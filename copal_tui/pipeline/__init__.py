"""Pipeline stages: each reads rows from the store and writes new rows; idempotent, resumable.

The registry lists every stage once, in pipeline order, with its suite, the module whose
`execute(run)` does the work (imported on first use, so `copal --help` loads no stage) and the
models it needs. Ablation items are selected before `respond` and `judge` so the baselines are
answered and judged like COPAL's own suite. The COMPASS-style single-policy stages come after
the COPAL ones; `copal run compass` runs the four of them. The CompliBench-style dialogue stages
come last, variants before the judge so a run of both judges the new variant dialogues too.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: its name, its suite (which of `Options`' per-suite options it
    reads: copal, compass or dialogue), and what it needs to start."""

    name: str
    suite: str
    needs_generator: bool = False
    needs_models: bool = False
    needs_judges: bool = False

    @property
    def module(self) -> str:
        return f"copal_tui.pipeline.{self.name}"

    def execute(self) -> Callable[[Any], Awaitable[None]]:
        """The stage's `execute(run)` coroutine function."""
        execute: Callable[[Any], Awaitable[None]] = importlib.import_module(self.module).execute
        return execute


REGISTRY: dict[str, Stage] = {s.name: s for s in (
    Stage("ground", "copal", needs_generator=True),
    Stage("compose", "copal", needs_generator=True),
    Stage("generate", "copal", needs_generator=True),
    Stage("select", "copal", needs_generator=True),
    Stage("project", "copal", needs_generator=True),
    Stage("ablate", "copal", needs_generator=True),
    Stage("respond", "copal", needs_models=True),
    Stage("judge", "copal", needs_judges=True),
    # compass_generate writes base queries, verifies them and writes edge queries from the
    # kept denied-base ones (edges need kept bases); compass_verify verifies whatever is still
    # pending.
    Stage("compass_generate", "compass", needs_generator=True),
    Stage("compass_verify", "compass", needs_generator=True),
    Stage("compass_respond", "compass", needs_models=True),
    Stage("compass_judge", "compass", needs_judges=True),
    Stage("dialogue_variants", "dialogue", needs_generator=True, needs_judges=True),
    Stage("dialogue_judge", "dialogue", needs_judges=True),
)}
STAGES = tuple(REGISTRY)
COPAL_STAGES = tuple(n for n, s in REGISTRY.items() if s.suite == "copal")
COMPASS_STAGES = tuple(n for n, s in REGISTRY.items() if s.suite == "compass")
DIALOGUE_STAGES = tuple(n for n, s in REGISTRY.items() if s.suite == "dialogue")

# There is no default generator or pre-filter: a suite built by the offline engine's heuristics
# must never pass for one a language model built. The stages that build a suite (and the COMPASS
# variants that need a writer or a pre-filter) refuse to start without one; the environment may
# name them (the CLI's --generator and --prefilter read these variables).
GENERATOR_ENV = "COPAL_GENERATOR"
PREFILTER_ENV = "COPAL_PREFILTER"
GENERATOR_STAGES = tuple(n for n, s in REGISTRY.items() if s.needs_generator)


def missing_model(stage: str, *, generator: str | None, prefilter: str | None,
                  verifier: str | None = None, compass_variants: tuple[str, ...] = ()
                  ) -> str | None:
    """Why `stage` cannot start with these models, naming the option; None when it can."""
    if stage == "compass_verify" and (verifier or generator):
        return None
    if stage in GENERATOR_STAGES and not generator:
        return (f"{stage} builds the suite and needs --generator MODEL (or {GENERATOR_ENV}); "
                "copal never picks one: pass offline/heuristic to use the offline engine's "
                "heuristics")
    if stage == "compass_respond":
        if "few-shot" in compass_variants and not generator:
            return (f"the few-shot variant's reference answers need --generator MODEL (or "
                    f"{GENERATOR_ENV})")
        if "pre-filter" in compass_variants and not prefilter:
            return (f"the pre-filter variant needs --prefilter MODEL (or {PREFILTER_ENV}); pass "
                    "offline/heuristic to use the offline engine's heuristics")
    return None
