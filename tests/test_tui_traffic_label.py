"""The traffic label queue and its adjudication through the Textual Pilot, at 80x24, asserting
the events written to the annotation log: the category keys, c/v, the policy picker of the
linked world, the sensitive flag, the note, undo; blindness (no other annotator's label and no
automatic prediction on screen); the keys in the one keymap; a decision with its undo."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from copal_tui.domain.traffic import TrafficLabel
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.keymap import check_keymap
from copal_tui.tui.screens.help import binding_rows
from copal_tui.tui.screens.traffic_adjudicate import TrafficAdjudicateScreen
from copal_tui.tui.screens.traffic_label import TrafficLabelScreen
from copal_tui.tui.screens.traffic_policies import TrafficPoliciesScreen
from copal_tui.tui.settings import Settings, SettingsError
from store.artifacts.traffic import replace_judgment
from store.db import connect, write
from tests.traffic_support import build_traffic_db, events, rows
from tests.tui_label_support import settle


@pytest.fixture
def db(tmp_path):
    return build_traffic_db(tmp_path)


def app_for(db, who="ana", **kwargs: Any) -> CopalApp:
    return make_app(db, mode="label", suite="traffic", annotator=who, settings=Settings(),
                    **kwargs)


def screen_of(app: CopalApp) -> TrafficLabelScreen:
    assert isinstance(app.screen, TrafficLabelScreen)
    return app.screen


# Moves before a test gives up looking for a pair: the campaign's six, twice over and more.
MOVES = 20


async def move_to(pilot: Any, screen: TrafficLabelScreen, wanted: Any, what: str) -> None:
    """Move through the queue until `wanted(subject)` holds: forwards (`n`) to its last pair,
    then backwards (`p`), each move's screen update awaited. The queue's order follows the
    pairs' ids, which an import draws anew, so the pair may be on either side. Bounded: a
    queue without it fails here instead of hanging the run."""
    for key in ("n", "p"):
        for _ in range(MOVES):
            if wanted(screen.subject):
                return
            before = screen.subject
            await pilot.press(key)
            await settle(pilot)
            if screen.subject == before:  # the end of the queue this way
                break
    raise AssertionError(f"the queue never showed {what}")


def screen_text(app: CopalApp) -> str:
    """What the terminal shows, as text (the screenshot's text runs)."""
    runs = re.findall(r"<text[^>]*>(.*?)</text>", app.export_screenshot(), flags=re.S)
    return html.unescape("".join(runs)).replace("\xa0", " ")


def linked(db) -> set[str]:
    return {r["id"] for r in rows(db, "SELECT id FROM traffic_pairs WHERE world_id IS NOT NULL")}


def shown(e: dict[str, Any]) -> tuple[Any, ...]:
    return (e["subject"], e["action"], e["category"], e["erroneous"], e["policies"],
            e["sensitive"], e["note"])


async def test_keys_label_undo_note_and_the_sensitive_flag(db):
    app = app_for(db, campaign="audit")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        first = screen.subject
        assert first is not None and "0/6 of campaign audit" in screen.status_text
        await pilot.press("enter")  # nothing chosen: no row
        await pilot.press("0", "2", "c", "v", "enter")  # the later choice of each wins
        await pilot.pause()
        second = screen.subject
        assert second not in (None, first) and "1/6" in screen.status_text
        await pilot.press("0", "c", "enter")
        await pilot.pause()
        await pilot.press("u")  # back to the second pair, its choices kept
        await pilot.pause()
        assert screen.subject == second
        assert (screen.form.category, screen.form.erroneous) == ("none", False)
        await pilot.press("1", "v", "e")
        await pilot.press(*"checked twice", "enter")  # the note prompt
        await pilot.pause()
        assert screen.form.note == "checked twice"
        await pilot.press("enter")
        await pilot.pause()
        third = screen.subject
        await pilot.press("f", "enter")  # flagged: no category or verdict needed
        await pilot.pause()
        assert "3/6" in screen.status_text
    assert [shown(e) for e in events(db, "ana")] == [
        (first, "label", "multi", 1, None, 0, None),
        (second, "label", "none", 0, None, 0, None),
        (second, "undo", None, None, None, None, None),
        (second, "label", "single", 1, None, 0, "checked twice"),
        (third, "label", None, None, None, 1, None)]
    flagged = rows(db, "SELECT subject FROM current_annotations WHERE suite = 'traffic' "
                   "AND json_extract(payload, '$.sensitive') = 1")
    assert [r["subject"] for r in flagged] == [third]


async def test_policies_of_the_linked_world_only_and_as_the_category_allows(db):
    with_world = linked(db)
    app = app_for(db, campaign="audit")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        # An unlinked pair first: nothing to pick.
        await move_to(pilot, screen, lambda s: s not in with_world, "an unlinked pair")
        await pilot.press("o")
        await pilot.pause()
        assert screen_of(app).form.policies == []  # no picker over the queue
        await move_to(pilot, screen, lambda s: s in with_world, "a linked pair")
        target = screen.subject
        await pilot.press("1", "v", "o")
        await pilot.pause()
        assert isinstance(app.screen, TrafficPoliciesScreen)
        await pilot.press("space", "down", "space", "enter")  # P01 and P02
        await pilot.pause()
        assert screen_of(app).form.policies == ["P01", "P02"]
        await pilot.press("enter")  # a single-policy pair names one policy at most: refused
        await pilot.pause()
        assert screen.subject == target and events(db, "ana") == []
        await pilot.press("o", "space", "enter")  # untick P01
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert screen.subject != target
    assert [shown(e) for e in events(db, "ana")] == [
        (target, "label", "single", 1, ["P02"], 0, None)]


async def test_the_queue_is_blind_and_shows_stored_text_safely(db):
    conn = connect(db)
    ids = [r["id"] for r in rows(db, "SELECT id FROM traffic_pairs ORDER BY id")]
    ben = AnnotationQueue.of_campaign(conn, "audit", "ben")
    with write(conn):
        for pid in ids:
            replace_judgment(conn, pair_id=pid, judge="test/judge", category="multi",
                             erroneous=True, policies=None, reason="JUDGE-SEES-THIS",
                             failure=None, run_id=None)
    for pid in ids:
        ben.submit(pid, TrafficLabel(category="multi", erroneous=True, note="BEN-SEES-THIS"))
    conn.conn.close()
    app = app_for(db)  # the default queue this time
    seen, everything = [], []
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        for _ in ids:
            seen.append(screen.subject)
            text = screen_text(app)
            assert "BEN-SEES-THIS" not in text and "JUDGE-SEES-THIS" not in text
            assert "ben" not in text.split()
            assert (screen.form.category, screen.form.erroneous) == (None, None)
            everything.append(text)
            await pilot.press("n")
            await pilot.pause()
    assert sorted(seen) == ids
    joined = "\n".join(everything)  # what each pair shows, the stored text kept literal
    assert "<EMAIL_1>" in joined and "zora.quill" not in joined  # de-identified on import
    assert "[bold red]not markup[/bold red]" in joined and "\x1b" not in joined
    assert "Which medicine is it for?" in joined  # a transcript's earlier turns


async def test_a_long_response_is_read_a_part_at_a_time(db):
    long_pair = rows(db, "SELECT id FROM traffic_pairs WHERE query LIKE 'Explain%'")[0]["id"]
    app = app_for(db, campaign="audit")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await move_to(pilot, screen, lambda s: s == long_pair, "the long pair")
        assert screen.response.part is not None and screen.response.part.index == 0
        await pilot.press("greater_than_sign")
        assert screen.response.part.index == 1
        await pilot.press("pagedown")
        assert screen.reading_pane.scroll_y > 0
        assert "word0 " not in screen_text(app)


def test_the_keys_are_in_the_one_keymap():
    # Remapping a traffic key is checked like any other; a clash with a key of the same
    # screen (c is "correct") is refused, naming both.
    check_keymap({"traffic_label.multi": "3"}, CopalApp)
    with pytest.raises(SettingsError, match="traffic_label.multi and traffic_label.correct|"
                                            "traffic_label.correct and traffic_label.multi"):
        check_keymap({"traffic_label.multi": "c"}, CopalApp)


async def test_the_keys_screen_lists_the_queue_keys(db):
    app = app_for(db, campaign="audit")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        found = {(where, keys, ident) for where, keys, _d, ident in binding_rows(app.screen)}
    assert ("this queue", "2", "traffic_label.multi") in found
    assert ("this queue", "o", "traffic_label.policies") in found
    assert ("every queue", "f", "queue.flag") in found


async def test_adjudication_decides_with_the_same_keys_and_undoes(db):
    conn = connect(db)
    ids = [r["id"] for r in rows(db, "SELECT id FROM traffic_pairs ORDER BY id")]
    disputed, agreed = ids[0], ids[1]
    for who, category in (("ana", "single"), ("ben", "multi")):
        q = AnnotationQueue.of_campaign(conn, "audit", who)
        q.submit(disputed, TrafficLabel(category=category, erroneous=True, note=f"by {who}"))
        q.submit(agreed, TrafficLabel(category="none", erroneous=False))
    conn.conn.close()
    # `copal adjudicate --suite traffic`: the suite's descriptor names the screen it opens on.
    app = make_app(db, mode="adjudicate", suite="traffic", annotator="lead", settings=Settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TrafficAdjudicateScreen)
        assert screen.pid == disputed and "0/1 decided" in screen.status_text
        text = screen_text(app)
        assert "annotators differ on category" in text
        assert re.search(r"ana +single · erroneous", text)
        assert re.search(r"ben +multi · erroneous", text)
        await pilot.press("2", "v", "enter")
        await settle(pilot)
        assert screen.pid is None and "1/1 decided" in screen.status_text
        await pilot.press("u")
        await settle(pilot)
        assert screen.pid == disputed
        assert (screen.form.category, screen.form.erroneous) == ("multi", True)
        await pilot.press("1", "c", "enter")
        await settle(pilot)
    decisions = events(db, "lead", role="adjudicator")
    assert [(d["subject"], d["action"], d["category"], d["erroneous"]) for d in decisions] == [
        (disputed, "label", "multi", 1), (disputed, "undo", None, None),
        (disputed, "label", "single", 0)]


def test_adjudicate_refuses_a_suite_without_adjudication(db):
    from click.testing import CliRunner

    from copal_tui.cli import main

    result = CliRunner().invoke(main, ["--db", str(db), "adjudicate", "--suite", "compass"])
    assert result.exit_code == 2
    assert "suite compass has no adjudication (suites with one: copal, traffic)" in \
        result.output
