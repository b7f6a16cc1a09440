"""Pipeline stages: each reads rows from the store and writes new rows; idempotent, resumable.

Listed in pipeline order: ablation items are selected before `respond` and `judge` so the
baselines are answered and judged like COPAL's own suite.
"""

STAGES = ("ground", "compose", "generate", "select", "project", "ablate", "respond", "judge")
