"""`copal cases`: the responses behind a figure of the report, one per line.

`copal cases --judge J --cell fp` lists the responses the report counts as that judge
setting's false positives (the judge says error, the human reference says no error), in as many
rows as the report's `fp`; `--disagree` is fp and fn; `--model`, `--pattern`, `--facet`,
`--world` and `--composed` narrow like the report's cells (`--composed`: the composed items the
error rates count). Without a cell, every judged response is listed with its reference, if
any. The rows come from `copal_tui.services.cases`, which applies the report's reference rule.
"""

from __future__ import annotations

from typing import Any

import click

from copal_tui.commands.choices import BadValue, NothingYet, require_known
from copal_tui.commands.context import JUDGE_MODES, missing_step, open_db
from copal_tui.commands.output import echo, print_table, write_document, write_json

CELL_CHOICES = ("tp", "fp", "fn", "tn")


@click.command("cases")
@click.option("--judge", default=None, metavar="JUDGE",
              help="Judge setting (default: the report's primary judge in --mode).")
@click.option("--mode", type=click.Choice(JUDGE_MODES), default="contract", show_default=True,
              help="Mode of the judge.")
@click.option("--cell", "cells", multiple=True, type=click.Choice(CELL_CHOICES),
              help="Only responses in this confusion cell, error positive (repeatable).")
@click.option("--disagree", is_flag=True,
              help="Only responses where the judge and the human reference disagree (fp, fn).")
@click.option("--model", "models", multiple=True, metavar="MODEL",
              help="Only this target model (MODEL#variant for a variant; repeatable).")
@click.option("--pattern", default=None, metavar="PATTERN",
              help="Only items of this relation pattern ('unmapped': none).")
@click.option("--facet", default=None, metavar="FACET",
              help="Only items of this facet ('unmapped': none).")
@click.option("--world", "worlds", multiple=True, metavar="ID",
              help="Only this world (repeatable; default: all).")
@click.option("--composed", is_flag=True,
              help="Only composed items (selected, top-level, COPAL method), as the error "
                   "rates count them.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "jsonl"]),
              default="table", show_default=True, help="How to print the rows.")
@click.pass_context
def cases_command(ctx: click.Context, judge: str | None, mode: str, cells: tuple[str, ...],
                  disagree: bool, models: tuple[str, ...], pattern: str | None,
                  facet: str | None, worlds: tuple[str, ...], composed: bool,
                  fmt: str) -> None:
    """The responses behind a report figure (a confusion cell, a model, a pattern)."""
    from copal_tui.metrics.options import ReportError
    from copal_tui.services import cases

    db = open_db(ctx)
    _check_names(db, worlds, models, pattern, facet, judge)
    try:
        setting = cases.pick_setting(db, judge, mode, worlds)
    except ReportError as exc:  # no usable judgments by the judge in --mode or --world
        raise BadValue(f"--judge {judge} --mode {mode}: {exc}") from None
    if setting is None:
        from copal_tui.services.launch import filled

        raise NothingYet(missing_step(filled(db)) or "no usable judgments: every judgment "
                         "failed (`copal runs` shows why; a re-run of judge retries them)")
    chosen = tuple(cells)
    if disagree:
        if chosen and not set(chosen) & set(cases.DISAGREE):
            raise BadValue(f"--cell {' '.join(chosen)} with --disagree (fp, fn) selects no "
                           "response: give one of them")
        chosen = cases.narrow(chosen, cases.DISAGREE)
    spec = cases.CaseSpec(judge=setting[0], mode=setting[1], worlds=tuple(worlds),
                          models=tuple(models), pattern=pattern, facet=facet,
                          composed=composed, cells=chosen)
    found = cases.find(db, spec)
    _print(found, fmt)
    tally = cases.counts(found)
    echo(f"{len(found)} response(s) of {setting[0]}@{setting[1]}"
         + (f" in {', '.join(chosen)}" if chosen else "")
         + f"; cells {' '.join(f'{k} {v}' for k, v in tally.items())} (positive: error)",
         err=True)


def _check_names(db: Any, worlds: tuple[str, ...], models: tuple[str, ...],
                 pattern: str | None, facet: str | None, judge: str | None) -> None:
    """Each value given names something stored (else exit 2 with the closest names)."""
    from copal_tui.services import launch

    if worlds:
        require_known("--world", worlds, launch.worlds(db), "a stored world")
    if models:
        require_known("--model", models, launch.case_models(db, models),
                      "a target model with a response")
    if pattern is not None:
        require_known("--pattern", [pattern], launch.patterns(db), "the relation pattern of an "
                      "item")
    if facet is not None:
        require_known("--facet", [facet], launch.facets(db), "the target facet of an item")
    if judge is not None:
        require_known("--judge", [judge], launch.judges(db), "a judge with judgments",
                      none_yet="`copal run judge --judge MODEL` judges the responses")


def _print(found: list[Any], fmt: str) -> None:
    from copal_tui.export.traceability import cases_csv, cases_jsonl

    if fmt == "csv":
        write_document(cases_csv(found))
    elif fmt == "jsonl":
        write_json(cases_jsonl(found))
    else:
        print_table(["response", "item", "model", "judge", "reference", "formed by", "cell"],
                    [[c.response_id, c.item_id, c.model, str(c.judge_error),
                      "-" if c.reference is None else str(c.reference), c.reference_source,
                      c.cell or "-"] for c in found])


COMMANDS = [cases_command]
