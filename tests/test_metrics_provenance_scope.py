"""The report's count of rows imported without a run, with and without a world scope.

Unscoped, the count reads the judgments alone (no join up to their items, which cost a seek per
judgment on a large store); scoped to worlds, it still counts only those worlds' rows. The store
is the metrics fixture's world w1 (13 items, 31 judgments, all imported) plus a world w2 with
two items, two responses and three judgments, counted by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from copal_tui.cli import main
from tests.test_metrics_fixture import build_fixture, fixture_records

W2 = "w2"


def _second_world() -> list[dict]:
    recs: list[dict] = [
        {"type": "world", "id": W2, "name": "W2", "industry": "test", "use_case": "test",
         "risk_tier": "low", "context": "A second test world."},
        {"type": "policy", "id": "P1", "world_id": W2, "kind": "allow", "text": "policy"},
    ]
    for n in (1, 2):
        iid = f"{W2}:I{n}"
        recs.append({"type": "item", "id": iid, "world_id": W2, "composition_id": None,
                     "pattern": None, "facet": None, "query": f"query {n}",
                     "required": [{"id": "R1", "text": "does it"}], "forbidden": [],
                     "method": "copal", "parent_item_id": None, "selected": False})
        recs.append({"type": "response", "id": f"{iid}@A", "item_id": iid, "model": "A",
                     "text": "an answer"})
    # Three judgments: J1 on both responses, J2 on the first.
    for rid, judge in ((f"{W2}:I1@A", "J1"), (f"{W2}:I2@A", "J1"), (f"{W2}:I1@A", "J2")):
        recs.append({"type": "judgment", "id": f"{rid}+{judge}", "response_id": rid,
                     "judge": judge, "mode": "contract", "observed": ["R1"], "facet": None,
                     "rationale": "r"})
    return recs


def _imported(db: Path, *args: str) -> dict[str, int]:
    result = CliRunner().invoke(main, ["--db", str(db), "report", "--json", *args],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["scope"]["provenance"]["copal"]["imported"]


def test_imported_counts_unscoped_and_per_world(tmp_path: Path) -> None:
    db = build_fixture(tmp_path, fixture_records() + _second_world())
    # Every world: w1's 13 items and 31 judgments, w2's 2 items and 3 judgments.
    assert _imported(db) == {"copal:items": 15, "copal:judgments": 34}
    assert _imported(db, "--world", W2) == {"copal:items": 2, "copal:judgments": 3}
    assert _imported(db, "--world", "w1") == {"copal:items": 13, "copal:judgments": 31}
