"""`copal campaign create|list|show`: labelling campaigns, frozen samples of subjects that
annotators label in full with `copal label --campaign NAME`
(copal_tui.services.annotation.campaigns).

`create NAME` draws by filter (--suite, --world, --model, --pattern, --judge) or balanced over
the suite's strata (--balanced --size 200, like the paper's 200-pair human audit); `list`
shows the campaigns and their sizes; `show NAME` shows how it was drawn, its strata and each
annotator's progress. --json prints one JSON object instead of tables.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from copal_tui.commands.choices import require_known
from copal_tui.commands.context import SuiteChoice, open_db
from copal_tui.commands.output import echo, print_table, write_json

if TYPE_CHECKING:
    from store.db import Database


@click.group()
def campaign() -> None:
    """Labelling campaigns: frozen samples of subjects to label in full."""


@campaign.command()
@click.argument("name")
@click.option("--suite", type=SuiteChoice(), default="copal", show_default=True,
              help="What the campaign labels: COPAL responses, COMPASS responses or judge "
                   "mistakes on dialogue turns.")
@click.option("--world", "worlds", multiple=True, metavar="ID",
              help="Only responses of this world (repeatable; copal and compass).")
@click.option("--model", "models", multiple=True, metavar="MODEL",
              help="Only responses of this target model (repeatable; copal and compass).")
@click.option("--pattern", "patterns", multiple=True, metavar="PATTERN",
              help="Only this composition pattern (copal) or query type (compass; "
                   "repeatable).")
@click.option("--judge", "judges", multiple=True, metavar="JUDGE",
              help="Only this judge's mistakes (repeatable; dialogue).")
@click.option("--balanced", is_flag=True,
              help="Round robin over the suite's strata (pattern x model, query type x "
                   "model, judge x kind of mistake) instead of the queue order.")
@click.option("--size", type=click.IntRange(min=1), default=None,
              help="Take this many subjects (default: every match).")
@click.option("--json", "as_json", is_flag=True, help="Print the campaign as JSON.")
@click.pass_context
def create(ctx: click.Context, name: str, suite: str, worlds: tuple[str, ...],
           models: tuple[str, ...], patterns: tuple[str, ...], judges: tuple[str, ...],
           balanced: bool, size: int | None, as_json: bool) -> None:
    """Draw and freeze a campaign NAME."""
    from copal_tui.services.annotation import campaigns
    from copal_tui.services.annotation.suites import Filters
    from store.db import StoreError

    if suite == "dialogue" and (worlds or models or patterns):
        raise click.UsageError("--world, --model and --pattern apply to copal and compass; "
                               "judge mistakes are chosen with --judge")
    if suite != "dialogue" and judges:
        raise click.UsageError("--judge only applies to --suite dialogue")
    db = open_db(ctx, write=True)
    try:
        patterns = _check_filters(db, suite, worlds, models, patterns, judges)
        made = campaigns.create(db, name, suite, Filters(worlds, models, patterns, judges),
                                balanced=balanced, size=size)
    except StoreError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        db.conn.close()
    if as_json:
        write_json(json.dumps(asdict(made), indent=2) + "\n")
        return
    echo(f"campaign {made.name}: {made.size} {suite} subjects frozen "
         f"(of {made.spec.get('matched')} matching); label them with "
         f"`copal label --campaign {made.name}`")


def _check_filters(db: Database, suite: str, worlds: tuple[str, ...], models: tuple[str, ...],
                   patterns: tuple[str, ...], judges: tuple[str, ...]) -> tuple[str, ...]:
    """Each filter value names something of the suite that is stored (else exit 2 with the
    closest names); returns the patterns, a COMPASS query type as stored (`allowed-edge` is
    `allowed_edge`)."""
    from copal_tui.domain.compass import QUERY_TYPES
    from copal_tui.domain.spelling import canonical
    from copal_tui.services import launch

    if worlds:
        require_known("--world", worlds, launch.worlds(db), "a stored world")
    if suite == "compass":
        patterns = tuple(canonical(p, QUERY_TYPES) or p for p in patterns)
        require_known("--pattern", patterns, QUERY_TYPES, "a COMPASS query type")
        if models:
            require_known("--model", models, launch.compass_models(db),
                          "a target model with a COMPASS response")
    elif suite == "dialogue":
        require_known("--judge", judges, launch.dialogue_judges(db),
                      "a judge with scored dialogue attempts")
    else:
        if patterns:
            require_known("--pattern", patterns, launch.patterns(db, unmapped=False),
                          "the relation pattern of an item")
        if models:
            require_known("--model", models, launch.response_models(db),
                          "a target model with a response")
    return patterns


@campaign.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array.")
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> None:
    """The campaigns, oldest first."""
    from copal_tui.services.annotation import campaigns

    db = open_db(ctx)
    try:
        found = campaigns.listed(db)
    finally:
        db.conn.close()
    if as_json:
        write_json(json.dumps([asdict(c) for c in found], indent=2) + "\n")
        return
    if not found:
        echo("no campaigns yet (`copal campaign create NAME`)")
        return
    print_table(["name", "suite", "size", "balanced", "created"],
                [[c.name, c.suite, c.size, "yes" if c.spec.get("balanced") else "no",
                  c.created_at] for c in found], right=["size"])


@campaign.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """How campaign NAME was drawn, its strata and each annotator's progress."""
    from copal_tui.services.annotation import campaigns
    from copal_tui.services.launch import campaign_names
    from store.db import StoreError

    db = open_db(ctx)
    try:
        require_known("NAME", [name], campaign_names(db), "a campaign",
                      none_yet="`copal campaign create NAME` draws one")
        report = campaigns.report(db, name)
    except StoreError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        db.conn.close()
    if as_json:
        write_json(json.dumps(asdict(report), indent=2) + "\n")
        return
    c = report.campaign
    echo(f"campaign {c.name}: {c.size} {c.suite} subjects, created {c.created_at}")
    if c.kind == "sample":
        drawn = ", ".join(f"{k} {v}" for k, v in sorted(c.spec.items()) if k != "matched")
        echo(f"drawn from {c.spec.get('matched')} matching ({drawn})")
    else:
        echo(f"the default {c.suite} queue: each annotator labels the part of it there was "
             "when they started (`copal label --refresh` takes in the rest)")
    if report.annotators:
        print_table(["annotator", "labelled", "skipped", "progress"],
                    [[a.annotator, a.labelled, a.skipped, f"{a.labelled}/{a.total}"]
                     for a in report.annotators], right=["labelled", "skipped"],
                    title="Progress")
    else:
        echo("nobody has labelled any of it yet")
    print_table(["stratum", "subjects"], [[k, v] for k, v in report.strata.items()],
                right=["subjects"], title="Strata")


COMMANDS = [campaign]
