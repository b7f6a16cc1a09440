"""The de-identifier against its corpora (tests/fixtures/deid): recall of at least 0.98 for
each type over the planted identifiers, false positives on at most 1% of the clean messages,
and corpora that are what their generator writes and cover what they claim to."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from copal_tui.domain.deid import Deidentifier, load_rules

CORPUS = Path(__file__).parent / "fixtures" / "deid"
TYPES = ("EMAIL", "PHONE", "CARD", "IBAN", "IP", "URL", "ADDRESS", "ACCOUNT", "ORDER", "TICKET",
         "NAME", "EMPLOYEE_ID")
# Types whose value is a run of digits and letters in any grouping: no trace means the value
# without its spaces, dashes, dots and brackets is not in the output so written either.
COMPACT = {"PHONE", "CARD", "IBAN", "ACCOUNT", "ORDER", "TICKET"}
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]")


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS / name).read_text(encoding="utf-8").splitlines()]


def _compact(text: str) -> str:
    return _NOT_ALNUM.sub("", text).upper()


def _removed(item: dict, out: str) -> bool:
    """No trace of the planted value remains, and a placeholder of its type stands."""
    folded = out.casefold()
    for part in item.get("parts") or [item["value"]]:
        if part.casefold() in folded or " ".join(part.split()).casefold() in folded:
            return False
    if item["type"] in COMPACT and _compact(item["value"]) in _compact(out):
        return False
    return f"<{item['type']}_" in out


@pytest.fixture(scope="module")
def engine() -> Deidentifier:
    return Deidentifier(load_rules(CORPUS / "rules.yaml"))


@pytest.fixture(scope="module")
def recall(engine: Deidentifier) -> dict[str, tuple[int, int]]:
    found, planted = Counter(), Counter()
    for row in _rows("planted.jsonl"):
        (out,) = engine.redact([row["text"]]).texts
        for item in row["planted"]:
            planted[item["type"]] += 1
            found[item["type"]] += _removed(item, out)
    return {t: (found[t], planted[t]) for t in planted}


@pytest.mark.parametrize("kind", TYPES)
def test_recall_per_type_is_at_least_098(recall: dict[str, tuple[int, int]], kind: str):
    found, planted = recall[kind]
    assert planted >= 18
    assert found / planted >= 0.98, f"{kind}: {found}/{planted}"


def test_false_positives_on_at_most_one_percent_of_clean_messages(engine: Deidentifier):
    texts = [row["text"] for row in _rows("clean.jsonl")]
    changed = [t for t in texts if engine.redact([t]).texts != (t,)]
    assert len(changed) <= 0.01 * len(texts), changed


def test_the_corpora_are_large_enough_and_cover_the_formats():
    planted = _rows("planted.jsonl")
    clean = _rows("clean.jsonl")
    assert len(planted) >= 300 and len(clean) >= 300
    assert len({r["text"] for r in clean}) == len(clean)
    values: dict[str, list[str]] = {}
    for row in planted:
        for item in row["planted"]:
            assert item["value"] in row["text"]
            values.setdefault(item["type"], []).append(item["value"])
    assert set(values) == set(TYPES)
    countries = {m[1] for v in values["PHONE"] if (m := re.match(r"\+(\d{1,2})[ (-]", v))}
    assert len(countries) >= 10  # 1, 27, 31, 33, 34, 39, 44, 46, 48, 49, 52, 55, 61, 64, 65 ...
    assert {_compact(v)[0] for v in values["CARD"]} >= {"2", "3", "4", "5", "6"}
    assert len({_compact(v)[:2] for v in values["IBAN"]}) >= 10
    assert any(":" in v for v in values["IP"]) and any("." in v for v in values["IP"])


def test_the_checked_in_corpora_are_what_the_generator_writes(tmp_path: Path):
    subprocess.run([sys.executable, str(CORPUS / "generate.py"), str(tmp_path)], check=True,
                   capture_output=True)
    for name in ("planted.jsonl", "clean.jsonl"):
        assert (tmp_path / name).read_bytes() == (CORPUS / name).read_bytes(), name
