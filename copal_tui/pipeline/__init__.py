"""Pipeline stages: each reads rows from the store and writes new rows; idempotent, resumable.

Listed in pipeline order: ablation items are selected before `respond` and `judge` so the
baselines are answered and judged like COPAL's own suite. The COMPASS-style single-policy
stages (issue 7) come after the COPAL ones; `copal run compass` runs the four of them. The
CompliBench-style dialogue stages (issue 8) come last, variants before the judge so a run of
both judges the new variant dialogues too.
"""

COPAL_STAGES = ("ground", "compose", "generate", "select", "project", "ablate", "respond",
                "judge")
# compass_generate writes base queries, verifies them and writes edge queries from the kept
# denied-base ones (edges need kept bases); compass_verify verifies whatever is still pending.
COMPASS_STAGES = ("compass_generate", "compass_verify", "compass_respond", "compass_judge")
DIALOGUE_STAGES = ("dialogue_variants", "dialogue_judge")
STAGES = COPAL_STAGES + COMPASS_STAGES + DIALOGUE_STAGES

# There is no default generator or pre-filter: a suite built by the offline engine's heuristics
# must never pass for one a language model built. The stages that build a suite (and the COMPASS
# variants that need a writer or a pre-filter) refuse to start without one; the environment may
# name them (the CLI's --generator and --prefilter read these variables).
GENERATOR_ENV = "COPAL_GENERATOR"
PREFILTER_ENV = "COPAL_PREFILTER"
GENERATOR_STAGES = ("ground", "compose", "generate", "select", "project", "ablate",
                    "compass_generate", "compass_verify", "dialogue_variants")


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
