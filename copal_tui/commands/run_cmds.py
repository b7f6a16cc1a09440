"""Pipeline commands: `copal run STAGE...` and `copal runs`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from copal_tui.commands.context import db_path, open_db
from copal_tui.pipeline import DEFAULT_GENERATOR, STAGES

if TYPE_CHECKING:
    from rich.progress import TaskID

    from copal_tui.pipeline.base import Options, Progress


def options_from(worlds: tuple[str, ...], all_worlds: bool, models: tuple[str, ...],
                 judges: tuple[str, ...], modes: tuple[str, ...], generator: str, budget: int,
                 variants: int, concurrency: int, models_file: Path | None) -> Options:
    if worlds and all_worlds:
        raise click.UsageError("give --world IDs or --all, not both")
    from copal_tui.pipeline.base import Options

    return Options(
        worlds=list(worlds) or None, models=list(models), judges=list(judges),
        modes=[m.replace("-", "_") for m in modes] or ["contract"], generator=generator,
        budget=budget, variants=variants, concurrency=concurrency, models_file=models_file,
    )


class RichProgress:
    """A rich progress bar per stage: done/total, failures, cache hits, cost."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
        from rich.progress import Progress as Bar

        self.bar = Bar(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"), transient=False,
        )
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, p: Progress) -> None:
        detail = (f"failures {p.failures}  calls {p.calls}  cache hits {p.cache_hits}  "
                  f"cost ${p.cost:.4f}  {p.status}")
        if p.run_id not in self.tasks:
            self.tasks[p.run_id] = self.bar.add_task(p.stage, total=p.total or None,
                                                     detail=detail)
        self.bar.update(self.tasks[p.run_id], completed=p.done, total=p.total or None,
                        detail=detail)


@click.command()
@click.argument("stages", nargs=-1, required=True, type=click.Choice(STAGES))
@click.option("--world", "worlds", multiple=True, help="World id (repeatable).")
@click.option("--all", "all_worlds", is_flag=True, help="Every world in the store (default).")
@click.option("--model", "models", multiple=True, help="Target chatbot model (repeatable).")
@click.option("--judge", "judges", multiple=True, help="Judge model (repeatable).")
@click.option("--mode", "modes", multiple=True,
              type=click.Choice(["contract", "full-policy", "full_policy"]),
              help="Judge setting (repeatable; default contract).")
@click.option("--generator", default=DEFAULT_GENERATOR, show_default=True,
              help="Model for grounding, composition, generation, screening, projection.")
@click.option("--budget", default=30, show_default=True, help="Selected items per world.")
@click.option("--variants", default=2, show_default=True, help="Query variants per facet.")
@click.option("--concurrency", default=8, show_default=True, help="Calls in flight at once.")
@click.option("--models-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              envvar="COPAL_MODELS_FILE", help="Named models (YAML).")
@click.pass_context
def run(ctx: click.Context, stages: tuple[str, ...], worlds: tuple[str, ...], all_worlds: bool,
        models: tuple[str, ...], judges: tuple[str, ...], modes: tuple[str, ...],
        generator: str, budget: int, variants: int, concurrency: int,
        models_file: Path | None) -> None:
    """Run pipeline stages (idempotent: a re-run only does what is missing)."""
    from copal_tui.pipeline.runner import run_stages

    opts = options_from(worlds, all_worlds, models, judges, modes, generator, budget, variants,
                        concurrency, models_file)
    open_db(ctx).conn.close()  # refuse pending migrations before starting anything
    if "respond" in stages and not models:
        raise click.UsageError("respond needs at least one --model")
    if "judge" in stages and not judges:
        raise click.UsageError("judge needs at least one --judge")
    show = RichProgress()
    with show.bar:
        results = run_stages(db_path(ctx), list(stages), opts, on_progress=show)
    bad = [p for p in results if p.status != "done"]
    for p in results:
        click.echo(f"{p.stage}: {p.status}, {p.done}/{p.total} units, {p.failures} failures, "
                   f"{p.calls} calls, {p.cache_hits} cache hits, cost ${p.cost:.4f} ({p.run_id})")
    if bad:
        raise SystemExit(1)


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--limit", default=50, show_default=True)
@click.pass_context
def runs(ctx: click.Context, as_json: bool, limit: int) -> None:
    """List pipeline runs with their counters."""
    from store import runs as run_sql

    rows = run_sql.all_runs(open_db(ctx), limit=limit)
    fields = ("id", "stage", "status", "started_at", "finished_at", "calls", "cache_hits",
              "failures", "cost")
    if as_json:
        click.echo(json.dumps([{k: r[k] for k in fields} for r in rows], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for f in fields:
        table.add_column(f)
    for r in rows:
        table.add_row(*(str(r[f]) if r[f] is not None else "" for f in fields))
    Console().print(table)


COMMANDS = [run, runs]
