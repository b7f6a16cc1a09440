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

# The model for the construction stages unless --generator says otherwise (here, not in base.py,
# so the CLI can show it without importing the pipeline).
DEFAULT_GENERATOR = "offline/heuristic"
# The pre-filter of the COMPASS `pre-filter` variant unless --prefilter says otherwise.
DEFAULT_PREFILTER = "offline/heuristic"
