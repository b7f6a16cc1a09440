"""The dialogue suite's options of `copal run` (its descriptor's `run_options`): which stored
dialogues, the judge's attempts, verdict-only judging and prompt (dialogue_judge), and the
variant turns per dialogue (dialogue_variants); and the check that the dialogues named are
stored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import click

from copal_tui.commands.choices import BadValue, require_known
from copal_tui.commands.suite_run import Params, SuiteRun
from copal_tui.domain.suites import DIALOGUE
from copal_tui.pipeline.options import JUDGE_ATTEMPTS, JUDGE_PROMPTS

if TYPE_CHECKING:
    from copal_tui.pipeline.base import Options
    from store.db import Database

STAGES = DIALOGUE.stage_names()


def _read_by() -> Mapping[str, tuple[str, ...]]:
    return {"domains": STAGES, "dialogue_ids": STAGES, "attempts": ("dialogue_judge",),
            "binary": ("dialogue_judge",), "judge_prompt": ("dialogue_judge",),
            "per_dialogue": ("dialogue_variants",)}


def _apply(opts: Options, p: Params) -> None:
    d = opts.dialogue
    d.domains, d.dialogues = list(p["domains"]) or None, list(p["dialogue_ids"]) or None
    d.attempts, d.binary, d.judge_prompt = p["attempts"], p["binary"], p["judge_prompt"]
    d.per_dialogue = p["per_dialogue"]


def _check(db: Database, stages: Sequence[str], p: Params) -> None:
    """BadValue unless a dialogue is stored and each domain and dialogue named is."""
    if not set(STAGES) & set(stages):
        return
    from copal_tui.commands.run_checks import stage_words
    from copal_tui.services import launch

    domains, dialogue_ids = p["domains"], p["dialogue_ids"]
    hint = "`copal import --from complibench PATH` adds dialogues"
    known_domains = launch.dialogue_domains(db)
    if not known_domains:
        raise BadValue(f"no dialogue is stored, so {stage_words(stages)} has nothing to work "
                       f"on: {hint}")
    require_known("--domain", domains, known_domains, "the domain of a stored dialogue")
    if dialogue_ids:
        stored = launch.dialogue_ids(db, ids=dialogue_ids)
        if len(stored) < len(set(dialogue_ids)):  # every id read only to suggest some
            require_known("--dialogue", dialogue_ids, launch.dialogue_ids(db),
                          "a stored dialogue")
        if domains and not launch.dialogue_ids(db, domains, dialogue_ids):
            raise BadValue(f"--dialogue {', '.join(dialogue_ids)} is in none of the "
                           f"domains --domain {', '.join(domains)}: no dialogue selected")


RUN = SuiteRun(
    options=(
        click.option("--domain", "domains", multiple=True,
                     help="Dialogue domain for the dialogue stages (repeatable; default all)."),
        click.option("--dialogue", "dialogue_ids", multiple=True,
                     help="Dialogue id for the dialogue stages (repeatable; default all)."),
        click.option("--attempts", default=JUDGE_ATTEMPTS, show_default=True,
                     type=click.IntRange(1, 20),
                     help="dialogue_judge: independent judge attempts per dialogue "
                          "(CompliBench averages four; every attempt is scored as its own "
                          "file)."),
        click.option("--binary", is_flag=True,
                     help="dialogue_judge: ask for the violation verdict only (stored as "
                          "JUDGE+binary)."),
        click.option("--judge-prompt", type=click.Choice(JUDGE_PROMPTS), default="reference",
                     show_default=True,
                     help="dialogue_judge: CompliBench's own judge prompt (reference), or with "
                          "copal's two added rules and its prompt-injection paragraph (copal; "
                          "stored as JUDGE+copal-prompt)."),
        click.option("--per-dialogue", default=2, show_default=True,
                     type=click.IntRange(1, 100),
                     help="dialogue_variants: turns per dialogue to build a violation variant "
                          "for."),
    ),
    read_by=_read_by, apply=_apply, check=_check)
