"""Pilot tests of the item screen: query, clauses and contract; every response with the judge's
marks beside the annotators' and the adjudicator's; evidence highlighted; disagreements flagged;
judges switched; projections compared; new labels shown on return. Asserted against the rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.widgets import DataTable

from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import copal_label
from copal_tui.tui.app import make_app
from copal_tui.tui.screens.item import ItemScreen
from copal_tui.tui.widgets.item_overview import ItemOverview
from copal_tui.tui.widgets.response_view import FORBIDDEN_STYLE, REQUIRED_STYLE, ResponseView
from store.db import connect
from tests import test_tui_browse_data as data
from tests.test_tui_browse import column, text_of
from tests.test_tui_browse_data import I01, W

# Shared fixtures (aliases keep them out of the import list, where they would shadow).
browse_db = data.browse_db
browse_template = data.browse_template


async def open_item(pilot: Any, item_id: str = I01, tab: str = "overview") -> ItemScreen:
    await pilot.pause()
    pilot.app.action_open("item", item_id=item_id, tab=tab)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ItemScreen)
    return screen


def response_text(screen: ItemScreen) -> str:
    return text_of(screen.query_one(ResponseView).content)


def shown_id(screen: ItemScreen) -> str | None:
    resp = screen.current_response()
    return None if resp is None else resp.id


def response_rows(screen: ItemScreen) -> list[list[str]]:
    table: DataTable[Any] = screen.query_one("#responses-table", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_overview_shows_query_clauses_and_contract_from_the_db(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        screen = await open_item(pilot)
        shown = " ".join(text_of(screen.query_one(ItemOverview).content).split())
        db = connect(browse_db)
        item = dict(db.execute("SELECT * FROM items WHERE id = ?", (I01,)).fetchone())
        assert " ".join(item["query"].split()) in shown
        for cid in ("C09", "C10"):
            trigger = db.execute("SELECT trigger FROM clauses WHERE id = ?",
                                 (f"{W}:{cid}",)).fetchone()[0]
            assert cid in shown and " ".join(trigger.split()) in shown
        import json

        for c in json.loads(item["required"]) + json.loads(item["forbidden"]):
            assert f"{c['id']} [{c['kind']}] {' '.join(c['text'].split())}" in shown
        db.conn.close()


async def test_responses_table_puts_judge_humans_and_adjudication_side_by_side(
        browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        screen = await open_item(pilot, tab="responses")
        assert [r.id for r in screen.responses] == column(
            browse_db, "SELECT id FROM responses WHERE item_id = ? ORDER BY model, variant",
            (I01,))
        assert screen.judge == ("test/judge-a", "contract")
        assert screen.judges == [("test/judge-a", "contract"), ("test/judge-b", "contract"),
                                 ("test/judge-a", "full_policy")]
        rows = response_rows(screen)
        # assistant-a: judge-a marks F1 (error 1, under), ana 0, ben 1, adjudicated 0.
        assert rows[0][1:] == ["sample/assistant-a", "1 under", "ana:0 ben:1", "0 ok",
                               "\u2691 H\u2260H J\u2260ref"]
        # assistant-b: everybody says error 1: nothing to flag.
        assert rows[1][2:] == ["1 under", "ana:1 ben:1", "\u2014", ""]
        text = response_text(screen)
        assert "annotators disagree: ana 0, ben 1" in text
        assert "judge says error 1, adjudication says 0" in text
        assert "marks differ on F1" in text
        assert "No diagnosis: the line about white spots" in " ".join(text.split())


async def test_evidence_is_highlighted_in_the_response_text(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        screen = await open_item(pilot, tab="responses")
        group = screen.query_one(ResponseView).content
        assert isinstance(group, Group)
        body = next(r for r in group.renderables
                    if isinstance(r, Text) and r.plain.startswith("I'm sorry you're feeling"))
        styled = {body.plain[s.start:s.end]: str(s.style) for s in body.spans}
        assert styled["So an in-person office visit is the better fit here."] == REQUIRED_STYLE
        assert styled["White spots with a fever are often seen with strep"] == FORBIDDEN_STYLE
        assert "F1 (forbidden) \u201cWhite spots with a fever" in response_text(screen)


async def test_j_switches_judges_and_recomputes_the_verdicts(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        screen = await open_item(pilot, tab="responses")
        await pilot.press("j")
        await pilot.pause()
        assert screen.judge == ("test/judge-b", "contract")
        rows = response_rows(screen)
        assert rows[0][2] == "0 ok" and rows[0][5] == "\u2691 H\u2260H"
        assert rows[1][2] == "\u2014"  # judge-b did not judge assistant-b
        assert "judge says" not in response_text(screen)
        await pilot.press("j")
        await pilot.pause()
        assert screen.judge == ("test/judge-a", "full_policy")
        assert response_rows(screen)[0][2].startswith("1")  # no item marks: the stored error
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert "has not judged this response" in response_text(screen)
        await pilot.press("j")
        await pilot.pause()
        assert screen.judge == ("test/judge-a", "contract")


async def test_projections_tab_marks_a_composition_induced_failure(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        screen = await open_item(pilot)
        await pilot.press("3")
        await pilot.pause()
        matrix = text_of(screen.query_one("#projection-matrix").content)
        line = next(ln for ln in matrix.splitlines() if "sample/assistant-a" in ln)
        assert line.split() == ["sample/assistant-a", "\u2717", "1", "\u2713", "0", "\u2713",
                                "0", "\u2691", "yes"]
        await pilot.press("enter")
        await pilot.pause()
        proj = pilot.app.screen
        assert isinstance(proj, ItemScreen) and proj.item_id == f"{I01}:p1"
        shown = text_of(proj.query_one(ItemOverview).content)
        assert "single-policy projection of I01" in shown
        assert proj.item is not None
        assert [c.id for c in proj.item.clauses] == [f"{W}:C09"]
        await pilot.press("p")
        await pilot.pause()
        assert pilot.app.screen.item_id == I01


async def test_a_label_written_meanwhile_shows_on_return(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        screen = await open_item(pilot, tab="responses")
        pilot.app.action_open("help")
        await pilot.pause()
        db = connect(browse_db)
        # Written as the label screen writes it, by another connection.
        AnnotationQueue(db, "copal", "cara").submit(f"{I01}:c",
                                                    copal_label(db, f"{I01}:c", ["R1"]))
        db.conn.close()
        await pilot.press("q")
        await pilot.pause()
        assert pilot.app.screen is screen
        row = next(r for r in response_rows(screen) if r[1] == "sample/assistant-c")
        assert "cara:0" in row[3]


async def test_unknown_item_says_so_and_b_goes_back(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pilot.app.action_open("item", item_id="nope")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ItemScreen) and pilot.app.screen.item is None
        await pilot.press("b")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ItemScreen)


async def test_palette_lists_one_command_per_judge(browse_db: Path) -> None:
    from copal_tui.tui.widgets.screen_commands import ScreenCommands

    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        screen = await open_item(pilot, tab="responses")
        commands = {name: run for name, _, run in ScreenCommands(screen)._commands()}
        assert {"Judge: test/judge-b (contract)", "Next judge", "Back"} <= set(commands)
        commands["Judge: test/judge-b (contract)"]()
        await pilot.pause()
        assert screen.judge == ("test/judge-b", "contract")


async def test_an_annotator_reaching_an_item_sees_no_verdicts_before_labelling(
        browse_db: Path) -> None:
    # `copal label` reaches no browse screen at all; where a named person can browse items
    # (adjudication), a response they have not labelled keeps its verdicts hidden.
    app = make_app(browse_db, mode="adjudicate", annotator="cara")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        db = connect(browse_db)
        AnnotationQueue(db, "copal", "cara").submit(f"{I01}:c", copal_label(db, f"{I01}:c", []))
        db.conn.close()
        screen = await open_item(pilot, tab="responses")
        rows = {r[1]: r for r in response_rows(screen)}
        assert rows["sample/assistant-a"][2:5] == ["hidden", "hidden", "hidden"]
        shown = response_text(screen)
        assert "ana" not in shown and "judge says" not in shown and "stay hidden" in shown
        # Labelled by cara: everything shows for that response.
        assert rows["sample/assistant-c"][2] == "1 over"
        assert "ana:1" in rows["sample/assistant-c"][3]


async def test_page_keys_scroll_the_response_being_read_at_80x24(browse_db: Path) -> None:
    # A response longer than the pane: PgDn pages through it, the selected response stays.
    db = connect(browse_db)
    first = db.execute("SELECT id FROM responses WHERE item_id = ? ORDER BY model, variant",
                       (I01,)).fetchone()[0]
    second = db.execute("SELECT id FROM responses WHERE item_id = ? ORDER BY model, variant "
                        "LIMIT 1 OFFSET 1", (I01,)).fetchone()[0]
    db.execute("UPDATE responses SET text = ? WHERE id = ?",
               ("\n\n".join(f"Paragraph {n} of a long answer." for n in range(60)), first))
    db.conn.close()
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        screen = await open_item(pilot, tab="responses")
        table: DataTable[Any] = screen.query_one("#responses-table", DataTable)
        scroll = screen.query_one("#response-scroll")
        await pilot.pause()
        assert screen.focused is table and scroll.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert scroll.scroll_y > 0
        assert table.cursor_row == 0 and shown_id(screen) == first
        assert "Paragraph 0 of" in response_text(screen)
        down = scroll.scroll_y
        await pilot.press("pagedown")
        await pilot.pause()
        assert scroll.scroll_y > down and shown_id(screen) == first
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        assert scroll.scroll_y == 0
        # The footer's `]` is what moves to the next response.
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert shown_id(screen) == second
