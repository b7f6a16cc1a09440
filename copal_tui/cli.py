"""`copal` command-line entry point: the group, the `--db` option and error handling.

Errors the user can act on are printed as one line on stderr with a non-zero exit, never a
traceback (set COPAL_DEBUG=1 to see one). Subcommands live in `copal_tui.commands`.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import click

from copal_tui import __version__
from copal_tui.interchange.errors import ImportFailure
from store.db import StoreError, StoreRefused

EXIT_BAD_INPUT = 2


def default_db_path() -> Path:
    env = os.environ.get("COPAL_DB")
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("copal", appauthor=False)) / "copal.db"


class CopalGroup(click.Group):
    """Turns known exceptions into one-line errors; loads subcommands when they are named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*LAZY_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            module, attr = LAZY_COMMANDS[cmd_name]
            cmd = getattr(importlib.import_module(module), attr)
            if not isinstance(cmd, click.Command):
                raise TypeError(f"{module}.{attr} is not a click command")
            self.add_command(cmd, cmd_name)
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ImportFailure as exc:
            _fail(f"import failed, nothing was written: {exc}", EXIT_BAD_INPUT)
        except StoreRefused as exc:  # not a database this copal may open as asked: bad input
            _fail(str(exc), EXIT_BAD_INPUT)
        except StoreError as exc:
            _fail(str(exc), 1)
        except _config_errors() as exc:
            _fail(str(exc), EXIT_BAD_INPUT)
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - last line of defence: no tracebacks
            if os.environ.get("COPAL_DEBUG"):
                raise
            if isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc):
                # A write that got past the up-front check (a stage or a screen that writes
                # on a database opened read-only): still the user's read-only file, not a bug.
                _fail(f"the database is read-only ({exc})", EXIT_BAD_INPUT)
            _fail(f"{type(exc).__name__}: {exc}", 1)


def _config_errors() -> tuple[type[Exception], ...]:
    # A bad models file or a missing key variable (the models module does not import litellm),
    # or a bad COPAL_* setting for the terminal app.
    from copal_tui.llm.models import ModelConfigError
    from copal_tui.tui.settings import SettingsError

    return (ModelConfigError, SettingsError)


def _fail(message: str, code: int) -> None:
    # Messages quote data (a line of an imported file, a provider's error body): made safe.
    from copal_tui.commands.output import echo

    echo(f"copal: error: {message}", err=True)
    sys.exit(code)


DOCS_EPILOG = (
    "\b\nRead more, in the repository's docs/ folder:\n"
    "  building-a-suite.md  stages, options, exit codes, world files\n"
    "  models.md            model names, the models file, HTTP targets, offline engine\n"
    "  compass.md           COMPASS suites     dialogues.md   CompliBench dialogues\n"
    "  labelling.md         the terminal app, label queues, campaigns, keys\n"
    "  reports.md           figures, JSON keys, cases, exports, interchange\n"
    "  security.md          copal serve, keys, untrusted text, files\n"
    "  speed.md             measured speed      ARCHITECTURE.md  the layers")


@click.group(cls=CopalGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=DOCS_EPILOG)
@click.version_option(__version__, "--version", prog_name="copal")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="SQLite database (default: $COPAL_DB, else a per-user data directory).",
)
@click.pass_context
def main(ctx: click.Context, db_path: Path | None) -> None:
    """copal: evaluate chatbots on composed organisational policies (COPAL)."""
    ctx.obj = {"db_path": db_path or default_db_path()}


# name -> (module, attribute). Subcommands are imported when named (click's lazy-group
# pattern): `copal tui` then loads the terminal app alone, not every command's dependencies.
# `copal --help` imports them all to print their one-line help.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("copal_tui.commands.store_cmds", "init"),
    "migrate": ("copal_tui.commands.store_cmds", "migrate"),
    "import": ("copal_tui.commands.store_cmds", "import_"),
    "schema": ("copal_tui.commands.store_cmds", "schema"),
    "stats": ("copal_tui.commands.store_cmds", "stats"),
    "backup": ("copal_tui.commands.store_cmds", "backup"),
    "report": ("copal_tui.commands.report_cmds", "report"),
    "export": ("copal_tui.commands.report_cmds", "export"),
    "run": ("copal_tui.commands.run_cmds", "run"),
    "runs": ("copal_tui.commands.run_cmds", "runs"),
    "demo": ("copal_tui.commands.demo_cmd", "demo"),
    "tui": ("copal_tui.commands.tui_cmds", "tui"),
    "label": ("copal_tui.commands.tui_cmds", "label"),
    "adjudicate": ("copal_tui.commands.tui_cmds", "adjudicate"),
    "serve": ("copal_tui.commands.tui_cmds", "serve"),
    "campaign": ("copal_tui.commands.campaign_cmds", "campaign"),
    "cases": ("copal_tui.commands.cases_cmds", "cases_command"),
}
