"""Interactive commands: `copal tui` (researcher), `copal label` (annotator),
`copal adjudicate` (adjudicator) and `copal serve` (the same app in a browser, localhost only).

The database is checked (exists, no pending migrations) before the terminal is taken over, so a
problem is one line on stderr rather than a broken screen.
"""

from __future__ import annotations

import shlex
import sys

import click

from copal_tui.commands.context import db_path, open_db


def _run(ctx: click.Context, mode: str, annotator: str | None) -> None:
    open_db(ctx).conn.close()
    from copal_tui.tui.app import make_app

    make_app(db_path(ctx), mode=mode, annotator=annotator).run()


@click.command()
@click.pass_context
def tui(ctx: click.Context) -> None:
    """Browse worlds, items, responses, judgments and labels; run jobs; see the dashboard."""
    _run(ctx, "browse", None)


@click.command()
@click.option("--annotator", default=None, help="Your name (default: the OS user name).")
@click.pass_context
def label(ctx: click.Context, annotator: str | None) -> None:
    """The blind label queue."""
    _run(ctx, "label", annotator)


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
@click.pass_context
def serve(ctx: click.Context, port: int, mode: str) -> None:
    """Serve the app in a browser through textual-serve, bound to localhost only."""
    open_db(ctx).conn.close()
    try:
        from textual_serve.server import Server
    except ImportError:
        raise click.ClickException(
            "textual-serve is not installed (it is a dependency of copal: reinstall)") from None
    command = shlex.join([sys.executable, "-m", "copal_tui", "--db", str(db_path(ctx)),
                          {"browse": "tui"}.get(mode, mode)])
    Server(command, host="127.0.0.1", port=port, title="copal").serve()


COMMANDS = [tui, label, adjudicate, serve]
