"""Identifiers planted in a chatbot's log never leave de-identification: not in the database
file's bytes (tests/test_traffic_import.py), not in any export of the report (CSV, Markdown,
LaTeX, JSON, the interchange records), and not in what `copal serve` sends a browser labelling
the pairs, while the typed placeholders that replaced them are there to read."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.serve.auth import Grant
from copal_tui.serve.server import CopalServer
from tests.test_serve_auth import client, free_port, running, token_of
from tests.test_serve_e2e import pump, screen, wait_for

# One planted identifier of each structured type, as a customer would type them.
PLANTED = {
    "EMAIL": "zora.quill@example.com",
    "PHONE": "+44 20 7946 0958",
    "CARD": "4111 1111 1111 1111",
    "IBAN": "GB82 WEST 1234 5698 7654 32",
    "IP": "203.0.113.77",
    "URL": "https://portal.example.com/reset?token=9f8e7d6c5b4a39281706",
}
LOG = [
    {"query": f"My e-mail is {PLANTED['EMAIL']} and my phone {PLANTED['PHONE']}: any news?",
     "response": f"Thanks, I have noted {PLANTED['EMAIL']} for updates."},
    {"query": f"Refund it to {PLANTED['IBAN']}, or my card {PLANTED['CARD']}.",
     "response": "I can't take payment details in the chat."},
    {"query": f"The reset link {PLANTED['URL']} fails from {PLANTED['IP']}.",
     "response": f"Please open {PLANTED['URL']} again."},
]
DEADLINE_S = 120


def _cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def store(tmp_path: Path, samples: Path) -> Path:
    db = tmp_path / "leak.db"
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(p) + "\n" for p in LOG), encoding="utf-8")
    _cli(db, "init")
    _cli(db, "import", str(samples / "harbor_clinics.yaml"))
    _cli(db, "traffic", "import", str(log), "--source", "web", "--world", "harbor-clinics")
    _cli(db, "run", "traffic_judge", "--judge", "offline/judge")
    return db


def _leaks(text: str) -> list[str]:
    return [kind for kind, value in PLANTED.items() if value in text]


def test_no_export_carries_a_planted_identifier(tmp_path, store):
    db = store
    out = tmp_path / "out"
    for fmt in ("csv", "md", "latex", "json"):
        _cli(db, "export", "--format", fmt, "--out", str(out / fmt))
    _cli(db, "export", "--format", "jsonl", "--out", str(out / "records.jsonl"))
    texts = {str(p): p.read_text(encoding="utf-8", errors="replace")
             for p in out.rglob("*") if p.is_file()}
    assert any("traffic_audit" in t for t in texts.values())  # the traffic figures are there
    assert {path: _leaks(t) for path, t in texts.items() if _leaks(t)} == {}
    report = _cli(db, "report", "--bootstrap", "0")
    assert _leaks(report) == [] and "Real traffic (Table 11)" in report


async def test_the_served_label_queue_shows_placeholders_never_the_identifiers(store):
    db = store
    server = CopalServer(db, mode="label", suite="traffic", port=free_port())
    ana = token_of(server.issue(Grant("label", "ana")))
    end = time.monotonic() + DEADLINE_S
    async with running(server) as base, client() as http:
        async with http.get(f"{base}/?token={ana}") as page:
            assert page.status == 200
            assert _leaks(await page.text()) == []
        async with http.ws_connect(f"{base}/ws?width=120&height=40", origin=base) as ws:
            seen = bytearray()
            reader = asyncio.create_task(pump(ws, seen))
            try:
                await wait_for("a pair on screen", lambda: b"EMAIL_1" in seen
                               or b"IBAN_1" in seen or b"URL_1" in seen, reader, seen, end)
                for _ in range(len(LOG)):  # skip through every pair, so each is drawn
                    await ws.send_json(["stdin", "s"])
                    await asyncio.sleep(0.5)
            finally:
                reader.cancel()
    shown = seen.decode("utf-8", "replace")
    assert _leaks(shown) == [], screen(seen)
    assert [k for k in ("EMAIL_1", "IBAN_1", "URL_1") if k not in shown] == []
