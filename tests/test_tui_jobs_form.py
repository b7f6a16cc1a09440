"""The jobs form as a person meets it, through the Pilot at 80x24: hints that read as hints, not
values; ticks shown as [x] / [ ] (not by colour alone); Tab into a field keeps its text and puts
the cursor at the end; an error names its field, takes the focus there and stays until that field
is fixed; Enter in a field starts the job only when the form is valid; every footer key shows.

The app starts on the jobs screen (START patched); a started job is awaited with a bounded
polling loop, never a fixed sleep.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Checkbox, Input, SelectionList, Static

from copal_tui.pipeline import GENERATOR_ENV
from copal_tui.tui import app as app_module
from copal_tui.tui.app import make_app
from copal_tui.tui.job_manager import JobManager
from copal_tui.tui.widgets.form_controls import FormInput
from tests.db_support import query_rows
from tests.test_tui_footer_80 import assert_footer_whole, screen_lines
from tests.test_tui_jobs import type_text, wait_until

SIZE = (80, 24)


@pytest.fixture
def world_db(cli, initialised, samples) -> Path:
    result = cli("import", str(samples / "harbor_clinics.yaml"),
                 str(samples / "harbor_clinics.jsonl"))
    assert result.exit_code == 0, result.output
    return initialised


@pytest.fixture(autouse=True)
def start_on_jobs(monkeypatch):
    monkeypatch.setitem(app_module.START, "browse", "jobs")


def field(app: Any, name: str) -> Any:
    return app.screen.query_one(f"#job-{name}")


def error_text(app: Any) -> str:
    return str(app.screen.query_one("#job-form-error", Static).render())


def note(app: Any, name: str) -> Static:
    return app.screen.query_one(f"#job-{name}-note", Static)  # type: ignore[no-any-return]


async def test_hints_read_as_hints_and_the_generator_stays_empty(world_db, monkeypatch):
    monkeypatch.delenv(GENERATOR_ENV, raising=False)
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for name in ("models", "judges", "generator"):
            box = field(app, name)
            # Empty, with a hint worded as one and drawn apart from a value (italic).
            assert box.value == "" and box.placeholder.startswith("e.g. ")
            assert box.get_component_rich_style("input--placeholder").italic
        assert field(app, "budget").value == "30"
    monkeypatch.setenv(GENERATOR_ENV, "offline/heuristic")
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert field(app, "generator").value == "offline/heuristic"


async def test_ticks_show_without_colour(world_db):
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        contract, full = field(app, "mode-contract"), field(app, "mode-full")
        assert str(contract.render()).startswith("[x] contract")
        assert str(full.render()).startswith("[ ] full-policy")
        full.focus()
        await pilot.press("space")
        assert full.value and str(full.render()).startswith("[x] full-policy")
        stages = field(app, "stages")
        assert stages.render_line(0).text.startswith("[ ] ground")
        stages.focus()
        await pilot.press("home", "space")
        await pilot.pause()
        assert stages.selected == ["ground"]
        assert stages.render_line(0).text.startswith("[x] ground")
        assert stages.render_line(1).text.startswith("[ ] compose")


async def test_tab_into_a_field_keeps_its_text(world_db):
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        budget = field(app, "budget")
        for _ in range(12):  # Tab through the form until the budget field has the focus
            if app.focused is budget:
                break
            await pilot.press("tab")
        assert app.focused is budget and isinstance(budget, FormInput)
        assert budget.selection.is_empty and budget.cursor_position == len("30")
        await pilot.press("5")
        assert budget.value == "305"
        # Back into a field whose cursor was moved: the cursor goes to the end again.
        models = field(app, "models")
        models.value = "offline/judge"
        models.focus()
        await pilot.press("home", "shift+tab", "tab")
        assert app.focused is models and models.cursor_position == len(models.value)
        assert models.selection.is_empty


async def test_an_error_names_its_field_and_stays_until_fixed(world_db):
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field(app, "stages").select("respond")
        await pilot.press("ctrl+g")
        await pilot.pause()
        models = field(app, "models")
        message = "Models: respond needs at least one model"
        assert message in error_text(app) and app.focused is models
        assert message in str(note(app, "models").render())
        assert note(app, "models").has_class("-shown") and note(app, "models").display
        # Other fields change, the app redraws: the error stays where it is, untouched.
        field(app, "judges").value = "offline/judge"
        field(app, "mode-full").toggle()
        field(app, "budget").value = "12"
        for _ in range(3):
            await pilot.pause()
        assert message in error_text(app) and note(app, "models").display
        # Fixing the named field clears it, at the Start button and under the field.
        await type_text(pilot, "offline/refuse-all")
        await pilot.pause()
        assert error_text(app) == "" and not note(app, "models").display
        assert JobManager.of(app).latest() is None  # fixing is not starting


async def test_a_field_error_moves_the_focus_in_form_order(world_db):
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field(app, "stages").select("judge")
        field(app, "judges").value = "offline/judge"
        field(app, "mode-contract").value = False
        field(app, "concurrency").value = "0"
        await pilot.press("ctrl+g")
        await pilot.pause()
        # Two fields are wrong: the first one shown is named and focused.
        assert "Judge modes: judge needs at least one mode ticked" in error_text(app)
        assert app.focused is field(app, "mode-contract")
        await pilot.press("space")  # tick contract: that error is fixed, the next not shown
        await pilot.pause()
        assert error_text(app) == ""
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert "Concurrency: must be between 1 and 256" in error_text(app)
        assert app.focused is field(app, "concurrency")
    assert query_rows(world_db, "SELECT COUNT(*) FROM runs")[0][0] == 0


async def test_enter_starts_only_a_valid_form(world_db):
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        manager = JobManager.of(app)
        models = field(app, "models")
        models.focus()
        await type_text(pilot, "offline/refuse-all")
        await pilot.press("enter")  # no stage ticked: nothing starts, the stages are named
        await pilot.pause()
        assert manager.latest() is None
        assert "Stages: tick at least one stage" in error_text(app)
        assert app.focused is field(app, "stages")
        await pilot.press("end", "up", "space")  # respond
        models.focus()
        await pilot.press("enter")
        await pilot.pause()
        job = manager.latest()
        assert job is not None and job.stages == ["respond"]
        assert job.opts.models == ["offline/refuse-all"] and error_text(app) == ""
        await wait_until(pilot, lambda: (manager.latest() or job).final, "the job to end")
        assert manager.latest().status == "done"  # type: ignore[union-attr]
    assert [r["stage"] for r in query_rows(world_db, "SELECT stage FROM runs")] == ["respond"]


async def test_jobs_footer_shows_every_key_at_80_columns(world_db):
    app = make_app(world_db)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "^p palette" in screen_lines(app)[-1], "the footer")
        assert isinstance(app.focused, SelectionList)
        footer = assert_footer_whole(app)
        assert "^g Start" in footer and "b Back" in footer and "q Quit" in footer
        field(app, "models").focus()  # in a field b types a letter: the footer says esc
        await wait_until(pilot, lambda: "esc Back" in screen_lines(app)[-1], "the footer")
        assert_footer_whole(app)
        assert isinstance(field(app, "mode-contract"), Checkbox)
        assert isinstance(field(app, "models"), Input)
