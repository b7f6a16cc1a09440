"""The report's `observed_facets` over judgments whose stored facet is not a facet's exact
value: a spelling the rules accept ("Over Refusal") counts under its facet, a name that is no
facet ("rudeness") counts as none given and as unrecognised. The report reads the judges'
facets as codes in its one pass over the judgments and fetches such names apart, so this
checks that second path end to end, through `copal report --json`.

The store is tests/test_observed_facets.py's; the expected counts are worked out by hand from
its tables (see the comments there): judge J1 gave A:I1 over_refusal and B:I4 all_withholding,
both agreeing with the human reference.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from copal_tui.cli import main
from tests.test_metrics_fixture import build_fixture
from tests.test_observed_facets import AW, BO, OR, PF, counts, records


def _report(db: Path) -> dict:
    result = CliRunner().invoke(main, ["--db", str(db), "report", "--json", "--bootstrap", "20"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["observed_facets"]


def test_facet_names_that_are_no_exact_value_go_through_the_rules(tmp_path):
    db = build_fixture(tmp_path, records())
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE judgments SET facet = 'Over Refusal' WHERE response_id = 'A:I1'")
        conn.execute("UPDATE judgments SET facet = 'rudeness' WHERE response_id = 'B:I4'")
        stored = dict(conn.execute("SELECT response_id, facet FROM judgments "
                                   "WHERE response_id IN ('A:I1', 'B:I4')").fetchall())
    conn.close()
    assert stored == {"A:I1": "Over Refusal", "B:I4": "rudeness"}

    section = _report(db)
    judge = section["judge_table"]
    assert judge["n_errors"] == 9
    assert judge["unrecognised_facets"] == 1  # "rudeness"
    assert counts(judge) == {
        BO: {OR: 1, BO: 1},  # A:I1 "Over Refusal" is over_refusal, B:I1 boundary_overreach
        OR: {BO: 1, OR: 1},  # A:I2, C:I2 (unchanged)
        PF: {PF: 1, "blurred_disclosure": 1},  # A:I3, B:I3 (unchanged)
        AW: {"none_given": 2, PF: 1},  # A:I4 gave none, B:I4 "rudeness" is none, C:I4
    }
    agreement = section["agreement"]
    # Both call errors: 7 as before. B:I4 has no judge facet now, so 5 are compared (not 6),
    # and 4 agree (B:I4 agreed before; A:I1 still agrees on over_refusal).
    assert (agreement["n_both_errors"], agreement["n_compared"], agreement["n_agree"]) == \
        (7, 5, 4)
