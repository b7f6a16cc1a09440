"""The form that sets up a job: stages, worlds, target models, judges, judge modes, generator,
budget, variants and concurrency. `request()` turns it into (stages, Options) or raises JobError.

Model and judge fields are comma-separated and complete the last name from the models and judges
already in the store plus the offline engine's (tab or right accepts). World names are untrusted
text, so they reach the list as `safe` Text, never as markup.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.suggester import Suggester
from textual.widgets import Button, Checkbox, Input, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

from copal_tui.pipeline import COPAL_STAGES, GENERATOR_ENV, missing_model
from copal_tui.pipeline.base import CopalOptions, Options
from copal_tui.tui.job_manager import JobError
from copal_tui.tui.safe import one_line, safe

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


class ListSuggester(Suggester):
    """Completes the last comma-separated name from a list."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.names = names

    async def get_suggestion(self, value: str) -> str | None:
        head, sep, last = value.rpartition(",")
        stem = last.lstrip()
        if not stem:
            return None
        for name in self.names:
            if name.startswith(stem) and name != stem:
                return f"{head}{sep}{last[: len(last) - len(stem)]}{name}"
        return None


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
        margin: 0 0 1 0;
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
    }
    JobForm .row .number {
        width: 8;
    }
    JobForm #job-form-error {
        color: $error;
        text-style: bold;
        height: auto;
    }
    JobForm Button {
        margin: 1 0 0 0;
    }
    """

    def __init__(self, *, worlds: list[tuple[str, str]], models: list[str], judges: list[str],
                 preset_stages: list[str] | None = None, preset_worlds: list[str] | None = None,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.world_choices = worlds
        self.model_names = list(dict.fromkeys(OFFLINE_BOTS + models))
        self.judge_names = list(dict.fromkeys(OFFLINE_JUDGES + judges))
        self.preset_stages = set(preset_stages or [])
        self.preset_worlds = set(preset_worlds or [])

    def compose(self) -> ComposeResult:
        with Horizontal(id="job-pickers"):
            with Vertical(id="job-stages-box"):
                yield Label("Stages (space ticks)", classes="section")
                yield SelectionList[str](
                    *(Selection(f"{s:<9} {STAGE_HELP[s]}", s, s in self.preset_stages)
                      for s in COPAL_STAGES),
                    id="job-stages", compact=True)
            with Vertical(id="job-worlds-box"):
                yield Label("Worlds (none ticked = all)", classes="section")
                yield SelectionList[str](
                    *(Selection(safe(one_line(f"{wid} \u00b7 {name}", 60)), wid,
                                wid in self.preset_worlds)
                      for wid, name in self.world_choices),
                    id="job-worlds", compact=True)
        with Horizontal(classes="row"):
            yield Label("Models", classes="field-label")
            yield Input(placeholder="respond: offline/keyword-guard, openai/gpt-4o-mini",
                        suggester=ListSuggester(self.model_names), id="job-models",
                        compact=True)
        with Horizontal(classes="row"):
            yield Label("Judges", classes="field-label")
            yield Input(placeholder="judge: offline/judge", id="job-judges", compact=True,
                        suggester=ListSuggester(self.judge_names))
        with Horizontal(classes="row"):
            yield Label("Judge modes", classes="field-label")
            yield Checkbox("contract", True, id="job-mode-contract", compact=True)
            yield Checkbox("full-policy", False, id="job-mode-full", compact=True)
        with Horizontal(classes="row"):
            yield Label("Generator", classes="field-label")
            # Empty unless the environment names one: copal never picks a generator (typing
            # offline/heuristic asks for the offline engine's heuristics).
            yield Input(os.environ.get(GENERATOR_ENV, ""),
                        placeholder="required to build a suite, e.g. offline/heuristic",
                        id="job-generator", compact=True,
                        suggester=ListSuggester(["offline/heuristic", *self.model_names]))
        with Horizontal(classes="row"):
            yield Label("Budget", classes="field-label")
            yield Input("30", type="integer", id="job-budget", classes="number", compact=True)
            yield Label(" Variants ", classes="field-label")
            yield Input("2", type="integer", id="job-variants", classes="number", compact=True)
        with Horizontal(classes="row"):
            yield Label("Concurrency", classes="field-label")
            yield Input("8", type="integer", id="job-concurrency", classes="number",
                        compact=True)
        yield Button("Start job", id="job-start", variant="primary", compact=True)
        yield Static("", id="job-form-error")

    # ---------------------------------------------------------------- reading the form

    def _number(self, name: str) -> int:
        raw = self.query_one(f"#job-{name}", Input).value.strip()
        low, high = LIMITS[name]
        try:
            value = int(raw)
        except ValueError:
            raise JobError(f"{name} must be a whole number") from None
        if not low <= value <= high:
            raise JobError(f"{name} must be between {low} and {high}")
        return value

    def request(self) -> tuple[list[str], Options]:
        stages = list(self.query_one("#job-stages", SelectionList).selected)
        worlds = list(self.query_one("#job-worlds", SelectionList).selected)
        modes = [m for m, wid in (("contract", "#job-mode-contract"),
                                  ("full_policy", "#job-mode-full"))
                 if self.query_one(wid, Checkbox).value]
        opts = Options(
            worlds=worlds or None,
            models=split_names(self.query_one("#job-models", Input).value),
            judges=split_names(self.query_one("#job-judges", Input).value),
            generator=self.query_one("#job-generator", Input).value.strip() or None,
            copal=CopalOptions(modes=modes, budget=self._number("budget"),
                               variants=self._number("variants")),
            concurrency=self._number("concurrency"),
            # The same variable `copal run --models-file` reads: named models work here too.
            models_file=Path(os.environ["COPAL_MODELS_FILE"])
            if os.environ.get("COPAL_MODELS_FILE") else None,
        )
        if not stages:
            raise JobError("choose at least one stage")
        for stage in stages:
            why = missing_model(stage, generator=opts.generator, prefilter=opts.compass.prefilter)
            if why:
                raise JobError(why.replace("--generator MODEL", "a Generator"))
        return stages, opts

    def show_error(self, message: str) -> None:
        self.query_one("#job-form-error", Static).update(safe(message))
