"""The review queue's lease follows the mistake on screen: n/p hand it over once the new mistake
is drawn, moves in a burst end with one lease (on the mistake reached), a review made right
after a move lands with its lease in order, and quitting right after a move gives every lease
back. Asserted on the rows of annotation_leases and annotations, through the Pilot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.screens.dialogue_review import DialogueReviewScreen
from copal_tui.tui.settings import Settings
from store.annotation.dialogue_reviews import ReviewKey, subject_of
from tests.dialogue_tui_support import D1, MISTAKES, build_dialogue_db, events, rows
from tests.tui_label_support import settle

KEYS = [k for k, _ in MISTAKES]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_dialogue_db(tmp_path)


def app_for(db: Path, reviewer: str = "ana") -> CopalApp:
    return make_app(db, mode="label", suite="dialogue", annotator=reviewer,
                    settings=Settings())


def live_leases(db: Path, reviewer: str = "ana") -> list[str]:
    return [r["subject"] for r in rows(
        db, "SELECT subject FROM annotation_leases WHERE suite = 'dialogue' AND "
        "annotator = ? AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
        "ORDER BY subject", (reviewer,))]


async def until(pilot: Any, ready: Callable[[], bool], what: str) -> None:
    for _ in range(250):
        if ready():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def shown(app: CopalApp) -> ReviewKey | None:
    screen = app.screen
    assert isinstance(screen, DialogueReviewScreen)
    return screen.key


async def test_n_and_p_hand_the_lease_to_the_mistake_shown(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: live_leases(db) == [subject_of(KEYS[0])], "first lease")
        await pilot.press("n")
        assert shown(pilot.app) == KEYS[1]
        await until(pilot, lambda: live_leases(db) == [subject_of(KEYS[1])], "lease on #2")
        await pilot.press("p")
        assert shown(pilot.app) == KEYS[0]
        await until(pilot, lambda: live_leases(db) == [subject_of(KEYS[0])], "lease on #1")


async def test_a_burst_of_moves_ends_with_one_lease_on_the_mistake_reached(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n", "n", "n", "p")
        assert shown(pilot.app) == KEYS[2]
        await until(pilot, lambda: live_leases(db) == [subject_of(KEYS[2])], "one lease")
        # Nothing but leases was written.
        assert events(db, "ana") == []


async def test_a_review_right_after_a_move_lands_and_the_lease_moves_on(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n", "3", "enter")
        await until(pilot, lambda: shown(pilot.app) == KEYS[2], "the next mistake")
        await until(pilot, lambda: subject_of(KEYS[2]) in live_leases(db), "lease on #3")
        # The reviewed mistake keeps its slot through its review; the first one, left
        # unreviewed, was given back.
        assert subject_of(KEYS[0]) not in live_leases(db)
    assert [e[:5] for e in events(db, "ana")] == [(D1, "judge-a", 1, 5, "label")]


async def test_quitting_right_after_a_move_gives_every_lease_back(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n", "n", "q")
        await until(pilot, lambda: pilot.app.return_code is not None, "the app to quit")
    assert live_leases(db) == []
