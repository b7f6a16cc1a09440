"""Pipeline stages: each reads rows from the store and writes new rows; idempotent, resumable.

The registry is every suite's stages as its descriptor names them (`copal_tui.domain.suites`),
in pipeline order: suite by suite, each suite's in its own order, with the function whose
`execute(run)` does the work (imported on first use, so `copal --help` loads no stage) and the
models it needs. `copal run compass` runs the four COMPASS stages.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol

from copal_tui.domain.suites import COMPASS, COPAL, DIALOGUE, SUITES, load, suite
from copal_tui.pipeline.options import CompassOptions, CopalOptions, DialogueOptions


@dataclass(frozen=True)
class Stage:
    """One pipeline stage as a suite's descriptor names it (`copal_tui.domain.suites`), with
    its suite: which of `Options`' per-suite options it reads (`Options.copal`, `.compass`,
    `.dialogue`: the field named after the suite) and what it needs to start."""

    name: str
    suite: str
    entry: str
    needs_generator: bool = False
    needs_models: bool = False
    needs_judges: bool = False

    @property
    def options(self) -> type[CopalOptions | CompassOptions | DialogueOptions]:
        """The options model of the stage's suite."""
        ref = suite(self.suite).options
        if ref is None:
            raise ValueError(f"suite {self.suite!r} has stages but names no options")
        found: type[CopalOptions | CompassOptions | DialogueOptions] = load(ref)
        return found

    def execute(self) -> StageExecute:
        """The stage's `execute(run)` coroutine function (its module imported now)."""
        found: StageExecute = load(self.entry)
        return found


class StageExecute(Protocol):
    """What a stage does: `execute(run)` over a `StageRun` (typed loosely here so that the
    registry imports no stage and no run machinery)."""

    def __call__(self, run: Any, /) -> Awaitable[None]: ...


# Every suite's stages, suite by suite in registration order (COPAL, COMPASS, dialogue).
REGISTRY: dict[str, Stage] = {
    s.name: Stage(s.name, spec.name, s.entry, s.needs_generator, s.needs_models,
                  s.needs_judges)
    for spec in SUITES.values() for s in spec.stages}
STAGES = tuple(REGISTRY)
COPAL_STAGES = COPAL.stage_names()
COMPASS_STAGES = COMPASS.stage_names()
DIALOGUE_STAGES = DIALOGUE.stage_names()

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
