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
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from copal_tui.pipeline.options import CompassOptions, CopalOptions, DialogueOptions

Suite = Literal["copal", "compass", "dialogue"]
SUITE_OPTIONS: dict[str, type[CopalOptions | CompassOptions | DialogueOptions]] = {
    "copal": CopalOptions, "compass": CompassOptions, "dialogue": DialogueOptions}


class StageExecute(Protocol):
    """What a stage does: `execute(run)` over a `StageRun` (typed loosely here so that the
    registry imports no stage and no run machinery)."""

    def __call__(self, run: Any, /) -> Awaitable[None]: ...


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: its name, its suite (which of `Options`' per-suite options it
    reads: `Options.copal`, `.compass` or `.dialogue`), its entry point ("module:function",
    named here rather than derived from the stage's name, and imported on first use), and
    what it needs to start."""

    name: str
    suite: Suite
    entry: str
    needs_generator: bool = False
    needs_models: bool = False
    needs_judges: bool = False

    @property
    def options(self) -> type[CopalOptions | CompassOptions | DialogueOptions]:
        """The options model of the stage's suite (the `Options` field named after it)."""
        return SUITE_OPTIONS[self.suite]

    def execute(self) -> StageExecute:
        """The stage's `execute(run)` coroutine function."""
        module, _, function = self.entry.partition(":")
        found: StageExecute = getattr(importlib.import_module(module), function)
        return found


def _entry(module: str) -> str:
    return f"copal_tui.pipeline.{module}:execute"


REGISTRY: dict[str, Stage] = {s.name: s for s in (
    Stage("ground", "copal", _entry("ground"), needs_generator=True),
    Stage("compose", "copal", _entry("compose"), needs_generator=True),
    Stage("generate", "copal", _entry("generate"), needs_generator=True),
    Stage("select", "copal", _entry("select"), needs_generator=True),
    Stage("project", "copal", _entry("project"), needs_generator=True),
    Stage("ablate", "copal", _entry("ablate"), needs_generator=True),
    Stage("respond", "copal", _entry("respond"), needs_models=True),
    Stage("judge", "copal", _entry("judge"), needs_judges=True),
    # compass_generate writes base queries, verifies them and writes edge queries from the
    # kept denied-base ones (edges need kept bases); compass_verify verifies whatever is still
    # pending.
    Stage("compass_generate", "compass", _entry("compass_generate"), needs_generator=True),
    Stage("compass_verify", "compass", _entry("compass_verify"), needs_generator=True),
    Stage("compass_respond", "compass", _entry("compass_respond"), needs_models=True),
    Stage("compass_judge", "compass", _entry("compass_judge"), needs_judges=True),
    Stage("dialogue_variants", "dialogue", _entry("dialogue_variants"), needs_generator=True,
          needs_judges=True),
    Stage("dialogue_judge", "dialogue", _entry("dialogue_judge"), needs_judges=True),
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
