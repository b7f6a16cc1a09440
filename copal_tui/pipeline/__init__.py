"""Pipeline stages: each reads rows from the store and writes new rows; idempotent, resumable.

The registry is every suite's stages as its descriptor names them (`copal_tui.domain.suites`),
in pipeline order: suite by suite, each suite's in its own order, with the function whose
`execute(run)` does the work (imported on first use, so `copal --help` loads no stage) and the
models it needs. `copal run compass` runs the four COMPASS stages.
"""

from __future__ import annotations

from copal_tui.domain.suites import COMPASS, COPAL, DIALOGUE, SUITES, Stage

__all__ = ["Stage"]


# Every suite's stages, suite by suite in registration order (COPAL, COMPASS, dialogue).
REGISTRY: dict[str, Stage] = {s.name: s for spec in SUITES.values() for s in spec.stages}
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
