"""A busy database never loses a label nor freezes a queue: the test holds SQLite's write lock
from its own connection (as a long import in another process would), labels through the Pilot,
and checks the status says "waiting for the database", that the screen still answers keys, and
that once the lock is released every label lands exactly once, in the order submitted. Also:
quitting while a label waits (waits, or discards on a second q and exits 1), and a crash of the
TUI makes `copal label` exit 1 with a one-line message.

Waits are bounded polls with pilot.pause(); the retry delays and busy timeouts are lowered
through monkeypatch so nothing waits the real 30 s.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import store.db
from copal_tui.cli import main
from copal_tui.tui import busy
from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.screens import label_lifecycle
from copal_tui.tui.screens.help import HelpScreen
from copal_tui.tui.screens.label_queue import LabelQueueScreen
from copal_tui.tui.settings import Settings
from tests import compass_tui_support, dialogue_tui_support
from tests.tui_label_support import build_db, label_events, rows, settle

WAITING = "waiting for the database"


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(busy, "ATTEMPT_MS", 20)
    monkeypatch.setattr(busy, "RETRY_SECONDS", (0.05,))
    monkeypatch.setattr(label_lifecycle, "ORDER_RETRY_S", 0.05)
    # Any write still made with the default busy timeout fails in 2 s rather than 30 s.
    monkeypatch.setattr(store.db, "BUSY_TIMEOUT_MS", 2000)
    monkeypatch.setattr(busy, "BUSY_TIMEOUT_MS", 2000)


@pytest.fixture
def db(tmp_path):
    return build_db(tmp_path)


class WriteLock:
    """Another process's long write: SQLite's write lock, held until `release`."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


@contextmanager
def write_lock(path: Path) -> Iterator[WriteLock]:
    lock = WriteLock(path)
    try:
        yield lock
    finally:
        lock.release()
        lock.conn.close()


async def until(pilot: Any, ready: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if ready():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def label_app(db: Path, annotator: str = "cleo") -> CopalApp:
    return make_app(db, mode="label", annotator=annotator, settings=Settings(overlap=3))


def labels(db: Path, who: str = "cleo") -> list[tuple[str, str]]:
    return [(e["response_id"], e["action"]) for e in label_events(db, who)]


async def test_a_label_waits_for_a_busy_database_and_lands_once_in_order(db):
    app = label_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LabelQueueScreen)
        first = screen.rid
        with write_lock(db) as lock:
            await pilot.press("c")
            await pilot.pause()
            assert WAITING in screen.status_text
            second = screen.rid
            assert second not in (None, first)  # the queue goes on while the label waits
            await pilot.press("question_mark")  # the app still answers keys
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("question_mark")
            await pilot.pause()
            assert app.screen is screen
            await pilot.press("c")  # a second label while the first waits
            await pilot.pause()
            assert WAITING in screen.status_text and labels(db) == []
            lock.release()
            await until(pilot, lambda: len(labels(db)) == 2 and not app.writes.busy,
                        "both labels")
        assert WAITING not in screen.status_text
        assert "2/72 labelled" in screen.status_text
    assert labels(db) == [(first, "label"), (second, "label")]


async def test_q_while_a_label_waits_quits_once_it_is_saved(db):
    app = label_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        first = app.screen.rid
        with write_lock(db) as lock:
            await pilot.press("c")
            await pilot.pause()
            await pilot.press("q")
            await pilot.pause()
            assert app.return_code is None  # still running: the label is not saved yet
            assert "quitting once saved" in app.screen.status_text
            lock.release()
            await until(pilot, lambda: app.return_code is not None, "the app to quit")
    assert app.return_code == 0 and app.exit_note is None
    assert labels(db) == [(first, "label")]


async def test_a_second_q_discards_the_waiting_label_and_says_so(db):
    app = label_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pos = rows(db, "SELECT position FROM campaign_subjects WHERE campaign = "
                   "'default:copal' AND subject = ?", (app.screen.rid,))[0]["position"]
        with write_lock(db):
            await pilot.press("c")
            await pilot.pause()
            await pilot.press("q", "q")
            await until(pilot, lambda: app.return_code is not None, "the app to quit")
    assert app.return_code == 1
    assert app.exit_note is not None and f"label on #{pos}" in app.exit_note
    assert labels(db) == []  # discarded on purpose, and said so


async def test_new_responses_wait_for_the_database_at_start(db):
    # Nothing is placed in the queue yet (the first start orders the responses): the lock
    # makes that wait; the screen says so and fills once the database is free.
    with write_lock(db) as lock:
        app = label_app(db)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: WAITING in getattr(app.screen, "status_text", ""),
                        "the screen to say it waits")
            assert app.screen.rid is None
            lock.release()
            await until(pilot, lambda: app.screen.rid is not None, "the queue to fill")
            assert WAITING not in app.screen.status_text


async def test_compass_labels_wait_and_land_in_order(tmp_path):
    db = compass_tui_support.build_compass_db(tmp_path)
    app = make_app(db, mode="label", suite="compass", annotator="cleo", settings=Settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        with write_lock(db) as lock:
            await pilot.press("a", "c", "enter")
            await pilot.pause()
            assert WAITING in screen.status_text and screen.rid == "r2"
            await pilot.press("r", "c", "enter")
            await pilot.pause()
            assert screen.rid == "r3"
            lock.release()
            await until(pilot, lambda: not app.writes.busy, "the labels")
        assert WAITING not in screen.status_text
    assert [(e["response_id"], e["action"], e["refused"])
            for e in compass_tui_support.events(db, "cleo")] == [
        ("r1", "label", 0), ("r2", "label", 1)]


async def test_dialogue_reviews_wait_and_land_in_order(tmp_path):
    db = dialogue_tui_support.build_dialogue_db(tmp_path)
    app = make_app(db, mode="label", suite="dialogue", annotator="ana", settings=Settings())
    keys = [k for k, _ in dialogue_tui_support.MISTAKES]
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        with write_lock(db) as lock:
            await pilot.press("1", "enter")
            await pilot.pause()
            assert WAITING in screen.status_text and screen.key == keys[1]
            await pilot.press("2", "enter")
            await pilot.pause()
            lock.release()
            await until(pilot, lambda: not app.writes.busy, "the reviews")
    events = dialogue_tui_support.events(db, "ana")
    assert [(e[:4], e[4]) for e in events] == [(tuple(keys[0]), "label"),
                                               (tuple(keys[1]), "label")]


async def test_an_adjudication_waits_and_lands_once(db):
    app = make_app(db, mode="adjudicate", annotator="lead2", settings=Settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        rid = app.screen.rid
        with write_lock(db) as lock:
            await pilot.press("c")
            await pilot.pause()
            assert WAITING in app.screen.status_text
            lock.release()
            await until(pilot, lambda: not app.writes.busy, "the decision")
    decided = [(e["response_id"], e["action"]) for e in label_events(db, "lead2", "adjudicator")]
    assert decided == [(rid, "label")]


# ------------------------------------------------------------------ the command's exit code


def run_headless(monkeypatch: pytest.MonkeyPatch, script: Callable[[Any], Any]) -> None:
    """`_run` calls `app.run()`: run it headless with `script` driving it."""
    monkeypatch.setenv("COPAL_OVERLAP", "3")  # ana and ben fill two slots of every response
    original = CopalApp.run

    def run(self: CopalApp, **_kwargs: Any) -> Any:
        return original(self, headless=True, size=(100, 30), auto_pilot=script)

    monkeypatch.setattr(CopalApp, "run", run)


async def ready(pilot: Any) -> None:
    await until(pilot, lambda: getattr(pilot.app.screen, "rid", None) is not None, "a response")


def label_cmd(db: Path) -> Any:
    return CliRunner().invoke(main, ["--db", str(db), "label", "--annotator", "cleo"])


def test_a_crash_makes_the_command_exit_1_with_one_line(db, monkeypatch):
    def boom(self: LabelQueueScreen) -> None:
        raise ValueError("boom from a test")

    monkeypatch.setattr(LabelQueueScreen, "action_skip", boom)

    async def script(pilot: Any) -> None:
        await ready(pilot)
        await pilot.press("s")
        await until(pilot, lambda: pilot.app.return_code is not None, "the crash")

    run_headless(monkeypatch, script)
    result = label_cmd(db)
    assert result.exit_code == 1
    assert "copal label: stopped on an error: ValueError: boom from a test" in result.stderr


def test_a_clean_quit_exits_0(db, monkeypatch):
    async def script(pilot: Any) -> None:
        await ready(pilot)
        await pilot.press("c", "q")

    run_headless(monkeypatch, script)
    result = label_cmd(db)
    assert result.exit_code == 0, result.output
    assert [action for _rid, action in labels(db)] == ["label"]


def test_discarding_a_waiting_label_exits_1_and_names_it(db, monkeypatch):
    async def script(pilot: Any) -> None:
        await ready(pilot)
        with write_lock(db):
            await pilot.press("c")
            await pilot.pause()
            await pilot.press("q", "q")
            await until(pilot, lambda: pilot.app.return_code is not None, "the quit")

    run_headless(monkeypatch, script)
    result = label_cmd(db)
    assert result.exit_code == 1
    assert "copal label: quit with 1 unsaved change(s)" in result.stderr
    assert "label on #" in result.stderr and labels(db) == []
