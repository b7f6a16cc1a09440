"""`copal traffic import` from the command line: bad input is exit 2 with one line naming the
file, the line and the reason, and no traffic row written; options that name nothing are exit
2 before the log is read; a log imported again is counted as duplicates; pairs imported after
a label queue started join it after the pairs already placed; a spreadsheet's byte-order mark
is not data; the sample logs of sample_worlds/traffic import de-identified and are what their
script writes."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.deid import Deidentifier
from copal_tui.interchange.traffic_log import MAX_TEXT_CHARS
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.traffic import import_log
from store.db import connect
from tests.db_support import query_rows
from tests.traffic_support import build_traffic_db, cli, rows

TRAFFIC_TABLES = ("traffic_pairs", "traffic_imports", "traffic_key")
GOOD = json.dumps({"query": "Is my order #QX-778812 on its way?", "response": "It is."})


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _traffic_rows(db: Path) -> dict[str, int]:
    return {t: query_rows(db, f"SELECT COUNT(*) FROM {t}")[0][0] for t in TRAFFIC_TABLES}


def _one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("copal: error: "), stderr
    return lines[0]


@pytest.mark.parametrize(("name", "content", "where", "why"), [
    pytest.param("malformed.jsonl", f"{GOOD}\n{{\"query\": \"q\", \"response\": \n",
                 "malformed.jsonl:2:", "not valid JSON", id="malformed-line"),
    pytest.param("missing.jsonl", f'{GOOD}\n{GOOD}\n{{"query": "where is it?"}}\n',
                 "missing.jsonl:3:", "response: missing field", id="missing-field"),
    pytest.param("binary.jsonl", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03binary",
                 "binary.jsonl:1:", "binary data", id="binary"),
    pytest.param("empty.jsonl", "", "empty.jsonl:", "holds no record", id="empty"),
    pytest.param("long.jsonl",
                 json.dumps({"query": "q", "response": "x" * (MAX_TEXT_CHARS + 1)}) + "\n",
                 "long.jsonl:1:", "over the limit", id="over-long-text"),
    pytest.param("latin1.jsonl",
                 f"{GOOD}\n".encode() + b'{"query": "caf\xe9", "response": "r"}\n',
                 "latin1.jsonl:2:", "not UTF-8", id="not-utf8"),
    pytest.param("columns.csv", "question,answer\nq,a\n", "columns.csv:1:",
                 "no column named 'query'", id="csv-without-the-column"),
    pytest.param("quote.csv", 'query,response\nq,a\n"never closed,b\nx,y\n', "quote.csv:3:",
                 "quote opened in this row is never closed", id="csv-quote-never-closed"),
])
def test_bad_input_is_exit_2_naming_the_line_and_writes_nothing(cli, initialised, tmp_path,
                                                                 name, content, where, why):
    log = _write(tmp_path, name, content)
    result = cli("traffic", "import", str(log), "--source", "web")
    assert result.exit_code == 2, result.output
    line = _one_error_line(result.stderr)
    assert where in line and why in line, line
    assert result.stdout == ""
    assert _traffic_rows(initialised) == dict.fromkeys(TRAFFIC_TABLES, 0)


def test_a_log_imported_again_is_counted_as_duplicates(cli, initialised, tmp_path):
    log = _write(tmp_path, "log.jsonl", "".join(
        json.dumps({"query": f"I am user{n}@example.com", "response": "Noted."}) + "\n"
        for n in range(3)))
    assert cli("traffic", "import", str(log), "--source", "web").exit_code == 0
    again = cli("traffic", "import", str(log), "--source", "web")
    assert again.exit_code == 0, again.output
    assert "imported 0 pair(s) from 3 record(s)" in again.stdout
    assert "3 duplicate(s) skipped" in again.stdout
    assert query_rows(initialised, "SELECT COUNT(*) FROM traffic_pairs")[0][0] == 3
    imports = query_rows(initialised, "SELECT source, file_name, records, pairs, duplicates, "
                                      "redactions FROM traffic_imports ORDER BY created_at, id")
    # What was removed is counted over the pairs stored: the second import removed nothing.
    assert [tuple(r) for r in imports] == [("web", "log.jsonl", 3, 3, 0, '{"EMAIL":3}'),
                                           ("web", "log.jsonl", 3, 3, 3, "{}")]


def test_pairs_imported_later_join_a_started_queue_in_the_seeded_order(cli, initialised,
                                                                       tmp_path):
    def log(name: str, first: int) -> Path:
        return _write(tmp_path, name, "".join(
            json.dumps({"query": f"question {n}", "response": "answer"}) + "\n"
            for n in range(first, first + 3)))

    def placed() -> list[str]:
        return [r[0] for r in query_rows(
            initialised, "SELECT subject FROM campaign_subjects WHERE campaign = "
                         "'default:traffic' ORDER BY position")]

    def by_place(ids: set[str]) -> list[str]:
        # The order the suite documents: sha256 of "seed:id", seed 0 for the default queue.
        return sorted(ids, key=lambda i: hashlib.sha256(f"0:{i}".encode()).hexdigest())

    def stored() -> set[str]:
        return {r[0] for r in query_rows(initialised, "SELECT id FROM traffic_pairs")}

    assert cli("traffic", "import", str(log("a.jsonl", 0)), "--source", "web").exit_code == 0
    first = stored()
    queue = AnnotationQueue(connect(initialised), "traffic", "ann")
    assert queue.prepare() == 3
    assert placed() == by_place(first)
    assert cli("traffic", "import", str(log("b.jsonl", 3)), "--source", "app").exit_code == 0
    later = stored() - first
    gone = sorted(later)[0]
    assert cli("traffic", "purge", "--pair", gone, "--yes").exit_code == 0
    assert queue.prepare() == 2  # appended after the first; a purged pair never
    assert placed() == by_place(first) + by_place(later - {gone})
    assert queue.prepare() == 0


RULES_WITH_A_BAD_PATTERN = """\
phone_region: GB
patterns:
  - type: EMPLOYEE_ID
    regex: 'EMP-[0-9]{5}'
  - type: BADGE
    regex: '(BADGE-[0-9]+'
"""


@pytest.mark.parametrize(("options", "expected"), [
    pytest.param(["--world", "lumen-telecon"],
                 "--world lumen-telecon: not a stored world (did you mean lumen-telecom?)",
                 id="unknown-world"),
    pytest.param(["--redactions", "RULES"],
                 "rules.yaml:6: patterns[1].regex: bad regex '(BADGE-[0-9]+'",
                 id="bad-redaction-pattern"),
    pytest.param(["--phone-region", "UK"], "--phone-region: unknown phone region 'UK'",
                 id="unknown-phone-region"),
    pytest.param(["--source", "  "], "--source: a source name is needed", id="blank-source"),
])
def test_an_option_that_names_nothing_is_exit_2_before_anything_is_read(
        cli, initialised, samples, tmp_path, options, expected):
    assert cli("import", str(samples / "lumen_telecom.yaml")).exit_code == 0
    rules = _write(tmp_path, "rules.yaml", RULES_WITH_A_BAD_PATTERN)
    log = _write(tmp_path, "log.jsonl", GOOD + "\n")
    args = [str(rules) if a == "RULES" else a for a in options]
    source = [] if "--source" in args else ["--source", "web"]
    result = cli("traffic", "import", str(log), *source, *args)
    assert result.exit_code == 2, result.output
    assert expected in _one_error_line(result.stderr)
    assert _traffic_rows(initialised) == dict.fromkeys(TRAFFIC_TABLES, 0)


def test_a_byte_order_mark_is_not_part_of_the_first_record(cli, initialised, tmp_path):
    bom = b"\xef\xbb\xbf"
    sheet = _write(tmp_path, "export.csv", bom + b"query,response\r\nhello,hi there\r\n")
    lines = _write(tmp_path, "log.jsonl", bom + GOOD.encode() + b"\n")
    for log in (sheet, lines):
        result = cli("traffic", "import", str(log), "--source", "web")
        assert result.exit_code == 0, result.output
    rows = query_rows(initialised, "SELECT query, response FROM traffic_pairs ORDER BY query")
    assert [tuple(r) for r in rows] == [("Is my order #<ORDER_1> on its way?", "It is."),
                                        ("hello", "hi there")]


# Identifiers planted in the sample logs, found by their reserved ranges (read from the files,
# so the test does not take them from the script that wrote them).
PLANTED = {
    "EMAIL": r"[\w.]+@example\.(?:com|org|net)",
    "PHONE": r"(?:\+44 |0)(?:7700 900|20 7946 0|161 496 0)\d{3}|(?:\+1 202-|\(202\) )555-01\d\d",
    "IP": r"(?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+|2001:db8:[0-9a-f:]+",
    "URL": r"https?://\S+(?:token|session|code)=\w+|https://my\.lumentelecom\.example/verify/\w+",
    "CARD": r"\b(?:4111|4242|5555|5105|3782|3714|6011|2223|4012|4000)[ \d]{10,18}\d",
    "IBAN": r"\b(?:GB82|GB33|DE89|FR14|NL91|ES91|IE29|BE68)[ A-Z\d]{10,30}\d",
    "ADDRESS": r"\d+ (?:Larkspur Road|Quarry Close|Elm Grove|Harbour Street|Fennel Lane|"
               r"Orchard Avenue|Mill Terrace|Beacon Drive|Saltmarsh Way|Kiln Crescent)",
    "ORDER": r"\b(?:LT-\d{6}|ORD-\d{7}|RM\d{8}GB)\b",
    "TICKET": r"\b(?:TK-\d{5}|CS-\d{6}|INC\d{7})\b",
    "ACCOUNT": r"account(?: no\.| number)? 4\d{7}\b",
}


def test_the_sample_logs_import_de_identified_and_linked_to_their_world(cli, initialised,
                                                                       samples):
    folder = samples / "traffic"
    assert cli("import", str(samples / "lumen_telecom.yaml")).exit_code == 0
    for name, source in (("lumen_telecom_web.ndjson", "web"), ("lumen_telecom_app.ndjson", "app"),
                         ("lumen_telecom_web_export.csv", "web")):
        result = cli("traffic", "import", str(folder / name), "--source", source, "--world",
                     "lumen-telecom")
        assert result.exit_code == 0, result.output
    imports = query_rows(initialised, "SELECT file_name, source, world_id, records, pairs, "
                                      "duplicates, redactions FROM traffic_imports")
    by_file = {r["file_name"]: r for r in imports}
    assert (by_file["lumen_telecom_web.ndjson"]["pairs"],
            by_file["lumen_telecom_web.ndjson"]["duplicates"]) == (324, 4)
    assert by_file["lumen_telecom_web_export.csv"]["duplicates"] == 10
    assert {r["world_id"] for r in imports} == {"lumen-telecom"}
    removed = set().union(*(json.loads(r["redactions"]) for r in imports))
    assert removed == {"EMAIL", "PHONE", "CARD", "IBAN", "IP", "URL", "ADDRESS", "ACCOUNT",
                       "ORDER", "TICKET"}
    per_source = dict(tuple(r) for r in query_rows(  # type: ignore[misc]
        initialised, "SELECT source, COUNT(*) FROM traffic_pairs GROUP BY source"))
    assert sum(per_source.values()) >= 300 and set(per_source) == {"web", "app"}
    logs = "".join(f.read_text(encoding="utf-8") for f in folder.glob("lumen_telecom_*"))
    planted = {kind: set(re.findall(pattern, logs)) for kind, pattern in PLANTED.items()}
    assert all(planted.values()), planted  # every type is planted
    query_rows(initialised, "PRAGMA wal_checkpoint(TRUNCATE)")
    stored = b"".join(p.read_bytes() for p in initialised.parent.glob(f"{initialised.name}*"))
    assert [v for found in planted.values() for v in sorted(found) if v.encode() in stored] == []


def test_the_sample_logs_are_what_their_script_writes(samples, tmp_path):
    folder = samples / "traffic"
    done = subprocess.run([sys.executable, str(folder / "make_log.py"), str(tmp_path)],
                          capture_output=True, text=True, check=True)
    assert "lumen_telecom_web.ndjson: 320 pairs" in done.stdout
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["lumen_telecom_app.ndjson", "lumen_telecom_web.ndjson",
                       "lumen_telecom_web_export.csv"]
    for name in written:
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes(), name


def test_purging_a_pair_that_is_not_stored_is_exit_2_and_purges_nothing(tmp_path):
    db = build_traffic_db(tmp_path, campaign=None)
    [first] = rows(db, "SELECT id FROM traffic_pairs ORDER BY id LIMIT 1")
    result = CliRunner().invoke(main, ["--db", str(db), "traffic", "purge", "--pair",
                                       first["id"], "--pair", "tp-nope", "--yes"])
    assert result.exit_code == 2, result.output
    assert "unknown traffic pair 'tp-nope'" in result.output
    assert rows(db, "SELECT COUNT(*) AS n FROM traffic_pairs WHERE purged_at IS NOT NULL") \
        == [{"n": 0}]


def test_an_import_interrupted_halfway_writes_nothing(tmp_path, monkeypatch):
    """Ctrl-C while the pairs are being de-identified: the one transaction is rolled back."""
    db = tmp_path / "t.db"
    cli(db, "init")
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"query": f"question {i}", "response": "answer"}) + "\n"
                           for i in range(50)), encoding="utf-8")
    calls = {"n": 0}
    real = Deidentifier.redact

    def interrupted(self, texts):  # the 20th pair is where the user presses Ctrl-C
        calls["n"] += 1
        if calls["n"] == 20:
            raise KeyboardInterrupt
        return real(self, texts)

    monkeypatch.setattr(Deidentifier, "redact", interrupted)
    conn = connect(db)
    try:
        with pytest.raises(KeyboardInterrupt):
            import_log(conn, log, source="web")
    finally:
        conn.conn.close()
    assert calls["n"] == 20
    for table in ("traffic_pairs", "traffic_imports"):
        assert rows(db, f"SELECT COUNT(*) AS n FROM {table}") == [{"n": 0}]
