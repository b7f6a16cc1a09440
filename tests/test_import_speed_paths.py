"""The import's fast paths for responses and judgments, checked through `copal import`.

Those lines are read a window at a time, decoded by orjson when compact (else by the strict
scanner alone) and checked by hand; anything the fast path is not sure of goes through the
full per-line check. These tests
put the lines the fast path must hand over (a repeated name, text after the object, a line
that is not UTF-8, leading spaces, CRLF endings, no final newline) among thousands of good
ones, with the types interleaved and windows and chunks made small, and check that the store
ends up as the plain import leaves it, or that the error names file and line and the store
is untouched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.interchange import importer, loader
from tests.test_import_bulk import records, snapshot, write_jsonl


@pytest.fixture
def small_windows(monkeypatch) -> None:
    """Windows of 50 lines and chunks of 70 records, so a few thousand cross many of both."""
    monkeypatch.setattr(loader, "_WINDOW", 50)
    monkeypatch.setattr(importer, "CHUNK", 70)


def _lines(recs: list[dict]) -> list[str]:
    return [json.dumps(r) for r in recs]


def _judgment_line(recs: list[dict], nth: int) -> int:
    """The line (from 1) of the `nth` judgment record."""
    return [n for n, r in enumerate(recs, 1) if r["type"] == "judgment"][nth]


def _refused(cli, db: Path, source: Path, data: bytes) -> str:
    """Import `data` written to `source`: it must be refused (exit 2) with the store untouched.
    Returns what was said on stderr."""
    source.write_bytes(data)
    before = snapshot(db)
    result = cli("import", str(source))
    assert result.exit_code == 2, result.output
    assert snapshot(db) == before
    return result.stderr


def _export(cli, db: Path, out: Path) -> str:
    result = cli("export", "--format", "jsonl", "--out", str(out), db=db)
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_odd_but_valid_lines_store_what_plain_lines_store(cli, initialised, tmp_path,
                                                         small_windows):
    recs = records()
    plain = write_jsonl(tmp_path / "plain.jsonl", recs)
    assert cli("import", str(plain)).exit_code == 0
    expected = _export(cli, initialised, tmp_path / "plain-out.jsonl")

    # Leading spaces on some responses, CRLF on every line, no newline after the last one.
    lines = [("  " + line if r["type"] == "response" and n % 7 == 0 else line)
             for n, (r, line) in enumerate(zip(recs, _lines(recs), strict=True))]
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes("\r\n".join(lines).encode("utf-8"))
    other = tmp_path / "other.db"
    assert cli("init", db=other).exit_code == 0
    result = cli("import", str(odd), db=other)

    assert result.exit_code == 0, result.output
    assert _export(cli, other, tmp_path / "odd-out.jsonl") == expected


@pytest.mark.parametrize("spoil, words", [
    (lambda line: line[:-1] + ', "judge": "judge-x"}', "appears twice"),
    (lambda line: line + ' {"type": "judgment"}', "bad JSON"),
    (lambda line: line.replace('"mode": "contract"', '"mode": "contract", "extra": 1'),
     "unknown field"),
])
def test_a_bad_judgment_among_good_ones_names_its_line(cli, initialised, tmp_path,
                                                       small_windows, spoil, words):
    recs = records()
    lines = _lines(recs)
    bad = _judgment_line(recs, 1500)
    lines[bad - 1] = spoil(lines[bad - 1])
    source = tmp_path / "bad.jsonl"

    said = _refused(cli, initialised, source, ("\n".join(lines) + "\n").encode("utf-8"))

    assert f"{source}:{bad}" in said
    assert words in said


def test_a_response_line_not_utf8_names_its_line(cli, initialised, tmp_path, small_windows):
    recs = records()
    data = [line.encode("utf-8") for line in _lines(recs)]
    bad = [n for n, r in enumerate(recs, 1) if r["type"] == "response"][600]
    data[bad - 1] = data[bad - 1].replace(b"pounds", b"pounds \xff")
    source = tmp_path / "latin.jsonl"

    said = _refused(cli, initialised, source, b"\n".join(data) + b"\n")

    assert f"{source}:{bad}" in said
    assert "UTF-8" in said


def _compact(recs: list[dict]) -> list[str]:
    """Lines as `copal export` writes them: no spaces, non-ASCII kept (what orjson writes)."""
    return [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in recs]


def test_compact_lines_store_what_spaced_lines_store(cli, initialised, tmp_path, small_windows):
    recs = records()
    spaced = write_jsonl(tmp_path / "spaced.jsonl", recs)
    assert cli("import", str(spaced)).exit_code == 0
    expected = _export(cli, initialised, tmp_path / "spaced-out.jsonl")
    compact = tmp_path / "compact.jsonl"
    compact.write_text("\n".join(_compact(recs)) + "\n", encoding="utf-8")
    other = tmp_path / "other.db"
    assert cli("init", db=other).exit_code == 0

    result = cli("import", str(compact), db=other)

    assert result.exit_code == 0, result.output
    assert _export(cli, other, tmp_path / "compact-out.jsonl") == expected


@pytest.mark.parametrize("kind, nth", [("judgment", 1500), ("response", 600)])
def test_a_compact_line_repeating_a_name_names_its_line(cli, initialised, tmp_path,
                                                        small_windows, kind, nth):
    # orjson keeps the last of two equal names without a word; the compact line is the one it
    # would read, so this is the repeat its fast path must still refuse.
    recs = records()
    lines = _compact(recs)
    bad = [n for n, r in enumerate(recs, 1) if r["type"] == kind][nth]
    lines[bad - 1] = lines[bad - 1][:-1] + ',"id":"other-id"}'
    source = tmp_path / "bad.jsonl"

    said = _refused(cli, initialised, source, ("\n".join(lines) + "\n").encode("utf-8"))

    assert f"{source}:{bad}: id: name 'id' appears twice in one object" in said
