"""The checks every command makes of the values it is given, once for all commands.

- A fixed choice (a judge mode, a format, a suite, a stage, a COMPASS variant, an import
  source) is spelled by `copal_tui.domain.spelling`: `full-policy` and `full_policy` are the same
  choice everywhere. `spelled(command)` makes every `click.Choice` of a command (and of its
  subcommands) a `Spelled` one; `copal_tui.cli` calls it on each command it registers, so a new
  option is covered without a word of its own.
- A value that must name something stored (a world, a target model, a judge, a pattern, a facet,
  a dialogue domain or id, a campaign) is checked with `require_known` against the names the
  store holds (`copal_tui.services.launch`). One that names nothing is bad input: one line on
  stderr naming the option, the value and the closest names (difflib), exit 2, before anything
  is read, written or run.
- An option a command was given but cannot honour in that invocation is refused the same way
  (`BadValue`), never ignored.
- A command with nothing to show because the store lacks a step says so in one line, with the
  command that adds it (`NothingYet`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable
from typing import IO, Any

import click

from copal_tui.domain.spelling import canonical, spelling_key

# Bad input, for every command (copal_tui.cli exits with it too).
EXIT_BAD_INPUT = 2
# Names listed when none is close to what was typed (the rest are counted, not listed).
LISTED = 8


class BadValue(click.ClickException):
    """Bad input: one line on stderr (`copal: error: ...`, data made safe), exit 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file: IO[Any] | None = None) -> None:
        from copal_tui.commands.output import echo

        echo(f"copal: error: {self.format_message()}", err=True)


class NothingYet(click.ClickException):
    """The store lacks what a command would show: one line on stderr saying what is missing
    and the command that adds it, instead of empty tables. Exit 0, as `campaign list` and
    `runs` on an empty store: nothing was asked that the store could not answer."""

    exit_code = 0

    def show(self, file: IO[Any] | None = None) -> None:
        from copal_tui.commands.output import echo

        echo(f"copal: {self.format_message()}", err=True)


class Spelled(click.Choice):
    """A `click.Choice` matched by `copal_tui.domain.spelling`; the value kept is the choice as
    written in the list (as copal stores it), and help and errors show the choices that way."""

    def __init__(self, choices: Iterable[Any]) -> None:
        super().__init__(choices, case_sensitive=False)
        keys = [spelling_key(self._text(c)) for c in self.choices]
        if len(set(keys)) != len(keys):
            raise ValueError(f"choices {list(self.choices)} spell the same value twice")

    @staticmethod
    def _text(choice: object) -> str:
        return str(choice.value if isinstance(choice, enum.Enum) else choice)

    def normalize_choice(self, choice: object, ctx: click.Context | None) -> str:
        return spelling_key(self._text(choice))

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        shown = "|".join(self._text(c) for c in self.choices)
        required_argument = param.required and param.param_type_name == "argument"
        return f"{{{shown}}}" if required_argument else f"[{shown}]"

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        import difflib

        texts = [self._text(c) for c in self.choices]
        close = difflib.get_close_matches(spelling_key(str(value)),
                                          [spelling_key(t) for t in texts], n=1)
        hint = f" Did you mean {canonical(close[0], texts)!r}?" if close else ""
        return f"{value!r} is not one of {', '.join(map(repr, texts))}.{hint}"

    def shell_complete(self, ctx: click.Context, param: click.Parameter,
                       incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        key = spelling_key(incomplete)
        return [CompletionItem(t) for t in (self._text(c) for c in self.choices)
                if spelling_key(t).startswith(key)]


class Registered(Spelled):
    """A `Spelled` choice among names read when the option is parsed (`names()`), so what is
    registered after the command's module loaded (a suite, its sources) is a choice too."""

    def __init__(self, names: Callable[[], Iterable[str]]) -> None:
        self._names = names
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._names())

    @choices.setter
    def choices(self, _value: object) -> None:
        pass  # the registry is the list


def spelled(command: click.Command) -> click.Command:
    """`command` (and each subcommand of a group) with every plain `click.Choice` parameter
    made `Spelled`, in place; returns it."""
    for param in command.params:
        if isinstance(param.type, click.Choice) and not isinstance(param.type, Spelled):
            param.type = Spelled(param.type.choices)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            spelled(sub)
    return command


def require_known(option: str, values: Iterable[str], known: Collection[str], what: str,
                  *, none_yet: str = "") -> None:
    """BadValue unless every value of `option` is one of `known` (the names the store holds;
    `what` says what they are: "a stored world"): one line naming each value that names
    nothing and the closest names (or, none being close, some of the names; with none stored,
    `none_yet`: the command that adds some)."""
    missing = [v for v in dict.fromkeys(values) if v not in known]
    if missing:
        raise BadValue("; ".join(f"{option} {value}: not {what}{_hint(value, known, none_yet)}"
                                 for value in missing))


def _hint(value: str, known: Collection[str], none_yet: str) -> str:
    import difflib

    if not known:
        return f" (there is none yet{': ' + none_yet if none_yet else ''})"
    names = list(known)
    close = [k for k in names if spelling_key(k) == spelling_key(value)]
    close += [k for k in difflib.get_close_matches(value, names, n=3) if k not in close]
    if close:
        return f" (did you mean {' or '.join(close[:3])}?)"
    shown = sorted(names)[:LISTED]
    more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
    return f" (stored: {', '.join(shown)}{more})"
