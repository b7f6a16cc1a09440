"""copal's dialogue-judging figures equal CompliBench's own evaluation rule on the same files.

The oracle below restates, independently of copal's code, what CompliBench's public evaluation
script does (`convjudge/evaluation/metrics.py`: `build_truth`, `build_pred`, `evaluate_file`,
`summarize`; `eval_llm.py` counts every attempt file on its own): truth from every assistant
turn tagged with a category and key, mistakes overriding; the phase an integer with -1 when
absent, compared strictly; micro-averages over all files. It reads the raw JSON files, and the
report built through `copal import` must give the same numbers: on the shipped sample and on a
fixture whose judge names phases for Category 3 turns.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from copal_tui.services.report import dialogue_judging
from store.db import connect

JUDGE = "ref-judge"


def _category(cat: str) -> str:
    c = (cat or "").strip().lower()
    for n in ("1", "2", "3"):
        if c.startswith((f"category {n}", f"cat {n}", f"cat{n}")):
            return f"Category {n}"
    return cat


def _truth(convo: dict) -> dict[int, tuple[str, str, int, bool]]:
    out = {}
    for m in convo["message_list"]:
        if m.get("role") != "assistant" or not m.get("category") or not m.get("key"):
            continue
        out[int(m["turn_index"])] = (_category(m["category"]), str(m["key"]),
                                     int(m.get("phase", -1)), False)
    for m in convo.get("mistakes", []):
        out[int(m["turn_index"])] = (_category(m["guidance category"]), str(m["guidance key"]),
                                     int(m.get("guideline_phase", -1)), True)
    return out


def _pred(usage: dict) -> dict[int, tuple[str, str, int, bool]]:
    out = {}
    for row in usage["turn_guidelines"]:
        g = row.get("guideline_used") or {}
        out[int(row["turn_index"])] = (_category(str(g.get("guidance_category", ""))),
                                       str(g.get("guidance_key", "")),
                                       int(g.get("guideline_phase", -1)),
                                       bool(g.get("is_violation")))
    return out


def oracle(root: Path) -> dict[str, dict[str, float]]:
    """{domain or 'all': the three micro figures and the file accuracy} over every usage file."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for usage_path in sorted(root.rglob("*_usage*.json")):
        stem = usage_path.stem.split("_usage", 1)[0]
        convo = json.loads((usage_path.parent / f"{stem}.json").read_text())
        truth, pred = _truth(convo), _pred(json.loads(usage_path.read_text()))
        f = defaultdict(int)
        for ti, (cat, key, phase, violation) in truth.items():
            p = pred.get(ti)
            same = p is not None and p[:3] == (cat, key, phase)
            flagged = bool(p and p[3])
            if violation:
                f["v_n"] += 1
                f["v_ok"] += flagged
                f["v_strict"] += same and flagged
            else:
                f["c_n"] += 1
                f["c_ok"] += same and not flagged
        right = f["c_ok"] == f["c_n"] and f["v_ok"] == f["v_n"]
        for scope in (usage_path.parent.name, "all"):
            for k, v in f.items():
                counts[scope][k] += v
            counts[scope]["files"] += 1
            counts[scope]["files_ok"] += right
    return {scope: {"compliant_turn_accuracy": c["c_ok"] / c["c_n"],
                    "violation_detection_accuracy": c["v_ok"] / c["v_n"],
                    "strict_violation_detection_accuracy": c["v_strict"] / c["v_n"],
                    "conversation_accuracy": c["files_ok"] / c["files"]}
            for scope, c in counts.items()}


def copal_rows(cli, root: Path) -> dict[str, dict]:
    for args in (("import", "--from", "complibench", str(root)),
                 ("import", "--from", "complibench-judge", "--judge", JUDGE, str(root))):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    return {r.domain: r.to_dict() for r in dialogue_judging(connect(cli.db_path)).rows}


@pytest.fixture
def cli_db(cli, initialised):
    cli.db_path = initialised
    return cli


def _assert_same(ours: dict[str, dict], theirs: dict[str, dict[str, float]]) -> None:
    assert set(ours) == set(theirs)
    for scope, figures in theirs.items():
        for name, value in figures.items():
            assert ours[scope][name] == pytest.approx(value), (scope, name)


def test_the_sample_set_scores_as_complibench_scores_it(cli_db, samples):
    root = samples / "complibench"
    _assert_same(copal_rows(cli_db, root), oracle(root))


GUIDELINES = {
    "Category 1: Universal Compliance": {"greet": "Greet the customer."},
    "Category 2: Intent Triggered Guidelines": {
        "open_account": {"Phase 1": "Ask for the customer's name.",
                         "Phase 2": "Ask for a proof of address."}},
    "Category 3: Condition Triggered Guidelines": {
        "minor": "If the customer is under 18, ask for a guardian.",
        "complaint": "If the customer complains, offer the complaints form."},
}


def _turn(i: int, role: str, text: str, cat: str | None = None, key: str | None = None,
          phase: int | None = None) -> dict:
    t: dict = {"turn_index": i, "role": role, "content": text}
    if cat:
        t.update(category=cat, key=key, phase=phase)
    return t


def _used(i: int, cat: str, key: str, phase: int | None, violation: bool) -> dict:
    g: dict = {"guidance_category": cat, "guidance_key": key, "is_violation": violation,
               "judge_reason": "r"}
    if phase is not None:
        g["guideline_phase"] = phase
    return {"turn_index": i, "guideline_used": g}


C2, C3 = "Category 2: Intent Triggered Guidelines", "Category 3: Condition Triggered Guidelines"


def write_fixture(root: Path) -> Path:
    """One bank conversation: turn 1 Category 2 phase 1, turn 3 Category 3 (phase -1), turn 5
    Category 3 violating. Attempt 1 names phase 2 for the Category 3 turn 3 (wrong under the
    strict rule) and leaves the phase out for turn 5 (-1: right); attempt 2 gets every phase
    right but misses the violation."""
    d = root / "bank"
    d.mkdir(parents=True)
    convo = {
        "assistant_guidelines": GUIDELINES,
        "message_list": [
            _turn(0, "user", "I'd like to open an account."),
            _turn(1, "assistant", "Sure, what is your name?", C2, "open_account", 1),
            _turn(2, "user", "I'm 16."),
            _turn(3, "assistant", "Please bring a guardian.", C3, "minor", -1),
            _turn(4, "user", "This is a terrible service."),
            _turn(5, "assistant", "Sorry to hear that.", C3, "complaint", -1),
        ],
        "mistakes": [{"turn_index": 5, "guidance category": C3, "guidance key": "complaint",
                      "guideline_phase": -1, "guideline": "Never mention the form.",
                      "evidence": "Sorry to hear that."}],
    }
    (d / "conversation_00001.json").write_text(json.dumps(convo))
    attempts = {
        "conversation_00001_usage.json": [_used(1, C2, "open_account", 1, False),
                                          _used(3, C3, "minor", 2, False),
                                          _used(5, C3, "complaint", None, True)],
        "conversation_00001_usage_attempt2.json": [_used(1, C2, "open_account", 1, False),
                                                   _used(3, C3, "minor", -1, False),
                                                   _used(5, C3, "complaint", -1, False)],
    }
    for name, rows in attempts.items():
        (d / name).write_text(json.dumps({"turn_guidelines": rows}))
    return root


def test_category_3_phases_compared_strictly_as_complibench_does(cli_db, tmp_path):
    root = write_fixture(tmp_path / "data")
    ours = copal_rows(cli_db, root)
    _assert_same(ours, oracle(root))
    # By hand: compliant turns 1 and 3 in two files: 1 of 2 right, then 2 of 2 -> 3/4;
    # violation 5 flagged once of twice -> 1/2, strictly too; files: attempt 1 has turn 3
    # wrong, attempt 2 misses the violation -> 0/2.
    bank = ours["bank"]
    assert bank["compliant_turn_accuracy"] == pytest.approx(3 / 4)
    assert bank["violation_detection_accuracy"] == pytest.approx(1 / 2)
    assert bank["strict_violation_detection_accuracy"] == pytest.approx(1 / 2)
    assert bank["conversation_accuracy"] == 0
