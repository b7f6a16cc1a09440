"""Agreement among the traffic annotators (Cohen's kappa, Krippendorff's alpha) on category and
on error, checked against values computed by hand and by textbook formulas written here (the
kappa of observed and chance agreement, alpha from the coincidence matrix), not by the code under
test; pairs flagged sensitive left out and counted; each pair's reference label; the store read
of the log; and the figures in `copal campaign show` for a traffic campaign."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations, permutations

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.traffic import TrafficLabel
from copal_tui.metrics.traffic_agreement import (
    ADJUDICATED,
    MAJORITY,
    TIE,
    references,
    traffic_agreement,
)
from copal_tui.services.annotation import adjudication
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.traffic import reference_labels
from store.annotation import traffic_labels
from store.artifacts.traffic import purge
from store.db import connect, write
from tests.traffic_support import build_traffic_db, rows


@dataclass(frozen=True)
class Row:
    pair: str
    annotator: str
    category: str | None
    erroneous: bool | None
    sensitive: bool = False
    source: str = "web"


# Two annotators on six pairs (categories, then errors), a seventh pair labelled by A alone and
# an eighth flagged sensitive by B.
A_CAT = ["none", "single", "multi", "multi", "single", "none"]
B_CAT = ["none", "single", "multi", "single", "single", "multi"]
A_ERR = [False, True, True, True, False, False]
B_ERR = [False, True, False, True, False, True]


def example() -> list[Row]:
    out = []
    for n in range(6):
        out.append(Row(f"p{n}", "A", A_CAT[n], A_ERR[n]))
        out.append(Row(f"p{n}", "B", B_CAT[n], B_ERR[n]))
    out.append(Row("p6", "A", "single", True))
    out.append(Row("p7", "A", "multi", True))
    out.append(Row("p7", "B", None, None, sensitive=True))
    return out


def cohen(a: list[object], b: list[object]) -> float:
    """(p_o - p_e) / (1 - p_e), from the two raters' marginals."""
    n = len(a)
    p_o = Fraction(sum(x == y for x, y in zip(a, b, strict=True)), n)
    ca, cb = Counter(a), Counter(b)
    p_e = sum(Fraction(ca[k] * cb[k], n * n) for k in set(a) | set(b))
    return float((p_o - p_e) / (1 - p_e))


def alpha(units: list[list[object]]) -> float:
    """Nominal alpha: 1 - (n - 1) * (off-diagonal coincidences) / sum_{c != k} n_c n_k, over
    units with two values or more (each ordered pair of a unit's m values weighs 1/(m-1))."""
    o: Counter[tuple[object, object]] = Counter()
    for values in (u for u in units if len(u) >= 2):
        for i, j in permutations(range(len(values)), 2):
            o[values[i], values[j]] += Fraction(1, len(values) - 1)
    n_c: Counter[object] = Counter()
    for (c, _k), w in o.items():
        n_c[c] += w
    n = sum(n_c.values())
    off = sum(w for (c, k), w in o.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    return float(1 - (n - 1) * off / expected)


def test_two_annotators_against_hand_computed_values():
    got = traffic_agreement(example())
    assert (got.n_pairs, got.n_annotators, got.excluded_sensitive) == (6, 2, 1)
    # By hand: category p_o = 4/6, p_e = (2*1 + 2*3 + 2*2)/36 = 1/3, kappa = 1/2; alpha from
    # n_none = 3, n_single = 5, n_multi = 4 and four off-diagonal coincidences:
    # 1 - 11 * 4 / 94. Error: p_o = 4/6, p_e = 1/2, kappa = 1/3; alpha = 1 - 11 * 4 / 72.
    assert got.category.kappa.value == pytest.approx(0.5)
    assert got.category.alpha.value == pytest.approx(1 - 44 / 94)
    assert got.error.kappa.value == pytest.approx(1 / 3)
    assert got.error.alpha.value == pytest.approx(1 - 44 / 72)
    # The same through the textbook formulas.
    assert got.category.kappa.value == pytest.approx(cohen(A_CAT, B_CAT))
    assert got.error.alpha.value == pytest.approx(alpha([list(u) for u in zip(A_ERR, B_ERR,
                                                                            strict=True)]))
    [pair] = got.category.pairwise
    assert (pair.annotator_a, pair.annotator_b, pair.n) == ("A", "B", 6)
    assert pair.agreement.value == pytest.approx(4 / 6)


def test_three_annotators_with_gaps():
    # C labels four of the six pairs; kappa is the mean of the three pairwise kappas.
    c_cat = ["none", "multi", "multi", "multi", None, None]
    c_err = [False, True, True, False, None, None]
    labels = [r for r in example() if r.pair < "p6"]
    labels += [Row(f"p{n}", "C", c_cat[n], c_err[n]) for n in range(4)]
    got = traffic_agreement(labels)
    assert (got.n_pairs, got.n_annotators, got.excluded_sensitive) == (6, 3, 0)
    cats = {"A": A_CAT, "B": B_CAT, "C": c_cat}
    errs = {"A": A_ERR, "B": B_ERR, "C": c_err}
    for field, data in (("category", cats), ("error", errs)):
        kappas = []
        for x, y in combinations("ABC", 2):
            both = [n for n in range(6) if data[x][n] is not None and data[y][n] is not None]
            kappas.append(cohen([data[x][n] for n in both], [data[y][n] for n in both]))
        units = [[data[w][n] for w in "ABC" if data[w][n] is not None] for n in range(6)]
        measured = getattr(got, field)
        assert measured.kappa.value == pytest.approx(sum(kappas) / 3)
        assert measured.alpha.value == pytest.approx(alpha(units))


def test_one_class_only_leaves_kappa_undefined_with_its_reason():
    same = [Row(f"p{n}", who, "single", n == 0) for n in range(3) for who in ("A", "B")]
    got = traffic_agreement(same)
    assert got.category.kappa.value is None and "one category only" in got.category.kappa.reason
    assert got.category.alpha.value is None
    assert got.error.kappa.value == pytest.approx(1.0)  # both flag p0 alone
    empty = traffic_agreement([Row("p0", "A", "none", False)])
    assert empty.n_pairs == 0 and empty.error.alpha.reason.startswith("no pair")


def test_reference_labels():
    labels = [Row("p0", "A", "single", True), Row("p0", "B", "multi", True),  # decided
              Row("p1", "A", "none", False), Row("p1", "B", "none", False),
              Row("p1", "C", "multi", True),  # two against one
              Row("p2", "A", "single", True), Row("p2", "B", "multi", True),  # a tie
              Row("p3", "A", "multi", False), Row("p3", "B", None, None, sensitive=True)]
    decisions = [Row("p0", "lead", "multi", False)]
    got = {r.pair: (r.category, r.erroneous, r.sensitive, r.basis)
           for r in references(labels, decisions)}
    assert got == {"p0": ("multi", False, False, ADJUDICATED),
                   "p1": ("none", False, False, MAJORITY),
                   "p2": (None, None, False, TIE),
                   "p3": ("multi", False, True, MAJORITY)}


def _label_like_the_example(db_path) -> list[str]:
    """Label the campaign's first six pairs (by id) as A = ana and B = ben in `example`."""
    conn = connect(db_path)
    ids = [r["id"] for r in rows(db_path, "SELECT id FROM traffic_pairs ORDER BY id")]
    for who, cats, errs in (("ana", A_CAT, A_ERR), ("ben", B_CAT, B_ERR)):
        q = AnnotationQueue.of_campaign(conn, "audit", who)
        for n, pid in enumerate(ids):
            q.submit(pid, TrafficLabel(category=cats[n], erroneous=errs[n]))
    conn.conn.close()
    return ids


def test_the_store_read_and_the_reference_of_a_decided_pair(tmp_path):
    db_path = build_traffic_db(tmp_path)
    ids = _label_like_the_example(db_path)
    conn = connect(db_path)
    adjudication.decide(conn, "traffic", ids[3], "lead",
                        TrafficLabel(category="multi", erroneous=False))
    with write(conn):
        purge(conn, [ids[4]])  # a purged pair leaves every figure
    read = traffic_labels.votes(conn, campaign="audit")
    assert [(v.pair, v.annotator, v.category, v.erroneous, v.sensitive, v.decision)
            for v in read][:2] == [(ids[0], "ana", "none", False, False, False),
                                   (ids[0], "ben", "none", False, False, False)]
    assert len(read) == 11 and ids[4] not in {v.pair for v in read}
    assert [(v.pair, v.annotator, v.category, v.erroneous)
            for v in read if v.decision] == [(ids[3], "lead", "multi", False)]
    linked = traffic_labels.votes(conn, worlds=["harbor-clinics"])
    assert {v.source for v in linked} == {"web"}
    refs = {r.pair: r for r in reference_labels(conn)}
    conn.conn.close()
    assert (refs[ids[3]].category, refs[ids[3]].basis) == ("multi", ADJUDICATED)
    assert refs[ids[5]].basis == TIE  # none against multi, undecided
    assert {r.source for r in refs.values()} <= {"web", "app"}


def test_campaign_show_gives_the_agreement(tmp_path):
    db_path = build_traffic_db(tmp_path)
    _label_like_the_example(db_path)
    runner = CliRunner()
    out = runner.invoke(main, ["--db", str(db_path), "campaign", "show", "audit"],
                        terminal_width=100)
    assert out.exit_code == 0, out.output
    lines = {line.split()[1]: line for line in out.output.splitlines()
             if line.split()[1:2] in (["category"], ["error"])}
    assert "0.500" in lines["category"] and f"{1 - 44 / 94:.3f}" in lines["category"]
    assert f"{1 / 3:.3f}" in lines["error"] and f"{1 - 44 / 72:.3f}" in lines["error"]
    as_json = runner.invoke(main, ["--db", str(db_path), "campaign", "show", "audit", "--json"])
    agreement = json.loads(as_json.output)["agreement"]
    assert (agreement["n_pairs"], agreement["n_annotators"]) == (6, 2)
    assert agreement["category"]["kappa"] == pytest.approx(0.5)
    assert agreement["error"]["alpha"] == pytest.approx(1 - 44 / 72)


def test_a_traffic_campaign_is_drawn_by_source(tmp_path):
    db_path = build_traffic_db(tmp_path, campaign=None)
    runner = CliRunner()

    def create(*args: str):
        return runner.invoke(main, ["--db", str(db_path), "campaign", "create", *args])

    made = create("web-only", "--suite", "traffic", "--model", "web")
    assert made.exit_code == 0, made.output
    assert {r["source"] for r in rows(db_path, "SELECT p.source FROM campaign_subjects c JOIN "
                                      "traffic_pairs p ON p.id = c.subject WHERE "
                                      "c.campaign = 'web-only'")} == {"web"}
    wrong = create("x", "--suite", "traffic", "--model", "wab")
    assert wrong.exit_code == 2 and "--model wab" in wrong.output and "web" in wrong.output
    assert create("y", "--suite", "traffic", "--pattern", "pairwise").exit_code == 2
    assert rows(db_path, "SELECT name FROM campaigns WHERE name IN ('x', 'y')") == []
