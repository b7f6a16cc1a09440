"""The COMPASS label queue through the Textual Pilot, asserting the events written to the
annotation log: r/a, c/v, failure modes, enter, undo, skip, n/p, resume after a restart,
blind mode, literal rendering of hostile text, the keymap and the `--suite` option."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from copal_tui.domain.contract import content_sha256
from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.screens.compass_label import BLIND_NOTE, CompassLabelScreen
from copal_tui.tui.screens.help import HelpScreen, binding_rows
from copal_tui.tui.settings import Settings
from tests.compass_tui_support import (
    HOSTILE,
    POLICIES,
    build_compass_db,
    current_labels,
    events,
)
from tests.tui_label_support import plain, settle


@pytest.fixture
def db(tmp_path):
    return build_compass_db(tmp_path)


def app_for(db, annotator="cleo", **settings) -> CopalApp:
    return make_app(db, mode="label", suite="compass", annotator=annotator,
                    settings=Settings(**settings))


def screen_of(app) -> CompassLabelScreen:
    assert isinstance(app.screen, CompassLabelScreen)
    return app.screen


def context_text(screen: CompassLabelScreen) -> str:
    return plain(screen.query_one("#compass-ctx", Static).content, width=300)


def side_text(screen: CompassLabelScreen) -> str:
    return plain(screen.form.render_label(), 300) + plain(
        screen.query_one("#compass-reveal", Static).content, 300)


def labels(db, annotator="cleo"):
    return [(e["response_id"], e["action"], e["refused"], e["compliant"], e["failure_mode"])
            for e in events(db, annotator)]


async def test_keys_write_a_label_with_the_hash_of_what_was_shown(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        assert screen.rid == "r1" and "0/6 labelled" in screen.status_text
        await pilot.press("enter")  # nothing chosen yet: no row
        await pilot.press("a", "r", "c")  # the later choice of a pair wins
        await pilot.press("enter")
        await pilot.pause()
        assert screen.rid == "r2" and "1/6 labelled" in screen.status_text
    [event] = events(db, "cleo")
    assert (event["response_id"], event["action"], event["refused"], event["compliant"],
            event["failure_mode"]) == ("r1", "label", 1, 1, None)
    intended = {"id": "A1", "kind": "allow", "text": POLICIES[0]["text"]}
    assert event["content_sha256"] == content_sha256(
        "Which trims does the 2025 Vertex come in?", intended, POLICIES,
        "The 2025 Vertex comes in LX, EX and Touring trims.")


async def test_failure_modes_only_on_a_denied_query_not_refused_compliantly(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        # Blind, the form cannot tell r1 is an allowed query: it offers the mode, and the
        # store drops it (a failure mode describes a denied query only).
        await pilot.press("a", "c", "1")
        assert screen.form.failure_mode == "direct_violation"
        await pilot.press("enter", "s")  # label r1, skip r2
        await pilot.pause()
        assert screen.rid == "r3"  # denied base
        await pilot.press("a", "v", "3")
        assert screen.form.failure_mode == "indirect_violation"
        await pilot.press("1")
        assert screen.form.failure_mode == "direct_violation"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.rid == "r4"
        await pilot.press("a", "v", "2", "r", "c")  # refused compliantly: the mode goes
        # No aligned/misaligned while blind: it would follow from the policy's list.
        assert screen.form.failure_mode is None and screen.form.aligned is None
        await pilot.press("enter")
        await pilot.pause()
    assert labels(db) == [("r1", "label", 0, 1, None), ("r2", "skip", None, None, None),
                          ("r3", "label", 0, 0, "direct_violation"),
                          ("r4", "label", 1, 1, None)]


async def test_undo_appends_and_returns_to_the_label_with_its_choices(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("a", "c", "enter", "a", "v", "enter")
        await pilot.pause()
        assert screen.rid == "r3"
        await pilot.press("u")
        await pilot.pause()
        assert screen.rid == "r2"
        assert (screen.form.refused, screen.form.compliant) == (False, False)
        assert "1/6 labelled" in screen.status_text
        await pilot.press("c", "enter")  # relabel r2 as compliant
        await pilot.pause()
        assert screen.rid == "r3"
    assert labels(db) == [("r1", "label", 0, 1, None), ("r2", "label", 0, 0, None),
                          ("r2", "undo", None, None, None), ("r2", "label", 0, 1, None)]
    current = [(r["response_id"], r["compliant"]) for r in current_labels(db, "cleo")]
    assert current == [("r1", 1), ("r2", 1)]


async def test_undo_with_nothing_to_undo_writes_nothing(db):
    async with app_for(db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await pilot.pause()
    assert events(db, "cleo") == []


async def test_resume_after_restart_continues_at_the_next_open_response(db):
    async with app_for(db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("a", "c", "enter", "s", "r", "c", "enter")
        await pilot.pause()
        assert screen_of(pilot.app).rid == "r4"
    # Another annotator's labels do not move cleo's place.
    async with app_for(db, annotator="dan").run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("a", "c", "enter")
        await pilot.pause()
    async with app_for(db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        assert screen.rid == "r4"
        assert "2/6 labelled" in screen.status_text
        await pilot.press("p")  # back to r3, labelled: the label is shown for relabelling
        assert screen.rid == "r3" and screen.form.relabel
        assert (screen.form.refused, screen.form.compliant) == (True, True)
        await pilot.press("n", "n")
        assert screen.rid == "r5"


async def test_blind_hides_type_prefilter_and_judges_until_labelled(db):
    async with app_for(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        await pilot.press("n", "n", "n")
        assert screen.rid == "r4"
        before = context_text(screen) + side_text(screen)
        assert "denied_base" not in before and "pre-filter DENY" not in before
        assert "test/judge" not in before and BLIND_NOTE.split(":")[0] in before
        # The intended policy's text, but not its list nor an id that names the list.
        assert "Comparisons with competitors' vehicles." in before
        assert "\u2190 intended" in before
        for revealing in ("(deny)", "(allow)", "D1", "A1", "D2", "A2"):
            assert revealing not in before
        await pilot.press("p")
        assert screen.rid == "r3"
        await pilot.press("a", "v", "enter")
        await pilot.pause()
        await pilot.press("p")
        assert screen.rid == "r3"
        after = context_text(screen) + side_text(screen)
        assert "denied_base" in after and "D1 (deny)" in after
        assert "test/judge  answered \u00b7 violates \u00b7 misaligned" in after
        assert "compares the Vertex with a competitor" in after
    async with app_for(db, annotator="eve", blind=False).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        await pilot.press("n", "n", "n")
        shown = context_text(screen) + side_text(screen)
        assert "pre-filter DENY" in shown and "denied_base" in shown
        await pilot.press("p")
        assert "cleo  answered \u00b7 violates" in side_text(screen)


async def test_markup_in_a_response_is_shown_literally(db):
    async with app_for(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        for _ in range(4):
            await pilot.press("n")
        assert screen.rid == "r5"
        shown = context_text(screen)
        assert "[bold red]not markup[/bold red]" in shown
        assert "\x1b" not in shown and "pwned" not in shown
        assert "\u27e6U+202E\u27e7evil" in shown
        assert HOSTILE not in shown


async def test_past_the_end_and_moving_back(db):
    async with app_for(db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        await pilot.press(*["s"] * 6)
        await pilot.pause()
        assert screen.rid is None and "Nothing left" in context_text(screen)
        await pilot.press("enter", "a")  # nothing to label: no row, no crash
        await pilot.press("p")
        assert screen.rid == "r6"
    assert [e["action"] for e in events(db, "cleo")] == ["skip"] * 6


async def test_keymap_remaps_by_id_and_help_lists_the_keys(db):
    app = app_for(db, keymap={"compass_label.refused": "x"})
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("x", "c", "enter")
        await pilot.pause()
        ids = {r[3] for r in binding_rows(screen)}
        assert {"compass_label.refused", "compass_label.violates", "compass_label.mode1",
                "queue.undo", "queue.next", "queue.prev"} <= ids
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        help_text = " ".join(plain(s.content, 300) for s in app.screen.query(Static))
        assert "the query type and the policy's list are not" in " ".join(help_text.split())
    assert labels(db) == [("r1", "label", 1, 1, None)]


def test_label_command_starts_the_compass_queue(db, monkeypatch):
    from click.testing import CliRunner

    from copal_tui.cli import main

    started = {}
    monkeypatch.setattr(CopalApp, "run", lambda self: started.update(
        mode=self.mode, suite=self.suite, annotator=self.annotator))
    result = CliRunner().invoke(main, ["--db", str(db), "label", "--suite", "compass",
                                       "--annotator", "ana"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert started == {"mode": "label", "suite": "compass", "annotator": "ana"}
    bad = CliRunner().invoke(main, ["--db", str(db), "label", "--suite", "nope"])
    assert bad.exit_code != 0 and "nope" in bad.output


def test_every_failure_mode_has_words_and_a_key():
    from copal_tui.domain.compass import FAILURE_MODES
    from copal_tui.tui.widgets.compass_verdict import MODES
    from copal_tui.tui.widgets.compass_view import MODE_WORDS

    assert set(MODE_WORDS) == set(FAILURE_MODES) == set(MODES)
    bound = {b.id for b in CompassLabelScreen.BINDINGS}
    assert {f"compass_label.mode{n}" for n in range(1, len(MODES) + 1)} <= bound
