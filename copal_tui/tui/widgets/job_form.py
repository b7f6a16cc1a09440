"""The form that sets up a job: stages, worlds, target models, judges, judge modes, generator,
budget, variants and concurrency. `request()` turns it into (stages, Options) or raises a
`FieldError` naming the first field, in the order they are shown, that is wrong.

A form people can trust: labels are bold words on the left; hints are worded and styled as hints
(`e.g. offline/judge`, italic and dim inside an empty field), never as values; a tick shows as
`[x]` or `[ ]`, not by colour alone; Tab into a field puts the cursor after its text and selects
nothing (see `copal_tui.tui.widgets.form_controls`). An error names its field, is shown under
that field and at the Start button, and stays until that field is fixed (every change re-checks
the form) or a job starts. Enter in a field asks to start (`JobForm.Submitted`): the screen starts
the job only when the form is valid, else shows the error and focuses its field.

Model and judge fields are comma-separated and complete the last name from the models and judges
already in the store plus the offline engine's (right accepts). World names are untrusted text,
so they reach the list as `safe` Text, never as markup. The generator field is empty unless
COPAL_GENERATOR names one: copal never picks a generator.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

from copal_tui.pipeline import COPAL_STAGES, GENERATOR_ENV, missing_model
from copal_tui.pipeline.base import CopalOptions, Options
from copal_tui.tui.job_manager import JobError
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.form_controls import FormInput, ListSuggester, TickBox, TickList

OFFLINE_BOTS = ["offline/refuse-all", "offline/comply-all", "offline/keyword-guard"]
OFFLINE_JUDGES = ["offline/judge"]
# The COPAL stages. COMPASS stages run with `copal run compass`: their options (variants,
# pre-filter, queries per policy) are not on this form.
STAGE_HELP = {
    "ground": "policies > clauses", "compose": "clauses > compositions",
    "generate": "compositions > items", "select": "screen, select items",
    "project": "1-policy projections", "ablate": "construction ablations",
    "respond": "targets answer", "judge": "judges mark responses",
}
LIMITS = {"budget": (1, 10_000), "variants": (1, 20), "concurrency": (1, 256)}
# Field -> (label, the widget that takes focus, the note line under it), in form order.
FIELDS = {
    "stages": ("Stages", "job-stages", "job-pickers-note"),
    "models": ("Models", "job-models", "job-models-note"),
    "judges": ("Judges", "job-judges", "job-judges-note"),
    "modes": ("Judge modes", "job-mode-contract", "job-modes-note"),
    "generator": ("Generator", "job-generator", "job-generator-note"),
    "budget": ("Budget", "job-budget", "job-numbers-note"),
    "variants": ("Variants", "job-variants", "job-numbers-note"),
    "concurrency": ("Concurrency", "job-concurrency", "job-concurrency-note"),
}
ERROR_MARK = "\u2717"  # ✗: an error reads as one without colour


class FieldError(JobError):
    """What is wrong with the form, and the field to fix (a key of FIELDS)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{FIELDS[field][0]}: {message}")
        self.field = field


def split_names(text: str) -> list[str]:
    return list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))


class JobForm(VerticalScroll):
    DEFAULT_CSS = """
    JobForm {
        height: 1fr;
        padding: 0 1;
    }
    JobForm .field-label {
        width: 13;
        padding: 0 1 0 0;
        text-style: bold;
    }
    JobForm .section {
        text-style: bold;
    }
    JobForm #job-pickers {
        height: auto;
    }
    JobForm #job-stages-box {
        width: 38;
        height: auto;
    }
    JobForm #job-worlds-box {
        width: 1fr;
        height: auto;
    }
    JobForm .row {
        height: auto;
    }
    JobForm SelectionList {
        height: auto;
        max-height: 8;
    }
    JobForm .row Input {
        width: 1fr;
        background: $boost;
    }
    JobForm .row Input > .input--placeholder {
        text-style: italic;
        color: $text-muted;
    }
    JobForm .row .number {
        width: 8;
    }
    JobForm .field-note {
        display: none;
        height: auto;
        padding: 0 0 0 13;
        color: $text-error;
        text-style: bold;
    }
    JobForm .field-note.-shown {
        display: block;
    }
    JobForm #job-pickers-note {
        padding: 0;
    }
    JobForm #job-pickers-gap {
        height: 1;
    }
    JobForm #job-form-error {
        color: $text-error;
        text-style: bold;
        height: auto;
    }
    JobForm Button {
        margin: 1 0 0 0;
    }
    """

    class Submitted(Message):
        """Enter in one of the form's fields: the screen starts the job if the form is valid."""

    def __init__(self, *, worlds: list[tuple[str, str]], models: list[str], judges: list[str],
                 preset_stages: list[str] | None = None, preset_worlds: list[str] | None = None,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.world_choices = worlds
        self.model_names = list(dict.fromkeys(OFFLINE_BOTS + models))
        self.judge_names = list(dict.fromkeys(OFFLINE_JUDGES + judges))
        self.preset_stages = set(preset_stages or [])
        self.preset_worlds = set(preset_worlds or [])
        self.error_field: str | None = None  # the field the shown error names, if any
        self.error_text = ""

    def compose(self) -> ComposeResult:
        with Horizontal(id="job-pickers"):
            with Vertical(id="job-stages-box"):
                yield Label("Stages (space ticks)", classes="section")
                yield TickList(
                    *(Selection(f"{s:<9} {STAGE_HELP[s]}", s, s in self.preset_stages)
                      for s in COPAL_STAGES),
                    id="job-stages", compact=True)
            with Vertical(id="job-worlds-box"):
                yield Label("Worlds (none ticked = all)", classes="section")
                yield TickList(
                    *(Selection(safe(one_line(f"{wid} \u00b7 {name}", 60)), wid,
                                wid in self.preset_worlds)
                      for wid, name in self.world_choices),
                    id="job-worlds", compact=True)
        yield Static(id="job-pickers-note", classes="field-note")
        yield Static(id="job-pickers-gap")
        with Horizontal(classes="row"):
            yield Label("Models", classes="field-label")
            yield FormInput(placeholder="e.g. offline/keyword-guard, openai/gpt-4o-mini "
                                        "(for respond)",
                            suggester=ListSuggester(self.model_names), id="job-models",
                            compact=True)
        yield Static(id="job-models-note", classes="field-note")
        with Horizontal(classes="row"):
            yield Label("Judges", classes="field-label")
            yield FormInput(placeholder="e.g. offline/judge (for judge)", id="job-judges",
                            compact=True, suggester=ListSuggester(self.judge_names))
        yield Static(id="job-judges-note", classes="field-note")
        with Horizontal(classes="row"):
            yield Label("Judge modes", classes="field-label")
            yield TickBox("contract", True, id="job-mode-contract", compact=True)
            yield TickBox("full-policy", False, id="job-mode-full", compact=True)
        yield Static(id="job-modes-note", classes="field-note")
        with Horizontal(classes="row"):
            yield Label("Generator", classes="field-label")
            # Empty unless the environment names one: copal never picks a generator (typing
            # offline/heuristic asks for the offline engine's heuristics).
            yield FormInput(os.environ.get(GENERATOR_ENV, ""),
                            placeholder="e.g. offline/heuristic (needed to build a suite)",
                            id="job-generator", compact=True,
                            suggester=ListSuggester(["offline/heuristic", *self.model_names]))
        yield Static(id="job-generator-note", classes="field-note")
        with Horizontal(classes="row"):
            yield Label("Budget", classes="field-label")
            yield FormInput("30", type="integer", id="job-budget", classes="number",
                            compact=True)
            yield Label(" Variants ", classes="field-label")
            yield FormInput("2", type="integer", id="job-variants", classes="number",
                            compact=True)
        yield Static(id="job-numbers-note", classes="field-note")
        with Horizontal(classes="row"):
            yield Label("Concurrency", classes="field-label")
            yield FormInput("8", type="integer", id="job-concurrency", classes="number",
                            compact=True)
        yield Static(id="job-concurrency-note", classes="field-note")
        yield Button("Start job", id="job-start", variant="primary", compact=True)
        yield Static("", id="job-form-error")

    # ---------------------------------------------------------------- reading the form

    def _number(self, name: str) -> int:
        raw = self.query_one(f"#job-{name}", Input).value.strip()
        low, high = LIMITS[name]
        try:
            value = int(raw)
        except ValueError:
            raise FieldError(name, f"must be a whole number from {low} to {high}") from None
        if not low <= value <= high:
            raise FieldError(name, f"must be between {low} and {high}")
        return value

    def request(self) -> tuple[list[str], Options]:
        """The job the form describes; FieldError for the first wrong field in form order."""
        stages = list(self.query_one("#job-stages", SelectionList).selected)
        worlds = list(self.query_one("#job-worlds", SelectionList).selected)
        models = split_names(self.query_one("#job-models", Input).value)
        judges = split_names(self.query_one("#job-judges", Input).value)
        modes = [m for m, wid in (("contract", "#job-mode-contract"),
                                  ("full_policy", "#job-mode-full"))
                 if self.query_one(wid, Checkbox).value]
        generator = self.query_one("#job-generator", Input).value.strip() or None
        if not stages:
            raise FieldError("stages", "tick at least one stage (space ticks)")
        if "respond" in stages and not models:
            raise FieldError("models", "respond needs at least one model")
        if "judge" in stages and not judges:
            raise FieldError("judges", "judge needs at least one judge")
        if "judge" in stages and not modes:
            raise FieldError("modes", "judge needs at least one mode ticked")
        for stage in stages:
            why = missing_model(stage, generator=generator, prefilter=None)
            if why:
                raise FieldError("generator", why.replace("--generator MODEL", "a generator"))
        budget, variants, concurrency = (self._number(n) for n in LIMITS)
        return stages, Options(
            worlds=worlds or None, models=models, judges=judges, generator=generator,
            copal=CopalOptions(modes=modes, budget=budget, variants=variants),
            concurrency=concurrency,
            # The same variable `copal run --models-file` reads: named models work here too.
            models_file=Path(os.environ["COPAL_MODELS_FILE"])
            if os.environ.get("COPAL_MODELS_FILE") else None,
        )

    def problem(self) -> FieldError | None:
        try:
            self.request()
        except FieldError as exc:
            return exc
        return None

    # ---------------------------------------------------------------- showing errors

    def show_error(self, error: JobError | str, *, focus: bool = True) -> None:
        """Show `error` at the Start button and, for a FieldError, under its field, which
        takes the focus (unless `focus` is False). Empty: clear every error."""
        message = str(error)
        field = error.field if isinstance(error, FieldError) else None
        self.error_field, self.error_text = field, message
        for note in self.query(".field-note").results(Static):
            note.update("")
            note.remove_class("-shown")
        summary = self.query_one("#job-form-error", Static)
        shown = Text(f"{ERROR_MARK} ").append_text(safe(message)) if message else Text()
        summary.update(shown)
        if not message:
            return
        if field is None:
            summary.scroll_visible()
            return
        note = self.query_one(f"#{FIELDS[field][2]}", Static)
        note.update(shown)
        note.add_class("-shown")
        if focus:
            # Now and after the next refresh: a tab switch just before moves the focus.
            target = self.query_one(f"#{FIELDS[field][1]}")
            target.focus()
            self.call_after_refresh(target.focus)
        self.call_after_refresh(note.scroll_visible)

    def _recheck(self) -> None:
        """After any change: an error whose field is now right goes; one still wrong stays
        (re-worded if it changed, the focus left where the person is typing)."""
        if self.error_field is None:
            return
        now = self.problem()
        if now is None or now.field != self.error_field:
            self.show_error("")
        elif str(now) != self.error_text:
            self.show_error(now, focus=False)

    @on(Input.Changed)
    @on(SelectionList.SelectedChanged)
    @on(Checkbox.Changed)
    def _changed(self) -> None:
        self._recheck()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted())
