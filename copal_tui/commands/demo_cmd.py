"""`copal demo`: the whole method offline, on the sample worlds, in a new database.

Imports every sample world (and the hand-worked showcase labels), runs every stage with the
offline engine (deterministic heuristics, not a language model): the three reference bots as
targets, `offline/judge` in contract and full-policy mode, projections and ablations. The
COMPASS sample organisation gets both suites (composed and single-policy, so the report sets PAS
beside the composed error), and the CompliBench sample dialogues are imported with their
sample judge and judged once more by the offline dialogue judge. Then opens the TUI, or with
--no-tui prints a summary.

The database goes where every command's goes (`copal --db PATH`, else `$COPAL_DB`), else to
demo.db in the per-user data directory. It is built in a temporary file beside it and renamed
into place once complete (copal_tui.export.safe_paths.Staging): an interrupted or failed demo
leaves nothing, and an existing file there is kept as it was unless `--replace` is given.
"""

from __future__ import annotations

import os
import shlex
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace as with_
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from copal_tui.commands.output import echo
from copal_tui.pipeline import COMPASS_STAGES, COPAL_STAGES

if TYPE_CHECKING:
    from copal_tui.pipeline.base import Progress
    from store.db import Database

DEMO_MODELS = ["offline/refuse-all", "offline/comply-all", "offline/keyword-guard"]
DEMO_JUDGE = "offline/judge"
DEMO_GENERATOR = "offline/heuristic"  # grounding, composition, generation, the pre-filter
SHOWCASE_WORLDS = ["harbor-clinics", "meridian-bank"]
COMPASS_WORLD = "kestrelpharmacy"  # sample_worlds/compass
SAMPLE_DIALOGUE_JUDGE = "sample-judge"  # the judge outputs shipped with the dialogue sample
# The sample traffic of a deployed chatbot (sample_worlds/traffic): its logs and their sources,
# the world its policies come from, and the audit sample drawn from it.
TRAFFIC_LOGS = (("lumen_telecom_web.ndjson", "web"), ("lumen_telecom_app.ndjson", "app"),
                ("lumen_telecom_web_export.csv", "web"))
TRAFFIC_WORLD = "lumen-telecom"
TRAFFIC_CAMPAIGN = "traffic-audit"
TRAFFIC_SAMPLE = 200
# The status of a demo Ctrl-C stopped, as a shell reports a command SIGINT ended (128 + 2).
INTERRUPTED = 130


def _default_demo_db() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("copal", appauthor=False)) / "demo.db"


def demo_target(ctx: click.Context, option: Path | None) -> Path:
    """Where the demo builds: `copal --db`, else `$COPAL_DB`, else demo.db in the data
    directory (not copal.db there: the demo never mixes its rows into a user's default store).
    `option` is the demo's own `--db`, the same as the global one."""
    given = ctx.find_root().params.get("db_path")
    if option is not None and given is not None and Path(option) != Path(given):
        raise click.UsageError(f"two databases named ({given} and {option}): give one, "
                               "as copal --db PATH demo")
    chosen = option or given or os.environ.get("COPAL_DB")
    return Path(chosen) if chosen else _default_demo_db()


@click.command()
@click.option("--db", "demo_db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The database to build (the same as copal --db PATH demo).")
@click.option("--replace", is_flag=True,
              help="Rebuild over an existing file at the target (kept until the new database "
                   "is complete). Without it, an existing file is an error.")
@click.option("--no-tui", is_flag=True, help="Print a summary instead of opening the TUI.")
@click.option("--budget", default=12, show_default=True, help="Selected items per world.")
@click.pass_context
def demo(ctx: click.Context, demo_db: Path | None, replace: bool, no_tui: bool,
         budget: int) -> None:
    """Build a demo database offline (no keys, no network) and show it.

    It is built at copal --db PATH, else $COPAL_DB, else demo.db in the per-user data
    directory; in a temporary file beside it, renamed into place once complete.
    """
    from copal_tui.commands.refusals import refusals_exit_2
    from copal_tui.export.safe_paths import OutputGuard, OutputRefused, Staging

    path = demo_target(ctx, demo_db)
    started = time.monotonic()
    with refusals_exit_2(), Staging(OutputGuard(force=replace)) as staging:
        if os.path.lexists(path) and not replace:
            raise OutputRefused(
                f"refusing to build the demo at {path}: it already exists, and the demo "
                "removes no database it did not build (--replace rebuilds it; "
                "copal --db PATH demo builds elsewhere)")
        building = staging.reserve(path, database=True)
        echo(f"building the demo database {path}")
        with _interruptible() as stop:
            results = _build(building, budget, stop)
        # Leaving the block without commit() removes the temporary: no half-built database.
        if stop.is_set():
            echo(f"copal: error: demo interrupted; nothing was written at {path}", err=True)
            raise click.exceptions.Exit(INTERRUPTED)
        failed = [p for p in results if p.status != "done"]
        if failed:
            raise click.ClickException(
                "stages did not finish, no database was written: " +
                ", ".join(f"{p.stage} ({p.status})" for p in failed))
        _seal(building)
        staging.commit()
    _summary(path, time.monotonic() - started)
    quoted = shlex.quote(str(path))
    echo(f"demo database {path}; point the other commands at it with\n"
         f"  export COPAL_DB={quoted}\nor give copal --db {quoted} to each command")
    if not no_tui:
        _open_tui(path)


@contextmanager
def _interruptible() -> Iterator[threading.Event]:
    """The build's stop: Ctrl-C sets it, and the stages stop at their next unit, as a job
    cancelled in the app does (the build then leaves nothing). A second Ctrl-C, or SIGTERM or
    SIGHUP, stops at once (KeyboardInterrupt; the temporary is removed on the way out)."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def first(_signum: int, _frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        echo("copal: demo: stopping after the units under way (Ctrl-C again stops at once)",
             err=True)

    def at_once(_signum: int, _frame: object) -> None:
        stop.set()
        raise KeyboardInterrupt

    hangup = getattr(signal, "SIGHUP", None)
    saved = {signal.SIGINT: signal.signal(signal.SIGINT, first),
             signal.SIGTERM: signal.signal(signal.SIGTERM, at_once)}
    if hangup is not None:
        saved[hangup] = signal.signal(hangup, at_once)
    try:
        yield stop
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _build(path: Path, budget: int, stop: threading.Event) -> list[Progress]:
    """Import the samples into `path` (an empty file) and run every stage on them, until
    `stop` is set."""
    from copal_tui.commands.run_cmds import RichProgress
    from copal_tui.interchange import complibench_import
    from copal_tui.interchange.compass_import import import_compass
    from copal_tui.interchange.importer import import_paths
    from copal_tui.pipeline.base import CompassOptions, CopalOptions, DialogueOptions, Options
    from copal_tui.pipeline.runner import run_stages
    from copal_tui.resources import sample_worlds_dir
    from copal_tui.services.store_admin import migrate
    from store.db import connect

    db = connect(path, create=True)
    migrate(db)
    counts = import_paths(db, [sample_worlds_dir()])
    counts.update(import_compass(db, [sample_worlds_dir() / "compass"]))
    dialogues = sample_worlds_dir() / "complibench"
    counts["dialogue"] = complibench_import.import_paths(db, [dialogues]).added
    complibench_import.import_paths(db, [dialogues], SAMPLE_DIALOGUE_JUDGE)
    counts["traffic pairs"] = _traffic(db)
    db.close()
    echo("imported " + ", ".join(f"{n} {t}" for t, n in counts.items()))
    echo("offline engine: deterministic heuristics, not a language model")
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
    full_policy = with_(opts, copal=with_(opts.copal, modes=["full_policy"]),
                        worlds=SHOWCASE_WORLDS)
    compass = with_(opts, worlds=[COMPASS_WORLD])
    show = RichProgress()
    results: list[Progress] = []
    with show.bar:
        for stages, options in ((list(COPAL_STAGES), opts), (["judge"], full_policy),
                                (list(COMPASS_STAGES), compass), (["dialogue_judge"], opts),
                                (["traffic_judge"], with_(opts, worlds=None))):
            if stop.is_set():
                break
            results += run_stages(path, stages, options, on_progress=show, cancel=stop)
    return results


def _traffic(db: Database) -> int:
    """Import the sample traffic logs (de-identified, linked to their world) and draw the
    paper's audit from them: a seeded sample of TRAFFIC_SAMPLE pairs, each source's share in
    proportion to its pairs. Returns the pairs stored."""
    from copal_tui.resources import sample_worlds_dir
    from copal_tui.services.annotation import campaigns
    from copal_tui.services.annotation.suites import Filters
    from copal_tui.services.traffic import import_log

    stored = 0
    for name, source in TRAFFIC_LOGS:
        stored += import_log(db, sample_worlds_dir() / "traffic" / name, source=source,
                             world=TRAFFIC_WORLD).stored
    campaigns.create(db, TRAFFIC_CAMPAIGN, "traffic", Filters(), balanced=True,
                     size=TRAFFIC_SAMPLE)
    return stored


def _seal(path: Path) -> None:
    """Make the built file whole before it is renamed: its write-ahead log folded in and
    switched off, which SQLite does only when no other connection has it open. A row left in
    a log named after the temporary would otherwise be lost with the rename."""
    from store.db import connect

    db = connect(path)
    try:
        mode = str(db.execute("PRAGMA journal_mode = DELETE").fetchone()[0])
    finally:
        db.close()
    if mode.lower() != "delete":
        raise click.ClickException(f"could not close the demo database's log (got {mode})")


def _summary(path: Path, seconds: float) -> None:
    from rich.table import Table

    from copal_tui.export.fit_table import terminal_console
    from copal_tui.services import store_admin
    from store.db import connect

    db = connect(path)
    console = terminal_console()
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
    _traffic_summary(console, db)
    db.conn.close()


def _traffic_summary(console: Any, db: Database) -> None:
    """Table 11 of the sample traffic, as the automatic labeller reads it (the offline
    engine's: marked HEURISTIC)."""
    from rich.table import Table
    from rich.text import Text

    from copal_tui.services.report import traffic_audit

    audit = traffic_audit(db)
    if audit is None:
        return
    if audit.caveat:
        console.print(Text(audit.caveat, style="bold reverse"))
    t = Table(title=f"real-traffic audit (Table 11) of the sample logs, labelled by "
                    f"{audit.labels}: all sources")
    for col in ("category", "cases", "errors", "error rate", "share of cases",
                "share of errors"):
        t.add_column(col, justify="left" if col == "category" else "right")
    for r in audit.rows:
        if r.source == "all":
            t.add_row(r.category, str(r.cases), str(r.errors),
                      *(f"{m.value:.1%}" if m.value is not None else "n/a"
                        for m in (r.error_rate, r.share_of_cases, r.share_of_errors)))
    console.print(t)


def _open_tui(path: Path) -> None:
    from copal_tui.tui.app import make_app

    make_app(path, mode="browse").run()


COMMANDS = [demo]
