"""The report's provenance names the choices behind a suite's figures where copal offers a way
besides the reference's (each suite's descriptor lists them): the options its runs recorded,
and for a run recorded before an option existed, copal's earlier way."""

from __future__ import annotations

from copal_tui.domain.run_manifest import RunManifest
from copal_tui.metrics.provenance import build, line


def test_compass_options_come_from_the_runs_and_older_runs_count_as_the_earlier_way():
    runs = [
        RunManifest("r1", "compass_generate", "done", options={"compass": {
            "base_writer": "organisation", "matcher": "reference",
            "denied_edge_writer": "reference", "allowed_edge_policy": "denylist",
            "edge_writer": "reference"}}),
        # Recorded before the options existed: built the earlier way.
        RunManifest("r0", "compass_generate", "done", options={"compass": {}}),
        RunManifest("r2", "compass_verify", "done", options={"compass": {"matcher": "copal"}}),
    ]
    compass = build(runs)["compass"]
    assert compass.options == {"allowed_edge_policy": ["allowlist", "denylist"],
                               "base_writer": ["organisation", "per-policy"],
                               "denied_edge_writer": ["reference", "rotation"],
                               "matcher": ["copal", "reference"]}
    assert "base writer: organisation, per-policy" in line(compass)


def test_a_suite_without_runs_names_no_option():
    found = build([RunManifest("j", "judge", "done", options={"judges": ["J"]})])
    assert found["compass"].options is None and found["dialogue"].options is None
    assert found["copal"].options is None
