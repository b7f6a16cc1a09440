"""How every `copal` command is registered on the group: with the group's `--db` option after
its name too (`copal --db X report` and `copal report --db X` are the same, from one definition,
`DB_OPTION`), and with its fixed choices spelled one way (`copal_tui.commands.choices`). The
group (`copal_tui.cli`) registers each command it loads; a command that hands its line to
another (`copal cases --suite NAME`) registers that one the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

# The group's `--db`, written once: the group takes it before the command name, and every
# command after its name (`registered`).
DB_OPTION: dict[str, Any] = {
    "type": click.Path(dir_okay=False, path_type=Path),
    "default": None,
    "help": "SQLite database (default: $COPAL_DB, else a per-user data directory).",
}


def _db_after_name(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    """`--db` given after the command name: the database of this invocation (as before it)."""
    if value is None:
        return
    before = ctx.find_root().params.get("db_path")
    if before is not None and Path(before) != value:
        from copal_tui.commands.choices import BadValue

        raise BadValue(f"--db given twice ({before} before the command name, {value} after "
                       "it): give one")
    ctx.ensure_object(dict)["db_path"] = value


def registered(cmd: click.Command) -> click.Command:
    """`cmd` (and each subcommand of a group) with the group's options after its name, and its
    choices spelled one way (copal_tui.commands.choices)."""
    from copal_tui.commands.choices import spelled

    if not any("--db" in p.opts for p in cmd.params):  # `copal demo` reads the group's itself
        cmd.params.append(click.Option(["--db", "db_path"], expose_value=False,
                                       callback=_db_after_name, **DB_OPTION))
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            registered(sub)
    return spelled(cmd)
