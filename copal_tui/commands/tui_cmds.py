"""Interactive commands: `copal tui` (researcher), `copal label [--suite compass|dialogues
[--judge J]]` (annotator, reviewer of judge mistakes),
`copal adjudicate` (adjudicator) and `copal serve` (the same app in a browser, localhost only).

The database is checked (exists, no pending migrations) before the terminal is taken over, so a
problem is one line on stderr rather than a broken screen.
"""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

import click

from copal_tui.commands.context import db_path, open_db

if TYPE_CHECKING:
    from store.db import Database


def _run(ctx: click.Context, mode: str, annotator: str | None, suite: str = "copal",
         judge: str | None = None) -> None:
    db = open_db(ctx)
    try:
        if judge is not None:
            _check_judge(db, judge)
    finally:
        db.conn.close()
    from copal_tui.tui.app import make_app

    make_app(db_path(ctx), mode=mode, annotator=annotator, suite=suite, judge=judge).run()


def _check_judge(db: Database, judge: str) -> None:
    from store.dialogue_reviews import judges

    known = judges(db)
    if judge not in known:
        raise click.BadParameter(
            f"no dialogue attempts by {judge!r} (judges: {', '.join(known) or 'none yet'})",
            param_hint="--judge")


# The label queues (copal_tui.tui.app.LABEL_SUITES; repeated here so `--help` imports no
# textual): composed COPAL items, COMPASS single-policy responses, or judge mistakes on
# dialogue turns.
SUITES = ("copal", "compass", "dialogues")


@click.command()
@click.pass_context
def tui(ctx: click.Context) -> None:
    """Browse worlds, items, responses, judgments and labels; run jobs; see the dashboard."""
    _run(ctx, "browse", None)


@click.command()
@click.option("--annotator", default=None, help="Your name (default: the OS user name).")
@click.option("--suite", type=click.Choice(SUITES), default="copal", show_default=True,
              help="What to label: COPAL contract items, COMPASS responses (refused or "
                   "answered, compliant or violating), or dialogues (the error type of each "
                   "judge mistake on a dialogue turn).")
@click.option("--judge", default=None,
              help="With --suite dialogues: review this judge's mistakes only.")
@click.pass_context
def label(ctx: click.Context, annotator: str | None, suite: str, judge: str | None) -> None:
    """The label queue (blind for COPAL and COMPASS)."""
    if judge is not None and suite != "dialogues":
        raise click.UsageError("--judge only applies to --suite dialogues")
    _run(ctx, "label", annotator, suite, judge)


@click.command()
@click.option("--adjudicator", "annotator", default=None,
              help="Your name (default: the OS user name).")
@click.pass_context
def adjudicate(ctx: click.Context, annotator: str | None) -> None:
    """Decide responses where annotators disagree, or the reference and the judge disagree."""
    _run(ctx, "adjudicate", annotator)


@click.command()
@click.option("--port", default=8000, show_default=True)
@click.option("--mode", type=click.Choice(["browse", "label", "adjudicate"]), default="browse")
@click.option("--suite", type=click.Choice(SUITES), default="copal", show_default=True,
              help="With --mode label: which label queue.")
@click.pass_context
def serve(ctx: click.Context, port: int, mode: str, suite: str) -> None:
    """Serve the app in a browser through textual-serve, bound to localhost only."""
    open_db(ctx).conn.close()
    try:
        from textual_serve.server import Server
    except ImportError:
        raise click.ClickException(
            "textual-serve is not installed (it is a dependency of copal: reinstall)") from None
    args = [sys.executable, "-m", "copal_tui", "--db", str(db_path(ctx)),
            {"browse": "tui"}.get(mode, mode)]
    if mode == "label" and suite != "copal":
        args += ["--suite", suite]
    command = shlex.join(args)
    Server(command, host="127.0.0.1", port=port, title="copal").serve()


COMMANDS = [tui, label, adjudicate, serve]
