"""The COPAL suite's options of `copal run` (its descriptor's `run_options`): the judge's
settings, the selected items per world, the query variants per facet and the relation-pattern
mix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from copal_tui.commands.context import JUDGE_MODES
from copal_tui.commands.suite_run import Params, SuiteRun
from copal_tui.domain.selection import DEFAULT_MIX, PatternMix

if TYPE_CHECKING:
    from copal_tui.pipeline.base import Options


def _pattern_mix(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """--pattern-mix checked on the command line (bad input exits 2), kept as written."""
    try:
        PatternMix.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


def _read_by() -> Mapping[str, tuple[str, ...]]:
    return {"modes": ("judge",), "budget": ("select",), "pattern_mix": ("compose", "select"),
            "variants": ("generate", "ablate")}


def _apply(opts: Options, p: Params) -> None:
    opts.copal.modes = list(dict.fromkeys(p["modes"])) or ["contract"]
    opts.copal.budget = p["budget"]
    opts.copal.variants = p["variants"]
    opts.copal.pattern_mix = p["pattern_mix"]


RUN = SuiteRun(
    options=(
        click.option("--mode", "modes", multiple=True, type=click.Choice(JUDGE_MODES),
                     help="judge: the judge's setting (repeatable; default contract)."),
        click.option("--budget", default=30, show_default=True,
                     help="Selected items per world."),
        click.option("--pattern-mix", default=DEFAULT_MIX, show_default=True,
                     callback=_pattern_mix,
                     help="compose, select: how compositions and selected items are shared "
                          "among relation patterns: pool (each pattern's share of the world's "
                          "candidates, the paper's natural frequency), equal (no pattern "
                          "quota: even over pattern x facet), paper (Table 8: "
                          "40.4/19.9/19.4/20.2%), or weights such as "
                          "scope_restriction=2,prerequisite_gating=1."),
        click.option("--variants", default=2, show_default=True,
                     help="Query variants per facet."),
    ),
    read_by=_read_by, apply=_apply)
