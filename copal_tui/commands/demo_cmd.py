"""`copal demo`: the whole method offline, on the sample worlds, in a fresh database.

Imports every sample world (and the hand-worked showcase labels), runs every stage with the
offline engine (deterministic heuristics, not a language model): the three reference bots as
targets, `offline/judge` in contract and full-policy mode, projections and ablations. The
COMPASS sample organisation gets both suites (composed and single-policy, so the report sets PAS
beside the composed error), and the CompliBench sample dialogues are imported with their
sample judge and judged once more by the offline dialogue judge. Then opens the TUI, or with
--no-tui prints a summary.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import click

from copal_tui.pipeline import COMPASS_STAGES, COPAL_STAGES

DEMO_MODELS = ["offline/refuse-all", "offline/comply-all", "offline/keyword-guard"]
DEMO_JUDGE = "offline/judge"
DEMO_GENERATOR = "offline/heuristic"  # grounding, composition, generation, the pre-filter
SHOWCASE_WORLDS = ["harbor-clinics", "meridian-bank"]
COMPASS_WORLD = "kestrelpharmacy"  # sample_worlds/compass
SAMPLE_DIALOGUE_JUDGE = "sample-judge"  # the judge outputs shipped with the dialogue sample


def _default_demo_db() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("copal", appauthor=False)) / "demo.db"


@click.command()
@click.option("--db", "demo_db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to build the demo database (default: demo.db in the data directory; "
                   "an existing file there is replaced).")
@click.option("--no-tui", is_flag=True, help="Print a summary instead of opening the TUI.")
@click.option("--budget", default=12, show_default=True, help="Selected items per world.")
def demo(demo_db: Path | None, no_tui: bool, budget: int) -> None:
    """Build a demo database offline (no keys, no network) and show it."""
    from copal_tui.commands.run_cmds import RichProgress
    from copal_tui.interchange import complibench_import
    from copal_tui.interchange.compass_import import import_compass
    from copal_tui.interchange.importer import import_paths
    from copal_tui.pipeline.base import CompassOptions, CopalOptions, DialogueOptions, Options
    from copal_tui.pipeline.runner import run_stages
    from copal_tui.resources import sample_worlds_dir
    from copal_tui.services.store_admin import migrate
    from store.db import connect

    path = demo_db or _default_demo_db()
    if path.exists():
        if demo_db is not None:
            raise click.UsageError(f"{path} exists; the demo builds a fresh database")
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    started = time.monotonic()
    db = connect(path, create=True)
    migrate(db)
    counts = import_paths(db, [sample_worlds_dir()])
    counts.update(import_compass(db, [sample_worlds_dir() / "compass"]))
    dialogues = sample_worlds_dir() / "complibench"
    counts["dialogue"] = complibench_import.import_paths(db, [dialogues]).added
    complibench_import.import_paths(db, [dialogues], SAMPLE_DIALOGUE_JUDGE)
    db.conn.close()
    click.echo(f"demo database {path}: imported " +
               ", ".join(f"{n} {t}" for t, n in counts.items()))
    click.echo("offline engine: deterministic heuristics, not a language model")
    # Sized to finish in well under a minute on two cores: the paper's matched budget of 12
    # items per world, one variant per facet, two candidate compositions per pattern.
    # The demo names the offline engine for every role explicitly: no stage has a default.
    opts = Options(models=DEMO_MODELS, judges=[DEMO_JUDGE], concurrency=16,
                   generator=DEMO_GENERATOR,
                   copal=CopalOptions(modes=["contract"], budget=budget, variants=1,
                                      per_pattern=2),
                   # The COMPASS suite: two base queries per policy, the base prompt and the
                   # pre-filter.
                   compass=CompassOptions(variants=["base", "pre-filter"],
                                          prefilter=DEMO_GENERATOR, per_policy=2),
                   dialogue=DialogueOptions(attempts=2))
    # The full-policy judge runs where human labels exist (the showcase worlds), which is what
    # the judge-validity comparison of the two settings needs.
    full_policy = replace(opts, copal=replace(opts.copal, modes=["full_policy"]),
                          worlds=SHOWCASE_WORLDS)
    compass = replace(opts, worlds=[COMPASS_WORLD])
    judge_dialogues = opts
    show = RichProgress()
    with show.bar:
        results = run_stages(path, list(COPAL_STAGES), opts, on_progress=show)
        results += run_stages(path, ["judge"], full_policy, on_progress=show)
        results += run_stages(path, list(COMPASS_STAGES), compass, on_progress=show)
        results += run_stages(path, ["dialogue_judge"],
                              judge_dialogues, on_progress=show)
    failed = [p for p in results if p.status != "done"]
    _summary(path, time.monotonic() - started)
    if failed:
        raise click.ClickException(
            "stages did not finish: " + ", ".join(f"{p.stage} ({p.status})" for p in failed))
    if not no_tui:
        _open_tui(path)


def _summary(path: Path, seconds: float) -> None:
    from rich.console import Console
    from rich.table import Table

    from copal_tui.services import store_admin
    from store.db import connect

    db = connect(path)
    console = Console()
    stats = store_admin.stats(db)
    console.print(f"[bold]demo built in {seconds:.1f} s[/bold]: " +
                  ", ".join(f"{k} {v}" for k, v in stats.items()))
    for mode in ("contract", "full_policy"):
        table = Table(title=f"error rate of the reference bots on selected COPAL items "
                            f"({DEMO_JUDGE}, {mode} judge)")
        table.add_column("model")
        table.add_column("n", justify="right")
        table.add_column("errors", justify="right")
        table.add_column("error rate", justify="right")
        for row in store_admin.error_summary(db, DEMO_JUDGE, mode):
            table.add_row(row.model, str(row.n), str(row.errors), f"{row.rate:.1%}")
        console.print(table)
    pas = Table(title=f"COMPASS Policy Alignment Score on {COMPASS_WORLD} ({DEMO_JUDGE}; "
                      "higher is better)")
    for col in ("model", "variant", "queries", "n", "aligned", "PAS"):
        pas.add_column(col, justify="left" if col in ("model", "variant", "queries") else "right")
    for pas_row in store_admin.pas_summary(db, DEMO_JUDGE):
        pas.add_row(pas_row.model, pas_row.variant, pas_row.kind, str(pas_row.n),
                    str(pas_row.aligned), f"{pas_row.aligned / pas_row.n:.1%}")
    console.print(pas)
    from copal_tui.services.report import dialogue_judging

    dj = Table(title="dialogue judging on the CompliBench sample (every tagged turn scored, "
                     "as CompliBench's code does)")
    for col in ("judge", "domain", "conv", "compliant-turn acc", "violation detection",
                "conversation acc"):
        dj.add_column(col, justify="left" if col in ("judge", "domain") else "right")
    for r in dialogue_judging(db).rows:
        dj.add_row(r.judge, r.domain, str(r.conversations),
                   *(f"{v:.1%}" if v is not None else "n/a" for v in (
                       r.compliant_turn_accuracy, r.violation_detection_accuracy,
                       r.conversation_accuracy)))
    console.print(dj)
    db.conn.close()


def _open_tui(path: Path) -> None:
    from copal_tui.tui.app import make_app

    make_app(path, mode="browse").run()


COMMANDS = [demo]
