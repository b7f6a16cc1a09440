"""`copal import --from compass`: the public COMPASS scenario layout (policies/<Org>.json,
contexts/<Org>.txt, system_prompts/<Org>.txt, system_prompts/explicit_refusal_prompts/<Org>.txt)
becomes worlds; every malformed folder exits 2,
names the file and leaves the database file byte-identical; the shipped sample imports."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from copal_tui.interchange.compass_import import slug
from store.db import connect

FIXTURE = Path(__file__).parent / "fixtures" / "compass"


def db_files(db: Path) -> tuple[bytes, bytes]:
    """The database file and its WAL, byte for byte. Connections left open by earlier CLI
    calls are collected first, so their close-time checkpoint cannot land in the middle; a
    missing WAL and an empty one (a connection still open) both hold no frames."""
    gc.collect()
    wal = Path(f"{db}-wal")
    return db.read_bytes(), wal.read_bytes() if wal.exists() else b""


def rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = connect(db)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def stderr(result) -> str:
    return result.stderr if hasattr(result, "stderr") else result.output


# ------------------------------------------------------------------ good input


def test_import_creates_worlds_policies_and_system_prompt(cli, initialised):
    result = cli("import", "--from", "compass", str(FIXTURE))
    assert result.exit_code == 0, result.output
    assert "2 world, 8 policy" in result.output

    worlds = rows(initialised, "SELECT id, name, industry, use_case, risk_tier, context, "
                               "system_prompt FROM worlds ORDER BY id")
    assert [w[:5] for w in worlds] == [
        ("northwindcycles", "NorthwindCycles", "unspecified", "unspecified", "low"),
        ("quarry-lane-library", "Quarry Lane Library", "unspecified", "unspecified", "low"),
    ]
    northwind, quarry = worlds
    assert northwind[5].startswith("Northwind Cycles sells three e-bikes")
    assert northwind[5].endswith("weekdays 9-17.")  # trailing newline stripped
    # The system prompt is kept verbatim, placeholder included; the explicit-refusal prompt in
    # the subfolder is not the organisation's system prompt (it has a column of its own).
    assert northwind[6] == ("# Identity\n\nYou are the Northwind Cycles owner assistant.\n\n"
                            "# Context\n\n{context}")
    assert quarry[6] is None

    policies = rows(initialised, "SELECT world_id, id, kind, text FROM policies "
                                 "ORDER BY world_id, position")
    assert policies == [
        ("northwindcycles", "bike_catalogue", "allow",
         "Published Northwind e-bike models, prices, sizes and specifications"),
        ("northwindcycles", "servicing", "allow",
         "Owner-performable care: tyre pressure, chain cleaning, battery storage"),
        ("northwindcycles", "competitors", "deny", "Comparisons with other bike brands or shops"),
        ("northwindcycles", "motor_tuning", "deny",
         "Ways to remove the 25 km/h assistance limit or tamper with the motor controller"),
        ("northwindcycles", "unreleased_models", "deny",
         "Bikes, prices or dates Northwind has not announced"),
        # The denylist comes first in this file; allowlist entries still come first.
        ("quarry-lane-library", "opening_hours", "allow",
         "Branch opening hours and holiday closures"),
        ("quarry-lane-library", "card_signup", "allow", "How to get a library card"),
        ("quarry-lane-library", "patron_records", "deny",
         "What any named patron has borrowed or searched for"),
    ]


def test_import_keeps_the_explicit_refusal_prompt_apart(cli, initialised):
    result = cli("import", "--from", "compass", str(FIXTURE))
    assert result.exit_code == 0, result.output
    assert "2 world, 8 policy, 1 explicit-refusal prompt" in result.output
    assert rows(initialised, "SELECT id, explicit_refusal_prompt FROM worlds ORDER BY id") == [
        ("northwindcycles",
         "Refuse anything on the denylist and give the owner line, 555-0101."),
        ("quarry-lane-library", None)]
    again = cli("import", "--from", "compass", str(FIXTURE))
    assert again.exit_code == 0 and "nothing new" in again.output


def test_identical_reimport_is_a_no_op(cli, initialised):
    assert cli("import", "--from", "compass", str(FIXTURE)).exit_code == 0
    before = db_files(initialised)
    again = cli("import", "--from", "compass", str(FIXTURE))
    assert again.exit_code == 0, again.output
    assert "nothing new" in again.output
    assert db_files(initialised) == before


def test_several_folders_in_one_call(cli, initialised, samples):
    result = cli("import", "--from", "compass", str(FIXTURE), str(samples / "compass"))
    assert result.exit_code == 0, result.output
    assert [r[0] for r in rows(initialised, "SELECT id FROM worlds ORDER BY id")] == [
        "kestrelpharmacy", "northwindcycles", "quarry-lane-library"]


def test_imported_world_exports_and_reimports(cli, initialised, tmp_path):
    # The stand-in values must be valid world-record values, or the JSONL export of a COMPASS
    # world would not import again.
    assert cli("import", "--from", "compass", str(FIXTURE)).exit_code == 0
    out = tmp_path / "x.jsonl"
    assert cli("export", "--format", "jsonl", "--out", str(out)).exit_code == 0
    other = tmp_path / "other.db"
    assert cli("init", db=other).exit_code == 0
    result = cli("import", str(out), db=other)
    assert result.exit_code == 0, result.output
    assert "2 world, 8 policy" in result.output


@pytest.mark.parametrize(("org", "world_id"), [
    ("AutoViaMotors", "autoviamotors"), ("Quarry Lane Library", "quarry-lane-library"),
    ("Café_Nord", "cafe-nord"), ("  --A&B--  ", "a-b"), ("___", ""), ("東京", ""),
])
def test_slug(org, world_id):
    assert slug(org) == world_id


def test_module_imports_no_ui_or_llm():
    code = ("import sys, copal_tui.interchange.compass_import\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'litellm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ the shipped sample


def test_sample_imports_and_has_the_promised_shape(cli, initialised, samples):
    folder = samples / "compass"
    result = cli("import", "--from", "compass", str(folder))
    assert result.exit_code == 0, result.output
    (world_id, context, prompt), = rows(initialised,
                                        "SELECT id, context, system_prompt FROM worlds")
    kinds = [k for (k,) in rows(initialised, "SELECT kind FROM policies WHERE world_id = ? "
                                             "ORDER BY position", (world_id,))]
    assert 5 <= kinds.count("allow") <= 7 and 5 <= kinds.count("deny") <= 7
    assert 300 <= len(context.split()) <= 500
    assert 150 <= len(prompt.split()) <= 300
    # Descriptions of one to three sentences.
    for (text,) in rows(initialised, "SELECT text FROM policies"):
        assert 1 <= text.count(". ") + 1 <= 3, text


def test_copal_import_of_sample_worlds_ignores_the_compass_subfolder(cli, initialised, samples):
    result = cli("import", str(samples))
    assert result.exit_code == 0, result.output
    ids = {r[0] for r in rows(initialised, "SELECT id FROM worlds")}
    assert "kestrelpharmacy" not in ids and "harbor-clinics" in ids
    # ... and the COMPASS world can join the same database afterwards.
    assert cli("import", "--from", "compass", str(samples / "compass")).exit_code == 0


# ------------------------------------------------------------------ bad input

POLICIES = {"allowlist": {"hours": "Opening hours"}, "denylist": {"gossip": "Staff gossip"}}


def _policies(doc: object) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        p = root / "policies" / "Broken.json"
        p.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
        (root / "contexts" / "Broken.txt").write_text("Broken Co opens 9-17.\n")
        return p
    return make


def _with(change: Callable[[Path], Path]) -> Callable[[Path], Path]:
    """A valid Broken org, then `change` breaks one of its files (returns the file)."""
    def make(root: Path) -> Path:
        _policies(POLICIES)(root)
        return change(root)
    return make


def _write(rel: str, data: bytes) -> Callable[[Path], Path]:
    def change(root: Path) -> Path:
        p = root / rel
        p.write_bytes(data)
        return p
    return change


def _remove(rel: str) -> Callable[[Path], Path]:
    def change(root: Path) -> Path:
        (root / rel).unlink()
        return root / rel
    return change


def _replace_folder(target: str) -> Callable[[Path], Path]:
    """The whole batch folder is replaced by `target` (relative to it); returns what to pass."""
    def make(root: Path) -> Path:
        if target == "a file":
            p = root / "scenario.json"
            p.write_text("{}")
            return p
        if target == "missing":
            return root / "nowhere"
        if target == "no policies":
            shutil.rmtree(root / "policies")
            return root
        # "empty policies": only files that are not organisations.
        for p in (root / "policies").iterdir():
            p.unlink()
        (root / "policies" / "README.md").write_text("not a policy file\n")
        (root / "policies" / "._Org.json").write_text("macOS resource fork\n")
        return root / "policies"
    return make


# case -> (how to break the batch folder, text the error must contain, field named or None).
# The error must also name the file the builder returns.
BAD_CASES: dict[str, tuple[Callable[[Path], Path], str, str | None]] = {
    "not_a_folder": (_replace_folder("a file"), "not a folder", None),
    "no_such_folder": (_replace_folder("missing"), "no such folder", None),
    "no_policies_folder": (_replace_folder("no policies"), "no policies/ folder", None),
    "no_policies_files": (_replace_folder("empty policies"), "no <Org>.json files", None),
    "bad_json": (_policies('{"allowlist": {"hours": "Opening hours",}}'), "bad JSON", None),
    "not_an_object": (_policies([POLICIES]), "must be a JSON object", None),
    "missing_allowlist": (_policies({"denylist": POLICIES["denylist"]}), "missing field",
                          "allowlist"),
    "missing_denylist": (_policies({"allowlist": POLICIES["allowlist"]}), "missing field",
                         "denylist"),
    "unknown_field": (_policies({**POLICIES, "blocklist": {}}), "unknown field", "blocklist"),
    "list_not_object": (_policies({**POLICIES, "allowlist": ["hours"]}), "must be an object",
                        "allowlist"),
    "empty_allowlist": (_policies({**POLICIES, "allowlist": {}}), "is empty", "allowlist"),
    "empty_denylist": (_policies({**POLICIES, "denylist": {}}), "is empty", "denylist"),
    "number_description": (_policies({**POLICIES, "denylist": {"gossip": 3}}),
                           "must be a string, not a number", "denylist.gossip"),
    "null_description": (_policies({**POLICIES, "allowlist": {"hours": None}}),
                         "must be a string, not null", "allowlist.hours"),
    "nested_description": (_policies({**POLICIES, "allowlist": {"hours": {"text": "x"}}}),
                           "must be a string, not an object", "allowlist.hours"),
    "blank_description": (_policies({**POLICIES, "allowlist": {"hours": "  "}}),
                          "description is empty", "allowlist.hours"),
    "name_in_both_lists": (_policies({**POLICIES, "denylist": {"hours": "Night hours"}}),
                           "in both the allowlist and the denylist", "denylist.hours"),
    "unusable_name": (_policies({**POLICIES, "allowlist": {"opening hours": "Hours"}}),
                      "not a usable policy id", "allowlist.opening hours"),
    "unusable_leading_dash": (_policies({**POLICIES, "denylist": {"-gossip": "Gossip"}}),
                              "not a usable policy id", "denylist.-gossip"),
    "duplicate_name": (_policies('{"allowlist": {"hours": "a", "hours": "b"}, '
                                 '"denylist": {"gossip": "c"}}'), "appears twice", "hours"),
    "missing_context": (_with(_remove("contexts/Broken.txt")), "missing context file", None),
    "empty_context": (_with(_write("contexts/Broken.txt", b" \n\n")), "file is empty", None),
    "non_utf8_policies": (_with(_write("policies/Broken.json",
                                       b'{"allowlist": {"h": "caf\xe9"}, "denylist": {}}')),
                          "not valid UTF-8", None),
    "non_utf8_context": (_with(_write("contexts/Broken.txt", b"Caf\xe9 Broken\n")),
                         "not valid UTF-8", None),
    "non_utf8_system_prompt": (_with(_write("system_prompts/Broken.txt", b"\xff\xfe prompt")),
                               "not valid UTF-8", None),
    "no_usable_world_id": (_with(lambda root: (root / "policies" / "Broken.json").rename(
        root / "policies" / "___.json") or root / "policies" / "___.json"),
                           "cannot make a world id", "id"),
    "colliding_world_ids": (_with(lambda root: _copy_org(root, "Broken", "broken")),
                            "is also the id of", "id"),
    "world_exists_with_other_content": (
        _with(lambda root: _rename_org(root, "Broken", "NorthwindCycles")),
        "already exists with other content (context differs)", "id"),
}


def _copy_org(root: Path, org: str, new: str) -> Path:
    """Another organisation whose name slugs to the same world id."""
    shutil.copy(root / "policies" / f"{org}.json", root / "policies" / f"{new}_.json")
    shutil.copy(root / "contexts" / f"{org}.txt", root / "contexts" / f"{new}_.txt")
    return root / "policies" / f"{new}_.json"


def _rename_org(root: Path, org: str, new: str) -> Path:
    for sub in ("policies", "contexts"):
        suffix = ".json" if sub == "policies" else ".txt"
        (root / sub / f"{org}{suffix}").rename(root / sub / f"{new}{suffix}")
    return root / "policies" / f"{new}.json"


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_malformed_folder_exits_2_and_leaves_the_database_byte_identical(
        case, cli, initialised, tmp_path):
    # Something is stored already; the broken org comes beside a valid companion org, which
    # must not be written either (one transaction for the whole folder).
    assert cli("import", "--from", "compass", str(FIXTURE)).exit_code == 0
    root = tmp_path / "batch"
    for sub in ("policies", "contexts", "system_prompts"):
        (root / sub).mkdir(parents=True)
    (root / "policies" / "Companion.json").write_text(json.dumps(POLICIES))
    (root / "contexts" / "Companion.txt").write_text("Companion Co opens 8-16.\n")
    build, needle, field = BAD_CASES[case]
    named = build(root)
    target = named if case in ("not_a_folder", "no_such_folder") else root

    before = db_files(initialised)
    result = cli("import", "--from", "compass", str(target))
    err = stderr(result)
    assert result.exit_code == 2, err
    assert str(named) in err and needle in err, err
    if field is not None:
        assert f": {field}: " in err, err
    assert "Traceback" not in err
    assert db_files(initialised) == before
    assert "companion" not in {r[0] for r in rows(initialised, "SELECT id FROM worlds")}


def test_a_world_with_a_changed_policy_is_refused(cli, initialised, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(FIXTURE, root)
    assert cli("import", "--from", "compass", str(root)).exit_code == 0
    p = root / "policies" / "NorthwindCycles.json"
    p.write_text(p.read_text().replace("other bike brands", "other brands"))
    before = db_files(initialised)
    result = cli("import", "--from", "compass", str(root))
    assert result.exit_code == 2
    assert "policies differs" in stderr(result) and str(p) in stderr(result)
    assert db_files(initialised) == before
