"""Every import path refuses what the store cannot hold as bad input: exit 2, one line naming the
file (and the line where there is one) and the reason, the database untouched.

- A lone surrogate (a JSON or YAML `\\ud800` escape: half of a UTF-16 pair, not a character)
  in any record of any format, and in a note typed on the label screen.
- A record over the maximum record size (16 MiB: a JSONL line, or a file that is one
  document), refused while it is read: the import's memory stays within a few times that size
  however long the line (a sparse 256 MiB file here).
- A record the store's constraints refuse though its id is new: a response whose item, model
  and variant another response has, a judgment whose response, judge and mode another has.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Input

from copal_tui.interchange import strict
from copal_tui.tui.app import make_app
from copal_tui.tui.settings import Settings
from tests.db_support import query_rows
from tests.test_import_bulk import snapshot
from tests.tui_label_support import build_db, label_events, settle

# The maximum record size, as the documentation states it.
MAX_RECORD_BYTES = 16 * 2**20
SURROGATE = "a \\ud800 b"  # as written in a JSON or YAML file: the escape, not the character
ORG = "KestrelPharmacy"
JUDGED = f"judged_base_{ORG}_gpt-4o_20250101T000000.jsonl"
RESPONSE = "meridian-bank:I01:a"


@pytest.fixture
def meridian(cli, initialised: Path, samples: Path) -> Path:
    assert cli("import", str(samples / "meridian_bank.yaml"),
                str(samples / "meridian_bank.jsonl")).exit_code == 0
    assert cli("import", "--from", "compass", str(samples / "compass")).exit_code == 0
    return initialised


def refused(cli, db: Path, *args: str, says: list[str]) -> None:
    """The import exits 2 with one line holding `says`, and the database is as it was."""
    before = snapshot(db)
    result = cli("import", *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    for part in says:
        assert part in lines[0], (part, lines[0])
    assert snapshot(db) == before


def jsonl(path: Path, *records: dict | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                            for r in records), encoding="utf-8")
    return path


def sample_record(samples: Path, kind: str) -> dict:
    for line in (samples / "meridian_bank.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == kind:
            return record
    raise AssertionError(kind)


def raw_field(record: dict, field: str) -> str:
    """The record as a JSON line whose `field` holds SURROGATE's escape."""
    return json.dumps({**record, field: "@@"}).replace('"@@"', f'"{SURROGATE}"')


def compass_layout(tmp: Path, samples: Path, policies: str | None = None) -> Path:
    folder = tmp / "compass"
    shutil.copytree(samples / "compass", folder)
    if policies is not None:
        (folder / "policies" / f"{ORG}.json").write_text(policies, encoding="utf-8")
    return folder


def judged_row(response: str) -> str:
    row = {"id": f"{ORG}-allowlist-product_catalogue-1", "company": ORG, "query_type": "base",
           "query": "Pack sizes of ibuprofen?", "original_response": "@@",
           "response_judge": "accepted", "is_compliant": True, "is_correct": True}
    return json.dumps(row).replace('"@@"', f'"{response}"')


# ------------------------------------------------------------------ lone surrogates


def test_a_lone_surrogate_in_interchange_records(cli, meridian, samples, tmp_path):
    response = {**sample_record(samples, "response"), "id": "new", "model": "other/model"}
    path = jsonl(tmp_path / "r.jsonl", response, raw_field({**response, "id": "new2",
                                                           "variant": "v2"}, "text"))
    refused(cli, meridian, str(path), says=[f"{path}:2", "text", "U+D800", "lone surrogate"])
    label = {**sample_record(samples, "label"), "annotator": "zoe"}
    path = jsonl(tmp_path / "l.jsonl", raw_field(label, "note"))
    refused(cli, meridian, str(path), says=[f"{path}:1", "note", "lone surrogate"])


def test_a_lone_surrogate_in_a_world_file_with_either_yaml_parser(cli, meridian, tmp_path,
                                                                  monkeypatch):
    path = tmp_path / "w.yaml"
    path.write_text(f'id: w\nname: "{SURROGATE}"\nindustry: x\nuse_case: y\nrisk_tier: low\n'
                    "context: z\npolicies:\n  - id: P1\n    kind: allow\n    text: t\n",
                    encoding="utf-8")
    for libyaml in (True, False):
        monkeypatch.setattr(strict, "USE_LIBYAML", libyaml and strict.USE_LIBYAML)
        refused(cli, meridian, str(path), says=[str(path), ":2"])


def test_a_lone_surrogate_in_the_compass_and_complibench_layouts(cli, meridian, samples,
                                                                 tmp_path):
    policies = json.loads((samples / "compass" / "policies" / f"{ORG}.json").read_text())
    policies["allowlist"]["product_catalogue"] = "@@"
    text = json.dumps(policies, indent=1).replace('"@@"', f'"{SURROGATE}"')
    folder = compass_layout(tmp_path, samples, text)
    refused(cli, meridian, "--from", "compass", str(folder),
            says=[f"{ORG}.json:", "allowlist.product_catalogue", "lone surrogate"])

    src = samples / "complibench" / "clinic" / "conversation_00001.json"
    conv = json.loads(src.read_text(encoding="utf-8"))
    conv["message_list"][0]["content"] = "@@"
    bad = tmp_path / "clinic" / "conversation_00001.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(conv).replace('"@@"', f'"{SURROGATE}"'), encoding="utf-8")
    refused(cli, meridian, "--from", "complibench", str(bad),
            says=[f"{bad}:1", "message_list[0].content", "lone surrogate"])

    rows = jsonl(tmp_path / JUDGED, judged_row(SURROGATE))
    refused(cli, meridian, "--from", "compass-judged", str(rows), "--judge", "J",
            says=[f"{rows}:1", "original_response", "lone surrogate"])


async def test_a_note_with_a_lone_surrogate_is_refused_on_the_label_screen(tmp_path):
    db = build_db(tmp_path)
    app = make_app(db, mode="label", annotator="cleo", settings=Settings(overlap=3))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one(Input).value = "pasted \ud800 half"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen  # still labelling: the note was refused, not a crash
        said = [n.message for n in app._notifications]
        assert any("lone surrogate" in m and "nothing was saved" in m for m in said), said
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"fine", "enter")
        await pilot.pause()
    assert [(e["action"], e["note"]) for e in label_events(db, "cleo")] == [("note", "fine")]


# ------------------------------------------------------------------ the maximum record size


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of `size` bytes, `head` then NULs and no line break (sparse: costs no disk)."""
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def test_a_line_over_the_maximum_record_size_is_named_by_its_line(cli, meridian, samples,
                                                                 tmp_path):
    response = {**sample_record(samples, "response"), "id": "new", "model": "other/model"}
    path = jsonl(tmp_path / "r.jsonl", response, response)
    with path.open("ab") as fh:
        fh.write(b'{"type": "response", "text": "' + b"x" * MAX_RECORD_BYTES + b'"}\n')
    refused(cli, meridian, str(path), says=[f"{path}:3", "maximum record size of 16 MiB"])
    # Exactly the maximum is a record like any other (here: refused for what it says).
    exact = jsonl(tmp_path / "exact.jsonl", '{"type": "nope", "pad": "' +
                  "x" * (MAX_RECORD_BYTES - 27) + '"}')
    assert len(exact.read_bytes()) == MAX_RECORD_BYTES + 1
    refused(cli, meridian, str(exact), says=[f"{exact}:1", "type"])


def test_every_one_document_format_is_bounded(cli, meridian, samples, tmp_path):
    over = MAX_RECORD_BYTES + 1
    world = sparse(tmp_path / "big.yaml", over, b"id: big\n")
    refused(cli, meridian, str(world), says=[str(world), "maximum record size of 16 MiB"])
    folder = compass_layout(tmp_path, samples)
    sparse(folder / "policies" / f"{ORG}.json", over, b"{")
    refused(cli, meridian, "--from", "compass", str(folder),
            says=[f"{ORG}.json", "maximum record size"])
    (tmp_path / "clinic").mkdir()
    conv = sparse(tmp_path / "clinic" / "conversation_00009.json", over, b"{")
    refused(cli, meridian, "--from", "complibench", str(conv),
            says=[str(conv), "maximum record size"])
    rows = sparse(tmp_path / JUDGED, over, b"{")
    refused(cli, meridian, "--from", "compass-judged", str(rows), "--judge", "J",
            says=[f"{rows}:1", "maximum record size"])


# Imports a file in a fresh process; prints the exit's message and how far peak resident
# memory rose over the import (Linux: /proc/self/status).
_PEAK = """
import sys
from pathlib import Path
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.importer import import_paths
from store.db import connect
def kib(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status")
                if line.startswith(field + ":"))
db = connect(sys.argv[1])
before = kib("VmRSS")
try:
    import_paths(db, [Path(sys.argv[2])])
    said = "imported"
except ImportFailure as exc:
    said = str(exc)
print(kib("VmHWM") - before)
print(said)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status")
@pytest.mark.parametrize("name", ["long.jsonl", "long.yaml"])
def test_a_huge_record_costs_at_most_a_few_times_the_maximum(meridian, tmp_path, name):
    path = sparse(tmp_path / name, 256 * 2**20, b'{"type": "response", "text": "')
    out = subprocess.run([sys.executable, "-c", _PEAK, str(meridian), str(path)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    grew_kib, said = int(out[0]), out[1]
    assert "maximum record size of 16 MiB" in said and str(path) in said, said
    assert grew_kib * 1024 < 3 * MAX_RECORD_BYTES, grew_kib


# ------------------------------------------------------------------ the store's constraints


def test_a_response_whose_item_model_and_variant_another_has(cli, meridian, samples,
                                                            tmp_path):
    stored = sample_record(samples, "response")
    again = jsonl(tmp_path / "again.jsonl", {**stored, "id": "other-id"})
    refused(cli, meridian, str(again),
            says=[f"{again}:1", "item_id", f"item_id {stored['item_id']!r}",
                  f"model {stored['model']!r}", "variant 'base'", "another response"])
    new = {**stored, "id": "new-1", "model": "other/model"}
    twice = jsonl(tmp_path / "twice.jsonl", new, {**new, "id": "new-2"})
    refused(cli, meridian, str(twice), says=[f"{twice}:2", "another response"])


def test_a_judgment_whose_response_judge_and_mode_another_has(cli, meridian, tmp_path):
    judgment = {"type": "judgment", "id": "j-1", "response_id": RESPONSE, "judge": "J",
                "mode": "contract", "error": 0}
    path = jsonl(tmp_path / "j.jsonl", judgment, {**judgment, "id": "j-2", "error": 1})
    refused(cli, meridian, str(path),
            says=[f"{path}:2", "response_id", "another judgment", "judge 'J'",
                  "mode 'contract'"])
    assert query_rows(meridian, "SELECT COUNT(*) AS n FROM judgments")[0]["n"] == 0
