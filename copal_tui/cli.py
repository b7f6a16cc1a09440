"""`copal` command-line entry point: the group, the `--db` option and error handling.

Errors the user can act on are printed as one line on stderr with a non-zero exit, never a
traceback (set COPAL_DEBUG=1 to see one). Subcommands live in `copal_tui.commands`.

The group's options (`--db`) are also every command's: `copal --db X report` and
`copal report --db X` are the same, from one definition (`DB_OPTION`). A misspelled command
gets the closest command names, and a command's option typed before the command's name is told
where it goes. Every command is registered through `registered`, which also makes its fixed
choices spelled one way everywhere (`copal_tui.commands.choices`).
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
from copal_tui.commands.choices import EXIT_BAD_INPUT
from copal_tui.commands.registration import DB_OPTION, registered
from copal_tui.interchange.errors import ImportFailure
from store.db import StoreError, StoreRefused


def default_db_path() -> Path:
    env = os.environ.get("COPAL_DB")
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("copal", appauthor=False)) / "copal.db"


class CopalGroup(click.Group):
    """Turns known exceptions into one-line errors; loads subcommands when they are named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*LAZY_COMMANDS, *suite_commands(), *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = {**LAZY_COMMANDS, **suite_commands()}
        if cmd_name not in self.commands and cmd_name in lazy:
            module, attr = lazy[cmd_name]
            cmd = getattr(importlib.import_module(module), attr)
            if not isinstance(cmd, click.Command):
                raise TypeError(f"{module}.{attr} is not a click command")
            self.add_command(registered(cmd), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            # click suggests among the commands loaded so far; these are loaded when named.
            raise click.NoSuchCommand(name, possibilities=self.list_commands(ctx), ctx=ctx)
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for k, arg in enumerate(args, 1):
            # An argument that is not UTF-8 arrives holding lone surrogates (Python decodes it
            # with surrogateescape); no name, note or path copal stores can hold one.
            bad = next((c for c in arg if "\ud800" <= c <= "\udfff"), None)
            if bad is not None:
                _fail(f"argument {k} holds bytes that are not UTF-8 text (U+{ord(bad):04X}): "
                      "give names, values and paths as UTF-8", EXIT_BAD_INPUT)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            owner = self._owner(ctx, exc.option_name, args)
            if owner is None:
                raise
            raise click.NoSuchOption(
                exc.option_name, ctx=ctx,
                message=f"{exc.option_name} is an option of `copal {owner}`: put it after "
                        f"the command name (copal {owner} {exc.option_name} ...)") from None

    def _owner(self, ctx: click.Context, option: str, args: list[str]) -> str | None:
        """The command (or `group subcommand`) named in `args` that has `option`, if any."""
        names = [a for a in args if a in self.list_commands(ctx)]
        cmd = self.get_command(ctx, names[0]) if names else None
        path = names[:1]
        while cmd is not None and not any(option in (*p.opts, *p.secondary_opts)
                                          for p in cmd.params):
            subs = cmd.commands if isinstance(cmd, click.Group) else {}
            following = [a for a in args[args.index(path[-1]) + 1:] if a in subs]
            cmd = subs[following[0]] if following else None
            path += following[:1]
        return " ".join(path) if cmd is not None else None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a reader that has gone shows here, not in Python's exit
            return result
        except BrokenPipeError as exc:
            from copal_tui.commands.output import end_if_stdout_closed

            end_if_stdout_closed()  # `copal ... | head`: ends quietly, as Unix tools do
            _fail(f"{type(exc).__name__}: {exc}", 1)  # another pipe (a socket): an error
        except ImportFailure as exc:
            _fail(f"import failed, nothing was written: {exc}", EXIT_BAD_INPUT)
        except UnicodeEncodeError as exc:
            # A lone surrogate reaches text only from bytes that are not UTF-8 (an argument,
            # a file name or an environment value, decoded with surrogateescape): bad input.
            bad = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else ""
            where = ", ".join(f"U+{ord(c):04X}" for c in bad) or "a character"
            _fail(f"a value given holds {where}, which is not text (bytes that are not UTF-8 in "
                  "an argument, a file name or an environment variable): nothing was written",
                  EXIT_BAD_INPUT)
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
    "  traffic.md           auditing a deployed chatbot's traffic (Table 11, 12)\n"
    "  labelling.md         the terminal app, label queues, campaigns, keys\n"
    "  reports.md           figures, JSON keys, cases, exports, interchange\n"
    "  security.md          copal serve, keys, untrusted text, files\n"
    "  speed.md             measured speed      ARCHITECTURE.md  the layers")


@click.group(cls=CopalGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=DOCS_EPILOG)
@click.version_option(__version__, "--version", prog_name="copal")
@click.option("--db", "db_path", **DB_OPTION)
@click.pass_context
def main(ctx: click.Context, db_path: Path | None) -> None:
    """copal: evaluate chatbots on composed organisational policies (COPAL)."""
    ctx.obj = {"db_path": db_path or default_db_path()}


def suite_commands() -> dict[str, tuple[str, str]]:
    """The commands the registered suites add (each suite's descriptor names its own), read
    when asked, so a suite registered after this module loaded adds its commands too."""
    from copal_tui.domain.suites import SUITES

    found: dict[str, tuple[str, str]] = {}
    for suite in SUITES.values():
        for name, ref in suite.commands.items():
            module, _, attr = ref.partition(":")
            found[name] = (module, attr)
    return found


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
    "cases": ("copal_tui.commands.suite_cases", "cases"),
}
