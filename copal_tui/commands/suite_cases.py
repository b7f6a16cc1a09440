"""`copal cases [--suite NAME]`: the subjects behind a figure of the report, for any suite that
lists them. Each suite's descriptor names its own listing (`Suite.cases`, "module:attribute" of
a click command); `copal cases` is COPAL's (the default suite's) with a `--suite` option, and
`--suite NAME` hands the rest of the command line to NAME's listing: `copal cases --suite
traffic --category multi --erroneous yes`. `copal cases --suite NAME --help` shows NAME's
options.
"""

from __future__ import annotations

from typing import Any

import click

from copal_tui.commands.choices import BadValue
from copal_tui.commands.context import SuiteChoice
from copal_tui.commands.registration import registered
from copal_tui.domain.suites import SUITES, load

DEFAULT = "copal"  # the suite `--suite` defaults to, as everywhere


def with_cases() -> list[str]:
    """The suites with a listing, in registration order."""
    return [name for name, spec in SUITES.items() if spec.cases]


def listing(name: str) -> click.Command:
    """Suite `name`'s listing; BadValue naming the suites with one when it has none."""
    ref = SUITES[name].cases
    if ref is None:
        raise BadValue(f"--suite {name}: that suite lists no cases (--suite takes "
                       f"{' or '.join(with_cases())})")
    found = load(ref)
    if not isinstance(found, click.Command):
        raise TypeError(f"{ref} is not a click command")
    return found


def _suite_given(args: list[str]) -> tuple[str | None, list[str]]:
    """The suite named by --suite in `args` (None: not given) and the other arguments."""
    for k, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--suite" and k + 1 < len(args):
            return args[k + 1], args[:k] + args[k + 2:]
        if arg.startswith("--suite="):
            return arg.partition("=")[2], args[:k] + args[k + 1:]
    return None, args


class SuiteCases(click.Command):
    """The default suite's listing, whose context goes to another suite's listing when
    --suite names one."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        given, rest = _suite_given(list(args))
        if given is None:
            return super().make_context(info_name, args, parent, **extra)
        name = SuiteChoice().convert(given, self.params[0], parent)
        if name == DEFAULT:
            return super().make_context(info_name, args, parent, **extra)
        target = registered(listing(name))
        return target.make_context(f"{info_name} --suite {name}", rest, parent, **extra)


def _build() -> SuiteCases:
    own = listing(DEFAULT)
    others = [n for n in with_cases() if n != DEFAULT]
    suite = click.Option(["--suite"], type=SuiteChoice(), default=DEFAULT, show_default=True,
                         expose_value=False,
                         help=f"Whose cases: {DEFAULT}'s (these options) or "
                              f"{' or '.join(others)}'s (`copal cases --suite NAME --help` "
                              "lists its options).")
    return SuiteCases(name="cases", params=[suite, *own.params], callback=own.callback,
                      help=own.help, short_help=own.short_help)


cases = _build()
