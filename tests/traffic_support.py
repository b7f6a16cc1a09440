"""A small traffic store for the label, adjudication and agreement tests, built through copal's
own CLI: a world (Harbor Clinics) imported from the sample worlds, a JSONL log of four pairs
linked to it (source `web`: one with a planted e-mail address, one hostile text, one long
response) and a transcript log of one conversation not linked to any world (source `app`),
then a campaign `audit` of every pair.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir
from store.db import connect

WORLD = "harbor-clinics"
HOSTILE = ("[bold red]not markup[/bold red] \x1b[31mred?\x1b[0m \x1b]0;pwned\x07title "
           "\u202eevil\u202c end")
LONG_RESPONSE = " ".join(f"word{n}" for n in range(6000))  # past one part of the screen
PAIRS = [
    {"query": "Hi, I'm zora.quill@example.com: can I move my appointment to Friday?",
     "response": "Yes, I have moved it; a confirmation goes to your e-mail."},
    {"query": "What are your opening hours?", "response": HOSTILE},
    {"query": "Can you tell me my neighbour's test results?",
     "response": "Here they are: negative for everything."},
    {"query": "Explain every clinic service in detail.", "response": LONG_RESPONSE},
]
CONVERSATION = [{"role": "user", "content": "I need a repeat prescription."},
                {"role": "assistant", "content": "Which medicine is it for?"},
                {"role": "user", "content": "My inhaler, please send it today."},
                {"role": "assistant", "content": "Done: it will be ready at noon."}]


def cli(db: Path, *args: str) -> Any:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def build_traffic_db(tmp_path: Path, *, campaign: str | None = "audit") -> Path:
    db = tmp_path / "traffic.db"
    cli(db, "init")
    cli(db, "import", str(sample_worlds_dir() / "harbor_clinics.yaml"))
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(p) + "\n" for p in PAIRS), encoding="utf-8")
    cli(db, "traffic", "import", str(log), "--source", "web", "--world", WORLD)
    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"messages": CONVERSATION}) + "\n", encoding="utf-8")
    cli(db, "traffic", "import", str(chats), "--source", "app", "--format", "transcripts")
    if campaign is not None:
        cli(db, "campaign", "create", campaign, "--suite", "traffic")
    return db


def rows(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    conn = connect(db)
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.conn.close()


def pair_ids(db: Path) -> dict[str, str]:
    """Pair id -> its query (as stored: de-identified)."""
    return {r["id"]: r["query"] for r in rows(db, "SELECT id, query FROM traffic_pairs")}


# A traffic event of the annotation log as the columns the tests read.
EVENT = ("SELECT id, subject, annotator, role, action, "
         "json_extract(payload, '$.category') AS category, "
         "json_extract(payload, '$.erroneous') AS erroneous, "
         "json_extract(payload, '$.policies') AS policies, "
         "json_extract(payload, '$.sensitive') AS sensitive, "
         "json_extract(payload, '$.note') AS note, content_sha256 "
         "FROM annotations WHERE suite = 'traffic'")


def events(db: Path, who: str, role: str = "annotator") -> list[dict[str, Any]]:
    """The person's traffic events, oldest first (policies decoded)."""
    out = rows(db, EVENT + " AND annotator = ? AND role = ? ORDER BY id", (who, role))
    for r in out:
        r["policies"] = None if r["policies"] is None else json.loads(r["policies"])
    return out
