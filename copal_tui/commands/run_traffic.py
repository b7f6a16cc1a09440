"""The traffic suite's options of `copal run` (its descriptor's `run_options`): the sources
whose pairs the automatic labeller labels and whether only the sampled ones; and the check that
there are pairs to label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import click

from copal_tui.commands.choices import BadValue, require_known
from copal_tui.commands.suite_run import Params, SuiteRun
from copal_tui.domain.suites import TRAFFIC

if TYPE_CHECKING:
    from copal_tui.pipeline.base import Options
    from store.db import Database

STAGES = TRAFFIC.stage_names()


def _read_by() -> Mapping[str, tuple[str, ...]]:
    return {"sources": STAGES, "sampled": STAGES}


def _apply(opts: Options, p: Params) -> None:
    opts.traffic.sources = list(dict.fromkeys(p["sources"])) or None
    opts.traffic.sampled = p["sampled"]


def _check(db: Database, stages: Sequence[str], p: Params) -> None:
    """BadValue unless pairs are stored, each --source names one's source, and some pair (drawn
    into a campaign, with --sampled) still has its text."""
    if not set(STAGES) & set(stages):
        return
    from copal_tui.commands.run_checks import stage_words
    from copal_tui.services import launch

    sources, sampled = p["sources"], p["sampled"]
    hint = "`copal traffic import PATH --source NAME` adds a log"
    known = launch.traffic_sources(db)
    if not known:
        raise BadValue(f"no traffic pair is stored, so {stage_words(stages)} has nothing to "
                       f"work on: {hint}")
    require_known("--source", sources, known, "the source of a stored traffic pair")
    if not launch.traffic_pairs(db, sources, sampled):
        of = f" of --source {', '.join(sources)}" if sources else ""
        raise BadValue(f"no traffic pair{of} is in a traffic campaign (`copal campaign create "
                       f"NAME --suite traffic` draws a sample)" if sampled else
                       f"every traffic pair{of} was purged: no text is left to label")


RUN = SuiteRun(
    options=(
        click.option("--source", "sources", multiple=True,
                     help="traffic_judge: label only the pairs of this traffic source "
                          "(repeatable; default every source)."),
        click.option("--sampled", is_flag=True,
                     help="traffic_judge: label only the pairs drawn into a traffic campaign "
                          "(enough for the labeller's agreement with the humans; the corrected "
                          "estimate of the whole log needs every pair)."),
    ),
    read_by=_read_by, apply=_apply, check=_check)
