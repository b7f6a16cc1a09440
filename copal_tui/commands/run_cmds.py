"""Pipeline commands: `copal run STAGE...` (and `copal run compass`, the four COMPASS stages;
`copal run dialogue_judge` / `dialogue_variants` for CompliBench-style dialogues;
`copal run traffic_judge` for the real-traffic audit's automatic labeller) and `copal runs`.

`copal run` exits 0 only when every unit of every stage is done; EXIT_UNITS_FAILED when the
stages finished but some units failed (recorded, and retried by a re-run); 2 for bad input; 1
when a stage stopped (a fatal provider error such as a bad key, a store error, a cancel).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from copal_tui.commands.context import db_path, open_db
from copal_tui.commands.output import echo, print_table
from copal_tui.commands.run_checks import check_scope, refuse_unread
from copal_tui.commands.suite_run import with_suite_options
from copal_tui.domain.suites import run_aliases
from copal_tui.pipeline import GENERATOR_ENV, REGISTRY, STAGES, missing_model

if TYPE_CHECKING:
    from rich.progress import TaskID

    from copal_tui.pipeline.base import Options, Progress
    from copal_tui.services.runs import RunCounters


# Exit code of a run whose stages finished with failed units (beside cli.EXIT_BAD_INPUT = 2).
EXIT_UNITS_FAILED = 3


def options_from(worlds: tuple[str, ...], all_worlds: bool, models: tuple[str, ...],
                 judges: tuple[str, ...], generator: str | None, concurrency: int,
                 models_file: Path | None, params: Mapping[str, Any]) -> Options:
    """The run's options: the shared ones, then each suite's from its own parameters."""
    if worlds and all_worlds:
        raise click.UsageError("give --world IDs or --all, not both")
    from copal_tui.commands.suite_run import apply_all
    from copal_tui.pipeline.base import Options

    opts = Options(worlds=list(worlds) or None, models=list(models), judges=list(judges),
                   generator=generator, concurrency=concurrency, models_file=models_file)
    apply_all(opts, params)
    return opts


def expand_stages(stages: tuple[str, ...]) -> list[str]:
    """The stages named, a suite's name (`Suite.run_alias`) standing for all its stages."""
    aliases = run_aliases()
    out: list[str] = []
    for s in stages:
        out.extend(aliases.get(s, (s,)))
    return list(dict.fromkeys(out))


class RichProgress:
    """A rich progress bar per stage: done/total, failures, cache hits, cost."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
        from rich.progress import Progress as Bar

        from copal_tui.export.fit_table import terminal_console

        # The console every table uses: a closed stdout ends the command quietly.
        self.bar = Bar(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"), transient=False, console=terminal_console(),
        )
        self.tasks: dict[str, TaskID] = {}
        self.said: set[str] = set()

    def __call__(self, p: Progress) -> None:
        if p.message and p.message not in self.said:
            # Said once (e.g. waiting for another run of the stage), not on every update.
            self.said.add(p.message)
            echo(f"copal: {p.stage}: {p.message}", err=True)
        detail = (f"failures {p.failures}  calls {p.calls}  cache hits {p.cache_hits}  "
                  f"cost ${p.cost:.4f}  {p.status}")
        if p.run_id not in self.tasks:
            self.tasks[p.run_id] = self.bar.add_task(p.stage, total=p.total or None,
                                                     detail=detail)
        self.bar.update(self.tasks[p.run_id], completed=p.done, total=p.total or None,
                        detail=detail)


@click.command("run")
@click.argument("stages", nargs=-1, required=True,
                type=click.Choice([*STAGES, *run_aliases()]))
@click.option("--world", "worlds", multiple=True, help="World id (repeatable).")
@click.option("--all", "all_worlds", is_flag=True, help="Every world in the store (default).")
@click.option("--model", "models", multiple=True,
              help="respond, compass_respond: target chatbot model (repeatable); judge, "
                   "compass_judge: judge only these models' stored responses (default: every "
                   "stored response of the worlds in scope).")
@click.option("--judge", "judges", multiple=True,
              help="judge, compass_judge, dialogue_judge, dialogue_variants, traffic_judge: "
                   "judge model (repeatable).")
@click.option("--generator", default=None, envvar=GENERATOR_ENV,
              help="Model for grounding, composition, generation, screening, projection, "
                   "ablation and the COMPASS and dialogue-variant writers. Required by those "
                   f"stages (no default; or set {GENERATOR_ENV}); offline/heuristic is the "
                   "offline engine's heuristics.")
@click.option("--concurrency", default=8, show_default=True, help="Calls in flight at once.")
@click.option("--models-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              envvar="COPAL_MODELS_FILE", help="Named models (YAML).")
@click.option("--batch", is_flag=True,
              help="respond, judge, compass_respond, compass_judge, dialogue_judge, "
                   "traffic_judge: send the calls as provider batches (about half the price, "
                   "up to 24 h; safe to kill and re-run: a pending batch is resumed). Models "
                   "without a batch API go live.")
@with_suite_options  # each suite's own options (copal_tui.commands.suite_run)
@click.pass_context
def run(ctx: click.Context, stages: tuple[str, ...], worlds: tuple[str, ...],
        all_worlds: bool, models: tuple[str, ...], judges: tuple[str, ...],
        generator: str | None, concurrency: int, models_file: Path | None, batch: bool,
        **params: Any) -> None:
    """Run pipeline stages (idempotent: a re-run only does what is missing).

    `copal run compass --world ID --model M --judge J` runs the COMPASS suite of a world:
    compass_generate, compass_verify, compass_respond and compass_judge, in that order.

    `copal run dialogue_judge --judge J --attempts 4 [--domain D] [--binary]` judges the stored
    dialogues; `copal run dialogue_variants --generator M --judge J [--per-dialogue K]` builds
    violation variants of them.

    `copal run traffic_judge --judge J [--source S] [--sampled]` labels the imported traffic
    pairs (policy category and error) automatically."""
    from copal_tui.pipeline.runner import run_stages

    opts = options_from(worlds, all_worlds, models, judges, generator, concurrency, models_file,
                        params)
    opts.batch = batch
    db = open_db(ctx)  # refuses pending migrations before anything starts
    whole = [s for s in stages if s in run_aliases()]
    if whole and not (worlds or all_worlds):
        # A suite per world is hundreds of calls per target: never for every world by default.
        raise click.UsageError(f"{whole[0]} needs --world ID (or --all)")
    stage_list = expand_stages(stages)
    for name in stage_list:
        needs = REGISTRY[name]
        if needs.needs_models and not models:
            raise click.UsageError(f"{name} needs at least one --model")
        if needs.needs_judges and not judges:
            raise click.UsageError(f"{name} needs at least one --judge")
    for stage in stage_list:
        why = missing_model(stage, generator=generator, prefilter=opts.compass.prefilter,
                            verifier=opts.compass.verifier,
                            compass_variants=tuple(opts.compass.variants))
        if why:
            raise click.UsageError(why)
    refuse_unread(ctx, stage_list)  # an option no stage reads, a name nothing has: exit 2
    check_scope(db, stage_list, worlds, models, params)
    db.conn.close()
    from copal_tui.llm.preflight import check_names
    from copal_tui.llm.results import LLMError

    # Before anything runs or is written: a model no call can succeed with (litellm cannot
    # place it, its key variable is unset, a role it cannot take) exits 2 naming what to fix.
    check_names(*called_models(stage_list, opts), opts.models_file)
    show = RichProgress()
    try:
        with show.bar:
            results = run_stages(db_path(ctx), stage_list, opts, on_progress=show)
    except LLMError as exc:  # fatal (a refused key, a model the provider does not have)
        echo(f"copal: error: {exc}", err=True)
        raise SystemExit(1) from None
    bad = [p for p in results if p.status != "done"]
    for p in results:
        echo(f"{p.stage}: {p.status}, {p.done}/{p.total} units, {p.failures} failures, "
             f"{p.calls} calls, {p.cache_hits} cache hits, cost ${p.cost:.4f} ({p.run_id})")
    if bad:
        raise SystemExit(1)
    failed = sum(p.failures for p in results)
    if failed:
        click.echo(f"{failed} unit(s) failed and are recorded; re-run the same command to retry "
                   "them")
        raise SystemExit(EXIT_UNITS_FAILED)


def called_models(stage_list: list[str], opts: Options) -> tuple[list[str], list[str]]:
    """The models the stages call: (the --model targets, the judges and the generator)."""
    needs = [REGISTRY[name] for name in stage_list]
    targets = list(opts.models) if any(s.needs_models for s in needs) else []
    others = list(opts.judges) if any(s.needs_judges for s in needs) else []
    if opts.generator and any(s.needs_generator for s in needs):
        others.append(opts.generator)
    return targets, others


RUN_JSON_FIELDS = ("id", "stage", "status", "started_at", "finished_at", "calls", "cache_hits",
                   "failures", "repaired", "invalid", "cost")
RUN_HEADERS = ("run", "status", "started (UTC)", "took", "calls", "cache hits", "failures",
               "repaired", "invalid", "cost")
RUNS_HINT = ("One run per block at this width: `copal runs --wide` prints one line per run, "
             "`copal runs --json` every field (and the structured-answer tallies).")


def _stamp(value: str | None) -> str:
    """A stored UTC timestamp to the second (`2026-12-01 10:01:13`); --json has it whole."""
    return (value or "")[:19].replace("T", " ")


def _took(started: str | None, finished: str | None) -> str:
    """How long a run took (to its last heartbeat if interrupted): `0:02:05`; `-` running."""
    from datetime import datetime

    if not started or not finished:
        return "-"
    try:
        begin, end = (datetime.fromisoformat(t.replace("Z", "+00:00"))
                      for t in (started, finished))
    except ValueError:
        return "?"
    seconds = max(0, round((end - begin).total_seconds()))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _run_row(r: RunCounters) -> list[object]:
    # The run id starts with its stage (`judge-20261201T100113-468d78`): no stage column.
    return [r.id, r.status, _stamp(r.started_at), _took(r.started_at, r.finished_at),
            r.calls, r.cache_hits, r.failures, r.repaired, r.invalid, f"${r.cost:.4f}"]


@click.command()
@click.option("--json", "as_json", is_flag=True,
              help="Print every field of every run as JSON (full ids and timestamps).")
@click.option("--wide", is_flag=True,
              help="One line per run, however wide the terminal (for `less -S` or a file).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.pass_context
def runs(ctx: click.Context, as_json: bool, wide: bool, limit: int) -> None:
    """List pipeline runs with their counters, newest first.

    The table fits the terminal: where one line per run does not fit, each run is a block
    headed by its full id. --wide prints one line per run anyway; --json prints every field.
    A run whose process died (killed, machine rebooted) is shown as `interrupted`, finished at
    its last heartbeat, with the calls, cache hits, failures and cost it had recorded by then."""
    from copal_tui.services.runs import list_runs

    if as_json and wide:
        raise click.UsageError("give --json or --wide, not both")
    # A killed run shows as interrupted, not as running forever.
    rows = list_runs(open_db(ctx), limit=limit)
    if not rows and not as_json:
        echo("no pipeline run yet (`copal run STAGE...` starts one)")
        return
    if as_json:
        keys = (*RUN_JSON_FIELDS, "outputs", "counts")
        click.echo(json.dumps([{k: getattr(r, k) for k in keys} for r in rows], indent=2))
        return
    print_table(RUN_HEADERS, [_run_row(r) for r in rows], right=RUN_HEADERS[3:],
                whole=RUN_HEADERS[:3], wide=wide, stacked_hint=RUNS_HINT)


COMMANDS = [run, runs]
