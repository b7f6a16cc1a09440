"""Nothing from data or a provider reaches the terminal raw, through the public CLI.

A store whose model name, judge name, policy text, query, run status and logged provider error
carry an OSC title sequence, an SGR colour, an 8-bit CSI, a bidi override and a zero-width
space; then every command that prints data (report in every stdout format, runs, stats,
export to stdout, a failing provider in `copal run`, an import error) must print no ESC, BEL,
C1 control, bidi override or zero-width space, yet still show the data: ESC as ␛ and the
invisible characters as ⟦U+XXXX⟧ in text, as \\uXXXX escapes (same values) in JSON.
Files written with --out keep the data exactly.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import example, given
from hypothesis import strategies as st

from copal_tui.cli import main
from copal_tui.domain.safe_text import json_text, visible
from copal_tui.resources import sample_worlds_dir
from tests.db_support import copy_db
from tests.http_stub_support import JsonHandler, serve_http

HOSTILE = "\x1b]2;pwned\x07\x1b[31m\x9b2J\u202e\u200b"
SHOWN = "\u241b]2;pwned\u2407\u241b[31m\u27e6U+009B\u27e72J\u27e6U+202E\u27e7\u27e6U+200B\u27e7"
MODEL = f"sample/evil{HOSTILE}bot"
JUDGE = f"test/judge{HOSTILE}"
RAW = ("\x1b", "\x07", "\x9b", "\x9d", "\u202e", "\u200b")
W = "harbor-clinics"


def assert_safe(result: Result) -> str:
    """stdout + stderr, checked for raw controls (as text and as bytes); returned as text."""
    text = result.stdout + result.stderr
    raw = result.stdout_bytes + result.stderr_bytes
    assert not [c for c in RAW if c in text], repr(text[:2000])
    assert not [b for b in (b"\x1b", b"\x07", b"\xc2\x9b", b"\xc2\x9d", b"\xe2\x80\xae")
                if b in raw]
    return text


def _invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def _ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The harbor-clinics sample, judged, with hostile strings put in by SQL afterwards
    (import validates ids and names; a store written by something else need not be)."""
    samples = sample_worlds_dir()
    db = tmp_path_factory.mktemp("escapes") / "hostile.db"
    _ok(_invoke(db, "init"))
    _ok(_invoke(db, "import", str(samples / "harbor_clinics.yaml"),
                str(samples / "harbor_clinics.jsonl")))
    conn = sqlite3.connect(db)
    ids = [r[0] for r in conn.execute("SELECT id FROM responses ORDER BY id")]
    conn.close()
    extra = db.parent / "judged.jsonl"
    extra.write_text("".join(json.dumps({
        "type": "judgment", "id": f"{rid}+test/judge+contract", "response_id": rid,
        "judge": "test/judge", "mode": "contract", "observed": [],
        "rationale": "plain", "evidence": None}) + "\n" for rid in ids), encoding="utf-8")
    _ok(_invoke(db, "import", str(extra)))
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE responses SET model = ? WHERE model = 'sample/assistant-a'",
                     (MODEL,))
        conn.execute("UPDATE judgments SET judge = ?", (JUDGE,))
        conn.execute("UPDATE policies SET text = text || ?", (HOSTILE,))
        conn.execute("UPDATE items SET query = query || ?", (HOSTILE,))
        conn.execute("INSERT INTO runs (id, stage, status, started_at, finished_at, manifest) "
                     "VALUES ('judge-evil', 'judge', ?, '2024-01-01T00:00:00Z', "
                     "'2024-01-01T00:00:01Z', ?)",
                     (f"failed{HOSTILE}", json.dumps({"errors": [{"reason": HOSTILE}]})))
        conn.execute("INSERT INTO llm_calls (request_hash, run_id, model, request, error, "
                     "created_at) VALUES ('h', 'judge-evil', ?, '{}', ?, "
                     "'2024-01-01T00:00:00Z')", (MODEL, f"provider said {HOSTILE}"))
    conn.close()
    return db


def test_report_terminal_tables_show_names_safely(hostile_db: Path) -> None:
    text = assert_safe(_ok(_invoke(hostile_db, "report", "--bootstrap", "10")))
    # Rich wraps narrow columns; the marker itself is one line: look for its pieces.
    assert "\u241b]2;pwned\u2407" in text.replace("\n", "").replace("│", "").replace(" ", "")
    assert "U+202E" in text.replace("\n", "").replace("│", "").replace(" ", "")


def test_report_terminal_with_colour_has_only_rich_styling(
        hostile_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A real terminal: rich adds its own SGR styling; nothing else may be an escape.
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "300")
    result = _ok(_invoke(hostile_db, "report", "--bootstrap", "10"))
    assert "\x1b[1m" in result.stdout  # the styling is there, so the terminal path ran
    rest = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    assert "\x1b" not in rest and "\x07" not in rest and "\x9b" not in rest
    assert f"sample/evil{SHOWN}bot" in rest


@pytest.mark.parametrize("fmt", ["md", "latex", "csv"])
def test_report_documents_on_stdout_are_safe(hostile_db: Path, fmt: str) -> None:
    text = assert_safe(_ok(_invoke(hostile_db, "report", "--format", fmt,
                                   "--bootstrap", "10")))
    if fmt == "csv":
        cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
        assert f"sample/evil{SHOWN}bot" in cells and f"test/judge{SHOWN}" in cells
    elif fmt == "md":
        assert f"sample/evil{SHOWN}bot" in text
    else:  # LaTeX escapes ], _, # ... but the markers are plain characters
        assert "\u241b]2;pwned\u2407" in text and "\u27e6U+202E\u27e7" in text


def test_report_json_on_stdout_escapes_and_keeps_values(hostile_db: Path) -> None:
    result = _ok(_invoke(hostile_db, "report", "--json", "--bootstrap", "10"))
    text = assert_safe(result)
    assert "\\u001b]2;pwned\\u0007" in text and "\\u009b" in text and "\\u202e" in text
    doc = json.loads(result.stdout)
    assert MODEL in [r["model"] for r in doc["error_rates"]]  # the same value, not altered
    assert doc["scope"]["primary_judge"]["judge"] == JUDGE


def test_unknown_judge_error_lists_stored_judges_safely(hostile_db: Path) -> None:
    result = _invoke(hostile_db, "report", "--judge", "nobody")
    assert result.exit_code == 2
    assert f"test/judge{SHOWN}" in assert_safe(result)


def test_runs_table_is_safe(hostile_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # wide enough that no cell is cut short
    text = assert_safe(_ok(_invoke(hostile_db, "runs")))
    flat = re.sub(r"[\s│┃|]", "", text)
    assert "failed\u241b]2;pwned\u2407" in flat
    listed = json.loads(_ok(_invoke(hostile_db, "runs", "--json")).stdout)
    assert f"failed{HOSTILE}" in [r["status"] for r in listed]


def test_stats_shows_a_hostile_database_path_safely(hostile_db: Path, tmp_path: Path) -> None:
    copy = copy_db(hostile_db, tmp_path / f"store{HOSTILE}.db")
    text = assert_safe(_ok(_invoke(copy, "stats")))
    assert "\u241b]2;pwned\u2407" in re.sub(r"\s", "", text)
    assert "responses" in text


def test_export_jsonl_on_stdout_escapes_but_the_file_keeps_the_data(
        hostile_db: Path, tmp_path: Path) -> None:
    result = _ok(_invoke(hostile_db, "export", "--format", "jsonl", "--out", "-"))
    text = assert_safe(result)
    assert "\\u009b" in text and "\\u202e" in text and "\\u200b" in text
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert MODEL in {r.get("model") for r in records}
    assert any(r.get("query", "").endswith(HOSTILE) for r in records)
    out = tmp_path / "store.jsonl"
    _ok(_invoke(hostile_db, "export", "--format", "jsonl", "--out", str(out)))
    on_disk = out.read_text(encoding="utf-8")
    assert "\x9b" in on_disk and "\u202e" in on_disk  # --out FILE: faithful, not escaped
    assert [json.loads(line) for line in on_disk.splitlines()] == records


def test_import_error_quoting_file_contents_is_safe(initialised: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"type": f"item{HOSTILE}", "id": "x"}) + "\n", encoding="utf-8")
    result = _invoke(initialised, "import", str(bad))
    assert result.exit_code == 2
    assert f"item{SHOWN}" in assert_safe(result)


class _DenyingProvider(JsonHandler):
    """An OpenAI-compatible endpoint that refuses every call with a hostile error body."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_json(401, {"error": {"message": f"denied {HOSTILE} end",
                                       "type": "invalid_api_key"}})


@pytest.fixture
def denying_url() -> Iterator[str]:
    with serve_http(_DenyingProvider) as url:
        yield url


def test_run_prints_a_provider_error_body_safely(
        hostile_db: Path, tmp_path: Path, denying_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    db = copy_db(hostile_db, tmp_path / "run.db")
    monkeypatch.setenv("COPAL_ESCAPES_KEY", "sk-escapes-test-0000")
    models = tmp_path / "models.yaml"
    models.write_text(f"deny-bot:\n  model: openai/deny-bot\n  api_base: {denying_url}\n"
                      "  api_key_env: COPAL_ESCAPES_KEY\n  timeout: 5\n  max_retries: 0\n",
                      encoding="utf-8")
    result = _invoke(db, "run", "respond", "--world", W, "--model", "deny-bot",
                     "--models-file", str(models), "--concurrency", "1")
    assert result.exit_code != 0
    text = assert_safe(result)
    assert f"denied {SHOWN} end" in text  # the provider's message is shown, made safe


# ------------------------------------------------------------------ the sanitiser itself

BIDI_ZW = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
              "\u200b\u200c\u200d\u2060\ufeff")
SPECIALS = ["\x1b", "\x07", "\x9b", "\x9d", "\x9c", "]", "[", "\\", ";", "\r", "\n",
            "\u202e", "\u200b", "\U000e0041", "\x00", "\x7f", "\ud800"]
ANY_TEXT = st.text(st.one_of(st.sampled_from(SPECIALS), st.characters()), max_size=80)


def _forbidden(c: str) -> bool:
    cp = ord(c)
    return ((cp < 0x20 and c not in "\n\t") or 0x7F <= cp <= 0x9F or c in BIDI_ZW
            or 0xE0000 <= cp <= 0xE007F or 0xD800 <= cp <= 0xDFFF)


@given(ANY_TEXT)
@example("a\U000e0100b")  # a variation selector: printable, shown as its code point
def test_property_cli_text_drops_nothing_and_passes_nothing_unsafe(text: str) -> None:
    shown = visible(text, keep_crlf=True)
    bare = shown.replace("\r\n", "\n")  # CRLF is kept for the terminal and CSV: a newline
    assert not [c for c in bare if _forbidden(c)], repr(shown)
    # Every printable character of the input, in order: nothing hidden. A printable one that
    # can still hide text (a variation selector) is shown as its code point instead.
    rest = shown
    for c in text:
        if c.isprintable():
            token = c if c in rest else f"\u27e6U+{ord(c):04X}\u27e7"
            assert token in rest, (c, shown)
            rest = rest[rest.index(token) + len(token):]
    assert visible(text) == bare.replace("\r\n", "\n")


@given(st.recursive(st.none() | st.integers() | ANY_TEXT,
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(ANY_TEXT, inner, max_size=4), max_leaves=10))
def test_property_json_on_stdout_is_the_same_document(value: Any) -> None:
    text = json_text(json.dumps(value, ensure_ascii=False, indent=2))
    assert not [c for c in text if _forbidden(c)]
    assert json.loads(text) == value


def test_the_sanitiser_imports_no_ui_library() -> None:
    code = ("import sys, copal_tui.domain.safe_text\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
