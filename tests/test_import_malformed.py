"""Malformed input that once crashed or slipped through `copal import`: nesting 100,000 levels
deep, duplicate keys, unknown CompliBench roles. Each exits 2 naming the file and the line (or
turn) and leaves the database as it was. Also: the public CompliBench `data/` folder with its
manifests and readme imports, and policy import asks the store for positions once per world."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from copal_tui.interchange import strict
from copal_tui.interchange.importer import import_paths
from store.db import connect

DEEP = 100_000

WORLD = """\
id: tiny-co
name: Tiny Co
industry: hardware shop
use_case: store assistant
risk_tier: low
context: Tiny Co sells hammers.
policies:
  - id: P01
    kind: allow
    text: The assistant may share the price list.
  - id: P02
    kind: deny
    text: The assistant must not reveal supplier discounts.
"""
WORLD_RECORD = {"type": "world", "id": "rec-co", "name": "Rec Co", "industry": "shop",
                "use_case": "assistant", "risk_tier": "low", "context": "Rec Co sells."}


def policy_record(i: int, world: str = "rec-co") -> dict:
    return {"type": "policy", "id": f"P{i:05d}", "world_id": world, "kind": "allow",
            "text": f"Policy {i}."}


def digest(db: Path) -> str:
    """sha256 over every row of every table: equal digests mean nothing was written."""
    conn = sqlite3.connect(db)
    h = hashlib.sha256()
    for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"):
        for row in conn.execute(f"SELECT * FROM [{t}] ORDER BY 1"):
            h.update(repr((t, row)).encode())
    conn.close()
    return h.hexdigest()


@pytest.fixture
def stocked(cli, initialised, tmp_path) -> Path:
    """A database with a world in it already, so "unchanged" is not trivially empty."""
    base = tmp_path / "base.yaml"
    base.write_text(WORLD, encoding="utf-8")
    assert cli("import", str(base)).exit_code == 0
    return initialised


@pytest.fixture(params=["libyaml", "pure-python"])
def yaml_backend(request, monkeypatch) -> str:
    """Both loaders the importer may use: libyaml's (C recursion) and PyYAML's own."""
    if request.param == "libyaml" and strict._CLoader is None:
        pytest.skip("PyYAML built without libyaml")
    monkeypatch.setattr(strict, "USE_LIBYAML", request.param == "libyaml")
    return str(request.param)


def refused(cli, db: Path, *args: str) -> str:
    """Run an import that must fail with exit 2 and write nothing; return its stderr."""
    before = digest(db)
    result = cli("import", *args)
    assert result.exit_code == 2, (result.output, result.stderr)
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert digest(db) == before
    return result.stderr


# ------------------------------------------------------------------ nesting depth


def test_yaml_nested_100k_levels_deep(cli, stocked, tmp_path, yaml_backend):
    bad = tmp_path / "deep.yaml"
    bad.write_text("id: deep-co\npolicies: " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    err = refused(cli, stocked, str(bad))
    assert f"{bad}:2: bad YAML: " in err and "nest" in err


@pytest.mark.parametrize("style", ["flow", "block"])
def test_yaml_one_level_too_deep_names_the_line(cli, stocked, tmp_path, yaml_backend, style):
    # The world mapping is level 1, so 64 more levels are one too many.
    if style == "flow":
        text = WORLD.replace("context: Tiny Co sells hammers.",
                             "context: " + "[" * 64 + "]" * 64)
        line = 6
    else:  # `context:` on line 6, then a sequence in a sequence ..., one per line
        text = WORLD.replace("context: Tiny Co sells hammers.\n", "context:\n" + "".join(
            f"{'  ' * (i + 1)}-\n" for i in range(64)))
        line = 6 + 64
    bad = tmp_path / "deep.yaml"
    bad.write_text(text, encoding="utf-8")
    err = refused(cli, stocked, str(bad))
    assert f"{bad}:{line}: bad YAML: nested deeper than 64 levels" in err


def test_yaml_nesting_at_the_limit_reaches_validation(cli, stocked, tmp_path, yaml_backend):
    # 63 levels inside the world mapping is allowed by the parser; the schema then refuses it.
    bad = tmp_path / "w.yaml"
    bad.write_text(WORLD.replace("context: Tiny Co sells hammers.",
                                 "context: " + "[" * 63 + "]" * 63), encoding="utf-8")
    err = refused(cli, stocked, str(bad))
    assert f"{bad}:6: context: " in err and "nested" not in err


def test_jsonl_record_nested_100k_levels_deep(cli, stocked, tmp_path):
    bad = tmp_path / "r.jsonl"
    deep = '{"type": "world", "id": "x", "context": ' + "[" * DEEP + "]" * DEEP + "}"
    bad.write_text(json.dumps(WORLD_RECORD) + "\n" + deep + "\n", encoding="utf-8")
    err = refused(cli, stocked, str(bad))
    assert f"{bad}:2: nested deeper than 64 levels" in err


def test_brackets_inside_json_strings_do_not_count(cli, stocked, tmp_path):
    ok = tmp_path / "r.jsonl"
    ok.write_text(json.dumps({**WORLD_RECORD, "context": "[{" * 200}) + "\n", encoding="utf-8")
    assert cli("import", str(ok)).exit_code == 0


# ------------------------------------------------------------------ duplicate keys


def test_yaml_duplicate_top_level_key(cli, stocked, tmp_path, yaml_backend):
    bad = tmp_path / "w.yaml"
    bad.write_text(WORLD.replace("risk_tier: low\n", "risk_tier: low\nname: Other Co\n"),
                   encoding="utf-8")
    err = refused(cli, stocked, str(bad))
    assert (f"{bad}:6: name: bad YAML: key 'name' appears twice in one mapping "
            "(first at line 2)") in err


def test_yaml_duplicate_key_inside_a_policy(cli, stocked, tmp_path, yaml_backend):
    bad = tmp_path / "w.yaml"
    bad.write_text(WORLD.replace("    kind: deny\n", "    kind: deny\n    kind: allow\n"),
                   encoding="utf-8")
    err = refused(cli, stocked, str(bad))
    assert f"{bad}:13: kind: bad YAML: key 'kind' appears twice" in err


def test_yaml_merge_keys_may_be_overridden(cli, initialised, tmp_path, yaml_backend):
    ok = tmp_path / "w.yaml"
    ok.write_text(WORLD.replace("  - id: P01\n    kind: allow\n",
                                "  - &base\n    id: P01\n    kind: allow\n")
                  .replace("  - id: P02\n    kind: deny\n",
                           "  - <<: *base\n    id: P02\n    kind: deny\n"), encoding="utf-8")
    result = cli("import", str(ok))
    assert result.exit_code == 0, result.stderr
    assert "2 policy" in result.output


def test_jsonl_duplicate_key(cli, stocked, tmp_path):
    bad = tmp_path / "r.jsonl"
    dup = json.dumps(policy_record(1)).replace('"id": "P00001"',
                                              '"id": "P00001", "id": "P00002"')
    bad.write_text(json.dumps(WORLD_RECORD) + "\n" + dup + "\n", encoding="utf-8")
    err = refused(cli, stocked, str(bad))
    assert f"{bad}:2: id: name 'id' appears twice in one object" in err


def test_compass_duplicate_policy_name_names_its_line(cli, stocked, tmp_path):
    root = tmp_path / "scenario"
    (root / "policies").mkdir(parents=True)
    (root / "contexts").mkdir()
    (root / "contexts" / "Org.txt").write_text("Org sells bikes.\n", encoding="utf-8")
    policies = root / "policies" / "Org.json"
    policies.write_text('{\n  "allowlist": {\n    "hours": "a",\n    "hours": "b"\n  },\n'
                        '  "denylist": {"gossip": "c"}\n}\n', encoding="utf-8")
    err = refused(cli, stocked, "--from", "compass", str(root))
    assert f"{policies}:4: hours: name 'hours' appears twice in one object" in err


# ------------------------------------------------------------------ CompliBench

C2 = "Category 2: Intent Triggered Guidelines"
GUIDELINES = {"Category 1: Universal Compliance": {"tone": "Be polite."},
              C2: {"refund": {"Phase 1": "Ask for the order number."}}}


def conversation(*roles: str) -> dict:
    turns = []
    for i, role in enumerate(roles or ("user", "assistant")):
        t = {"turn_index": i, "role": role, "content": f"{role} {i}"}
        if role == "assistant":
            t.update(category=C2, key="refund", phase="Phase 1")
        turns.append(t)
    return {"domain": "x", "assistant_guidelines": GUIDELINES, "message_list": turns,
            "mistakes": []}


def put(root: Path, rel: str, data: object) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return p


MANIFEST = {"source_ablation": "ablation/insurance", "source_dump": "dump/insurance",
            "removed_count": 2, "removed_ids": ["conversation_00000", "conversation_00001"],
            "criteria": "kept conversations both judges scored"}


@pytest.fixture
def release(tmp_path) -> Path:
    """The public release's `data/` layout: one folder per domain, a readme, manifests."""
    root = tmp_path / "data"
    put(root, "airlines/conversation_00000.json", conversation())
    put(root, "airlines/readme.md", "# airlines\n\n95 conversations.\n")
    put(root, "insurance/conversation_00006.json", conversation("user", "assistant", "user"))
    put(root, "insurance/removed_manifest.json", MANIFEST)
    return root


def test_release_folder_skips_and_lists_what_is_not_a_conversation(cli, initialised, release):
    result = cli("import", "--from", "complibench", str(release))
    assert result.exit_code == 0, result.stderr
    assert "imported 2 conversation(s)" in result.output
    assert ("skipped 2 files that are not conversations: airlines/readme.md, "
            "insurance/removed_manifest.json") in result.output
    ids = [r[0] for r in connect(initialised).execute("SELECT id FROM dialogues ORDER BY id")]
    assert ids == ["airlines/conversation_00000", "insurance/conversation_00006"]


def test_a_single_skipped_file_is_named_in_the_singular(cli, initialised, release):
    (release / "airlines" / "readme.md").unlink()
    result = cli("import", "--from", "complibench", str(release))
    assert result.exit_code == 0, result.stderr
    assert ("skipped 1 file that is not a conversation: insurance/removed_manifest.json"
            in result.output)


@pytest.mark.parametrize(("data", "needle"), [
    ({"message_list": [{"turn_index": 0, "role": "user", "content": "hi"}]},
     "assistant_guidelines: missing"),
    ([{"role": "user", "content": "hi"}], "must be an object"),
    ("{oops", "not JSON"),
])
def test_a_malformed_conversation_beside_a_manifest_fails_the_import(
        cli, initialised, release, data, needle):
    bad = put(release, "insurance/conversation_00007.json", data)
    err = refused(cli, initialised, "--from", "complibench", str(release))
    assert str(bad) in err and needle in err


def test_a_manifest_named_on_its_own_is_refused(cli, initialised, release):
    manifest = release / "insurance" / "removed_manifest.json"
    err = refused(cli, initialised, "--from", "complibench", str(manifest))
    assert str(manifest) in err and "assistant_guidelines: missing" in err


@pytest.mark.parametrize("role", ["system", "Assistant", "customer"])
def test_unknown_role_is_refused_naming_the_turn(cli, initialised, release, role):
    bad = put(release, "airlines/conversation_00001.json",
              conversation("user", "assistant", role, "assistant"))
    err = refused(cli, initialised, "--from", "complibench", str(release))
    assert (f"{bad}: message_list[2].role: turn 2 has the unknown role {role!r}") in err


def test_conversation_duplicate_key_names_its_line(cli, initialised, release):
    text = json.dumps(conversation(), indent=2)
    lines = text.splitlines()
    at = next(i for i, s in enumerate(lines) if '"key": "refund"' in s)
    lines.insert(at + 1, '        "key": "refund",')
    bad = put(release, "airlines/conversation_00001.json", "\n".join(lines) + "\n")
    err = refused(cli, initialised, "--from", "complibench", str(release))
    assert f"{bad}:{at + 2}: key: name 'key' appears twice in one object" in err


def test_conversation_nested_100k_levels_deep(cli, initialised, release):
    bad = put(release, "airlines/conversation_00001.json",
              '{\n"message_list": ' + "[" * DEEP + "]" * DEEP + "\n}\n")
    err = refused(cli, initialised, "--from", "complibench", str(release))
    assert f"{bad}:2: nested deeper than 64 levels" in err


# ------------------------------------------------------------------ policy import is linear


def _max_position_queries(db_path: Path, source: Path) -> tuple[int, list[int]]:
    db = connect(db_path)
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    import_paths(db, [source])
    db.conn.set_trace_callback(None)
    positions = [r[0] for r in db.execute("SELECT position FROM policies ORDER BY pk")]
    return sum("MAX(position)" in s for s in seen), positions


@pytest.mark.parametrize("n", [3, 300])
def test_policy_positions_are_asked_for_once_per_world(initialised, tmp_path, n):
    yaml_world = tmp_path / "w.yaml"
    yaml_world.write_text(WORLD.split("policies:")[0] + "policies:\n" + "".join(
        f"  - id: Y{i}\n    kind: deny\n    text: Rule {i}.\n" for i in range(n)),
        encoding="utf-8")
    records = tmp_path / "r.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in
                               [WORLD_RECORD, *(policy_record(i) for i in range(n))]),
                       encoding="utf-8")
    queries, positions = _max_position_queries(initialised, yaml_world)
    assert queries == 1 and positions == list(range(1, n + 1))
    queries, positions = _max_position_queries(initialised, records)
    assert queries == 1 and positions == [*range(1, n + 1), *range(1, n + 1)]


def test_jsonl_policies_continue_after_the_stored_ones(cli, stocked, tmp_path):
    # A later import appends to a world's policies: positions go on from the stored maximum.
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps(policy_record(i, "tiny-co")) + "\n" for i in (7, 8)),
                    encoding="utf-8")
    assert cli("import", str(more)).exit_code == 0
    rows = connect(stocked).execute(
        "SELECT id, position FROM policies WHERE world_id = 'tiny-co' ORDER BY position")
    assert [tuple(r) for r in rows] == [("P01", 1), ("P02", 2), ("P00007", 3), ("P00008", 4)]
