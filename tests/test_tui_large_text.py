"""Long stored texts on every screen that shows one, through the Pilot: a response (or the turn
under review) of 400,000 characters, a model that would not stop, is shown a part of 16 KiB at
a time, `>` and `<` move between the parts, and `q` still quits; the COPAL and COMPASS label
queues never read more than a part of it from the database (no SQL statement hands the app a
value over 64 KiB); the screens that show other long texts (the turns of a dialogue, a policy)
show their first 16 KiB and say how much is left.

The text is numbered tokens, `<0000000> ` (ten characters each), so where a part starts and
ends follows from the documented part size alone: part 1 is characters 0-16,383.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.screens.record import RecordScreen
from copal_tui.tui.settings import Settings
from copal_tui.tui.widgets.response_view import ResponseView
from store.db import Database
from tests.compass_tui_support import build_compass_db
from tests.db_support import copy_db, query_rows
from tests.dialogue_tui_support import D1, MISTAKES, build_dialogue_db
from tests.test_tui_browse import open_world, table
from tests.test_tui_browse_data import W
from tests.test_tui_browse_data import settle as settle_lists
from tests.tui_label_support import build_db, plain, settle

PART = 16_384  # docs/labelling.md: a part is 16 KiB
TOKENS = 40_000
LONG = "".join(f"<{i:07d}> " for i in range(TOKENS))  # 400,000 characters
PARTS = -(-len(LONG) // PART)  # 25
LAST_OF_PART_1 = "<0001637>"  # characters 16,370-16,379
FIRST_OF_PART_2 = "<0001639>"  # characters 16,390-16,399: the one after is cut at 16,384
LARGEST_READ = 64 * 1024  # no value read through SQL may come near the response's size


# ------------------------------------------------------------------ what the app reads


class _Watched:
    """A cursor that notes the longest text or blob among the rows it hands out."""

    def __init__(self, cursor: sqlite3.Cursor, seen: list[int]) -> None:
        self._cursor, self._seen = cursor, seen

    def _note(self, row: Any) -> Any:
        for value in row or ():
            if isinstance(value, (str, bytes)):
                self._seen[0] = max(self._seen[0], len(value))
        return row

    def fetchone(self) -> Any:
        return self._note(self._cursor.fetchone())

    def fetchall(self) -> list[Any]:
        return [self._note(r) for r in self._cursor.fetchall()]

    def fetchmany(self, *args: Any) -> list[Any]:
        return [self._note(r) for r in self._cursor.fetchmany(*args)]

    def __iter__(self) -> Iterator[Any]:
        return (self._note(r) for r in self._cursor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


@pytest.fixture
def largest_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """[the longest value any statement of the process has read so far]."""
    seen = [0]
    for name in ("execute", "tuples"):
        original = getattr(Database, name)

        def watched(self: Database, sql: str, params: Any = (), _run: Any = original) -> Any:
            return _Watched(_run(self, sql, params), seen)

        monkeypatch.setattr(Database, name, watched)
    return seen


# ------------------------------------------------------------------ databases


def lengthen(db: Path, sql: str, params: tuple[Any, ...] = (), text: str = LONG) -> None:
    """Run an UPDATE that sets texts to `text` (`?` first in `params`)."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(sql, (text, *params))
        conn.commit()


@pytest.fixture(scope="module")
def copal_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = build_db(tmp_path_factory.mktemp("long"), extra_responses=3)
    lengthen(db, "UPDATE responses SET text = ?")  # every response: whichever comes first
    return db


@pytest.fixture
def copal_db(copal_template: Path, tmp_path: Path) -> Path:
    return copy_db(copal_template, tmp_path / "long.db")


@pytest.fixture
def compass_db(tmp_path: Path) -> Path:
    db = build_compass_db(tmp_path)
    lengthen(db, "UPDATE compass_responses SET text = ?")
    return db


# ------------------------------------------------------------------ checks


def shows_part(text: str, number: int) -> None:
    """`text` shows part `number` of LONG, and nothing of the parts around it."""
    words = " ".join(text.split())
    assert f"part {number} of {PARTS}" in words
    first, last = (number - 1) * PART, number * PART
    inside = [f"<{i:07d}>" for i in (first // 10 + 1, last // 10 - 1)]
    outside = [f"<{i:07d}>" for i in (first // 10 - 2, last // 10 + 2) if i >= 0]
    assert all(t in words for t in inside), inside
    assert not any(t in words for t in outside), outside
    assert len(text) < 2 * PART  # the part, its notes and what surrounds it: not the text


async def read_parts(pilot: Any, shown: Any) -> None:
    """Part 1, then `>` part 2, `>` part 3, `<` part 2; `<` twice more stops at part 1."""
    shows_part(shown(), 1)
    assert LAST_OF_PART_1 in shown() and FIRST_OF_PART_2 not in shown()
    await pilot.press("greater_than_sign")
    shows_part(shown(), 2)
    assert FIRST_OF_PART_2 in shown()
    await pilot.press("greater_than_sign")
    shows_part(shown(), 3)
    await pilot.press("less_than_sign")
    shows_part(shown(), 2)
    await pilot.press("less_than_sign", "less_than_sign")
    shows_part(shown(), 1)


async def quits(pilot: Any, app: CopalApp) -> None:
    await pilot.press("q")
    for _ in range(50):
        if app.return_code is not None:
            break
        await pilot.pause()
    assert app.return_code == 0


# ------------------------------------------------------------------ the label queues


@pytest.mark.parametrize(("mode", "who"), [("label", "zed"), ("adjudicate", "zoe")])
async def test_the_copal_queue_and_adjudication_read_a_long_response_a_part_at_a_time(
        copal_db: Path, largest_read: list[int], mode: str, who: str):
    app = make_app(copal_db, mode=mode, annotator=who, settings=Settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        assert screen.rid is not None

        def shown() -> str:
            return plain(screen.context_pane.query_one("#label-context-body").content)

        await read_parts(pilot, shown)
        assert largest_read[0] < LARGEST_READ
        rid = screen.rid
        await pilot.press("c")  # labelled (decided) "correct", whatever part is on screen
        await pilot.pause()
        await quits(pilot, app)
    [event] = query_rows(copal_db, "SELECT subject, action FROM annotations "
                                   "WHERE annotator = ?", (who,))
    assert (event["subject"], event["action"]) == (rid, "label")


async def test_parts_of_a_text_outside_ascii_hold_every_character_once(copal_db: Path):
    """Parts are 16 KiB of UTF-8: they end between characters, never inside one."""
    unit = "\u00e9\u20ac\U0001f600a"  # 2 + 3 + 4 + 1 bytes
    text = unit * 4_000  # 40,000 bytes: three parts
    lengthen(copal_db, "UPDATE responses SET text = ?", text=text)
    app = make_app(copal_db, mode="label", annotator="zed", settings=Settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        parts = []
        for number in (1, 2, 3):
            lines = plain(screen.context_pane.query_one("#label-context-body").content,
                          300).splitlines()
            start = next(i for i, line in enumerate(lines)
                         if line.startswith(f"[part {number} of 3:"))
            body = []
            for line in lines[start + 1:]:
                if not line.strip() or line.startswith("[\u2026 continued"):
                    break
                body.append(line.rstrip())
            parts.append("".join(body))
            await pilot.press("greater_than_sign")
    assert [len(part.encode()) <= PART + 3 for part in parts] == [True] * 3
    assert "".join(parts) == text


async def test_the_compass_queue_reads_and_shows_a_long_response_a_part_at_a_time(
        compass_db: Path, largest_read: list[int]):
    app = make_app(compass_db, mode="label", suite="compass", annotator="cleo",
                   settings=Settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        assert screen.rid == "r1"

        def shown() -> str:
            return plain(screen.query_one("#compass-ctx", Static).content, width=300)

        await read_parts(pilot, shown)
        assert largest_read[0] < LARGEST_READ
        await pilot.press("a", "c", "enter")
        await pilot.pause()
        await quits(pilot, app)
    [label] = query_rows(compass_db, "SELECT subject FROM annotations WHERE annotator = 'cleo'")
    assert label["subject"] == "r1"


async def test_the_dialogue_review_shows_a_long_turn_a_part_at_a_time(tmp_path: Path):
    db = build_dialogue_db(tmp_path)
    key = MISTAKES[0][0]  # the first mistake: its turn is the one under review
    lengthen(db, "UPDATE dialogue_turns SET content = ? WHERE dialogue_id = ? AND "
                 "turn_index = ?", (key.dialogue_id, key.turn_index))
    app = make_app(db, mode="label", suite="dialogue", annotator="ana", settings=Settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        assert screen.key == key
        await read_parts(pilot, screen.context_text)
        await quits(pilot, app)


# ------------------------------------------------------------------ browsing


async def test_the_item_screen_shows_a_long_response_a_part_at_a_time(copal_db: Path):
    [row] = query_rows(copal_db, "SELECT id, item_id FROM responses ORDER BY id LIMIT 1")
    async with make_app(copal_db).run_test(size=(120, 40)) as pilot:
        await settle_lists(pilot)
        pilot.app.action_open("item", item_id=row["item_id"], response_id=row["id"])
        await pilot.pause()
        screen: Any = pilot.app.screen

        def shown() -> str:
            return plain(screen.query_one(ResponseView).content, 300)

        await read_parts(pilot, shown)


async def test_the_compass_query_screen_shows_a_long_response_a_part_at_a_time(
        compass_db: Path):
    async with make_app(compass_db).run_test(size=(120, 40)) as pilot:
        await settle_lists(pilot)
        pilot.app.action_open("compass_query", query_id="q1", tab="responses")
        await pilot.pause()
        screen: Any = pilot.app.screen

        def shown() -> str:
            return plain(screen.query_one("#compass-response-body", Static).content, 300)

        await read_parts(pilot, shown)


async def test_the_dialogue_screen_shows_the_start_of_a_long_turn(tmp_path: Path):
    db = build_dialogue_db(tmp_path)
    lengthen(db, "UPDATE dialogue_turns SET content = ? WHERE dialogue_id = ? AND "
                 "turn_index = 0", (D1,))
    async with make_app(db, settings=Settings()).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pilot.app.action_open("dialogue", dialogue_id=D1)
        await pilot.pause()
        shown = " ".join(pilot.app.screen.turn_plain(0).split())
        assert LAST_OF_PART_1 in shown and FIRST_OF_PART_2 not in shown
        assert f"{len(LONG) - PART:,} more characters not shown" in shown
        assert len(shown) < 2 * PART


async def test_a_record_shows_the_start_of_a_long_policy(copal_db: Path):
    policy = "P10"
    lengthen(copal_db, "UPDATE policies SET text = ? WHERE world_id = ? AND id = ?",
             (W, policy))
    async with make_app(copal_db).run_test(size=(100, 30)) as pilot:
        await open_world(pilot)
        table(pilot, "policies").select_key(policy)
        await pilot.press("enter")
        await pilot.pause()
        record = pilot.app.screen
        assert isinstance(record, RecordScreen)
        shown = " ".join(" ".join(plain(body, 300) for _, body in record.sections).split())
        assert LAST_OF_PART_1 in shown and FIRST_OF_PART_2 not in shown
        assert f"{len(LONG) - PART:,} more characters not shown" in shown
