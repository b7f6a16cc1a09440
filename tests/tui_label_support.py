"""Test databases and helpers for the label queue and adjudication tests (label engineer).

Databases are built through the public CLI import of the two showcase worlds (items, responses,
labels by ana and ben, adjudications), plus small hand-written JSONL: a contract judge's
judgments and, when asked, extra unlabelled responses (one of them hostile text).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir
from store.db import connect

HOSTILE = ("[bold red]not markup[/bold red] \x1b[31mred?\x1b[0m \x1b]0;pwned\x07title "
           "\u202eevil\u202c end")


def _cli(db: Path, *args: str) -> None:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def build_db(tmp_path: Path, *, extra_responses: int = 0, judge: bool = True) -> Path:
    """Showcase worlds + a judge's marks (+ `extra_responses` unlabelled responses)."""
    db = tmp_path / "label.db"
    samples = sample_worlds_dir()
    _cli(db, "init")
    paths = [samples / "harbor_clinics.yaml", samples / "harbor_clinics.jsonl",
             samples / "meridian_bank.yaml", samples / "meridian_bank.jsonl"]
    _cli(db, "import", *map(str, paths))
    conn = connect(db)
    responses = [dict(r) for r in conn.execute(
        "SELECT r.id, r.item_id, i.required FROM responses r JOIN items i ON i.id = r.item_id "
        "ORDER BY r.id")]
    items = [dict(r) for r in conn.execute(
        "SELECT id FROM items WHERE world_id = 'harbor-clinics' ORDER BY id")]
    conn.conn.close()
    records: list[dict[str, Any]] = []
    if judge:
        # A strict judge that sees nothing present: it marks every response over-enforcing,
        # which disagrees with the annotators wherever they agreed on "correct".
        records += [{"type": "judgment", "id": f"{r['id']}:test-judge", "response_id": r["id"],
                     "judge": "test/judge", "mode": "contract", "observed": [],
                     "rationale": "test judge: nothing found"} for r in responses]
    for n in range(extra_responses):
        item = items[n % len(items)]["id"]
        records.append({"type": "response", "id": f"{item}:extra{n}", "item_id": item,
                        "model": f"test/bot{n % 2}", "variant": f"v{n}",
                        "text": HOSTILE if n == 0 else f"Extra answer {n} for {item}."})
    if records:
        extra = tmp_path / "extra.jsonl"
        extra.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        _cli(db, "import", str(extra))
    return db


def rows(db: Path, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    conn = connect(db)
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.conn.close()


# A COPAL event of the annotation log as the columns the tests read (the payload's fields
# beside the event's; `observed` decoded).
_EVENT = ("SELECT id, subject AS response_id, annotator, role, action, "
          "json_extract(payload, '$.observed') AS observed, "
          "json_extract(payload, '$.error') AS error, "
          "json_extract(payload, '$.direction') AS direction, "
          "json_extract(payload, '$.facet') AS facet, json_extract(payload, '$.note') AS note, "
          "json_extract(payload, '$.flag') AS flag, content_sha256, created_at "
          "FROM {table} WHERE suite = 'copal'")


def _decoded(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in out:
        r["observed"] = None if r["observed"] is None else json.loads(r["observed"])
    return out


def label_events(db: Path, annotator: str, role: str = "annotator") -> list[dict[str, Any]]:
    """The person's COPAL events (labels, undos, skips, notes, flags; or decisions), in order."""
    return _decoded(rows(db, _EVENT.format(table="annotations") +
                         " AND annotator = ? AND role = ? ORDER BY id", (annotator, role)))


def current_labels(db: Path, where: str = "1", params: tuple = (),
                   role: str = "annotator") -> list[dict[str, Any]]:
    """Current COPAL labels (or decisions) matching `where`, by response then annotator."""
    return _decoded(rows(db, _EVENT.format(table="current_annotations") +
                         f" AND role = ? AND ({where}) ORDER BY subject, annotator",
                         (role, *params)))


def required_ids(db: Path, response_id: str) -> list[str]:
    row = rows(db, "SELECT i.required FROM responses r JOIN items i ON i.id = r.item_id "
               "WHERE r.id = ?", (response_id,))[0]
    return [c["id"] for c in json.loads(row["required"])]


def plain(renderable: Any, width: int = 200) -> str:
    """What a Rich renderable prints, as plain text (no styles)."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined,no-any-return]


async def settle(pilot: Any) -> None:
    """Wait for the queue-order worker and the screen update it triggers."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
