"""`copal demo`: the whole method offline, on the sample worlds, in a new database.

Each registered suite adds its part (its descriptor's `demo`,
copal_tui.commands.suite_demo): its sample data, imported into a new store, and its stages run
with the offline engine (deterministic heuristics, not a language model), the three reference
bots as targets and `offline/judge` as the judge. COPAL's part is every sample world with
projections and ablations, judged in contract and full-policy mode; the COMPASS sample
organisation gets the single-policy suite too (so the report sets PAS beside the composed
error); the CompliBench sample dialogues are judged once more; the sample traffic logs are
imported de-identified, sampled into the audit campaign and labelled. Then opens the TUI, or
with --no-tui prints a summary, a table or two per suite.

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
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from copal_tui.commands.output import echo

if TYPE_CHECKING:
    from copal_tui.commands.suite_demo import DemoSettings
    from copal_tui.pipeline.base import Progress

DEMO_MODELS = ["offline/refuse-all", "offline/comply-all", "offline/keyword-guard"]
DEMO_JUDGE = "offline/judge"
DEMO_GENERATOR = "offline/heuristic"  # grounding, composition, generation, the pre-filter
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
    _summary(path, time.monotonic() - started, budget)
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
    """Import every suite's samples into `path` (an empty file) and make every suite's runs on
    them (`copal_tui.commands.suite_demo`), until `stop` is set."""
    from copal_tui.commands.run_cmds import RichProgress
    from copal_tui.commands.suite_demo import suite_demos
    from copal_tui.pipeline.base import Options
    from copal_tui.pipeline.runner import run_stages
    from copal_tui.services.store_admin import migrate
    from store.db import connect

    parts = suite_demos()
    db = connect(path, create=True)
    migrate(db)
    counts: Counter[str] = Counter()
    for part in parts:
        counts.update(part.seed(db))  # adds: a suite's import may add worlds too
    db.close()
    echo("imported " + ", ".join(f"{n} {t}" for t, n in counts.items()))
    echo("offline engine: deterministic heuristics, not a language model")
    # The demo names the offline engine for every role explicitly: no stage has a default.
    settings = _settings(budget)
    base = Options(models=list(settings.models), judges=[settings.judge], concurrency=16,
                   generator=settings.generator)
    show = RichProgress()
    results: list[Progress] = []
    with show.bar:
        for stages, options in (run for part in parts for run in part.runs(base, settings)):
            if stop.is_set():
                break
            results += run_stages(path, stages, options, on_progress=show, cancel=stop)
    return results


def _settings(budget: int) -> DemoSettings:
    from copal_tui.commands.suite_demo import DemoSettings

    return DemoSettings(models=tuple(DEMO_MODELS), judge=DEMO_JUDGE, generator=DEMO_GENERATOR,
                        budget=budget)


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


def _summary(path: Path, seconds: float, budget: int) -> None:
    from copal_tui.commands.suite_demo import suite_demos
    from copal_tui.export.fit_table import terminal_console
    from copal_tui.services import store_admin
    from store.db import connect

    db = connect(path)
    console = terminal_console()
    stats = store_admin.stats(db)
    console.print(f"[bold]demo built in {seconds:.1f} s[/bold]: " +
                  ", ".join(f"{k} {v}" for k, v in stats.items()))
    settings = _settings(budget)
    for part in suite_demos():
        if part.summary is not None:
            part.summary(console, db, settings)
    db.conn.close()


def _open_tui(path: Path) -> None:
    from copal_tui.tui.app import make_app

    make_app(path, mode="browse").run()


COMMANDS = [demo]
