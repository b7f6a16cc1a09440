"""Pipeline stages: each reads rows from the store and writes new rows; idempotent, resumable.

Listed in pipeline order: ablation items are selected before `respond` and `judge` so the
baselines are answered and judged like COPAL's own suite.
"""

STAGES = ("ground", "compose", "generate", "select", "project", "ablate", "respond", "judge")

# The model for the construction stages unless --generator says otherwise (here, not in base.py,
# so the CLI can show it without importing the pipeline).
DEFAULT_GENERATOR = "offline/heuristic"
