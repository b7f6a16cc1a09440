"""A COMPASS scenario with both suites, offline end to end: the composed COPAL pipeline runs on
the imported organisation (its allow/deny topics ground to PERMIT/PROHIBIT clauses), the COMPASS
suite runs on the same world, and the report sets single-policy PAS beside the composed error."""

from __future__ import annotations

import json

BOT, JUDGE = "offline/keyword-guard", "offline/judge"


def test_compass_world_gets_both_suites_and_the_contrast(cli, initialised, samples):
    assert cli("import", "--from", "compass", str(samples / "compass")).exit_code == 0
    world = "kestrelpharmacy"
    copal = cli("run", "ground", "compose", "generate", "select", "respond", "judge",
                "--world", world, "--model", BOT, "--judge", JUDGE, "--budget", "8",
                "--variants", "1")
    assert copal.exit_code == 0, copal.output
    compass = cli("run", "compass", "--world", world, "--model", BOT, "--judge", JUDGE,
                  "--per-policy", "1")
    assert compass.exit_code == 0, compass.output
    doc = json.loads(cli("report", "--json").stdout)
    [row] = [r for r in doc["pas_vs_composed"] if r["world"] == world and r["model"] == BOT]
    assert row["n"] > 0 and 0 <= row["pas"] <= 1
    assert row["composed_n"] > 0 and row["composed_error_rate"] is not None
    # The composed side is the report's own error rate for that world and model.
    [rates] = [r for r in doc["error_rates"] if r["model"] == BOT]
    assert rates["by_world"][world]["n"] == row["composed_n"]
