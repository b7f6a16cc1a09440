"""`copal campaign create|list|show`: labelling campaigns, frozen samples of subjects that
annotators label in full with `copal label --campaign NAME`
(copal_tui.services.annotation.campaigns).

`create NAME` draws by filter (--suite, --world, --model, --pattern, --judge) or balanced over
the suite's strata (--balanced --size 200, like the paper's 200-pair human audit); `list`
shows the campaigns and their sizes; `show NAME` shows how it was drawn, its strata and each
annotator's progress, and the annotators' agreement where the suite measures it. --json prints
one JSON object instead of tables.

Which filters a suite takes, what each value is and the names it may take are the suite's
(`Rules.draws_by`, copal_tui.services.annotation.suites): a filter the suite does not draw by
is refused, naming those it does (copal_tui.commands.suite_filters).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from copal_tui.commands.choices import require_known
from copal_tui.commands.context import SuiteChoice, open_db
from copal_tui.commands.output import echo, print_table, write_json
from copal_tui.commands.suite_filters import check_filters, refuse_filters

if TYPE_CHECKING:
    from copal_tui.metrics.document_base import Metric
    from copal_tui.services.annotation.suites import Agreement
    from store.db import Database

@click.group()
def campaign() -> None:
    """Labelling campaigns: frozen samples of subjects to label in full."""


@campaign.command()
@click.argument("name")
@click.option("--suite", type=SuiteChoice(), default="copal", show_default=True,
              help="What the campaign labels: COPAL responses, COMPASS responses, judge "
                   "mistakes on dialogue turns or pairs of a deployed chatbot's traffic.")
@click.option("--world", "worlds", multiple=True, metavar="ID",
              help="Only responses of this world (repeatable; copal and compass), or pairs "
                   "of logs linked to it (traffic).")
@click.option("--model", "models", multiple=True, metavar="MODEL",
              help="Only responses of this target model (repeatable; copal and compass), or "
                   "pairs of this source (traffic).")
@click.option("--pattern", "patterns", multiple=True, metavar="PATTERN",
              help="Only this composition pattern (copal) or query type (compass; "
                   "repeatable).")
@click.option("--judge", "judges", multiple=True, metavar="JUDGE",
              help="Only this judge's mistakes (repeatable; dialogue).")
@click.option("--balanced", is_flag=True,
              help="Round robin over the suite's strata (pattern x model, query type x "
                   "model, judge x kind of mistake) instead of the queue order; traffic: each "
                   "source's share of the sample in proportion to its pairs.")
@click.option("--size", type=click.IntRange(min=1), default=None,
              help="Take this many subjects (default: every match).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="The random sample's seed (traffic: the same seed draws the same pairs).")
@click.option("--json", "as_json", is_flag=True, help="Print the campaign as JSON.")
@click.pass_context
def create(ctx: click.Context, name: str, suite: str, worlds: tuple[str, ...],
           models: tuple[str, ...], patterns: tuple[str, ...], judges: tuple[str, ...],
           balanced: bool, size: int | None, seed: int, as_json: bool) -> None:
    """Draw and freeze a campaign NAME."""
    from copal_tui.services.annotation import campaigns
    from copal_tui.services.annotation.suites import Filters
    from store.db import StoreError

    given = {"worlds": worlds, "models": models, "patterns": patterns, "judges": judges}
    refuse_filters(suite, given)
    db = open_db(ctx, write=True)
    try:
        made = campaigns.create(db, name, suite,
                                Filters(**check_filters(db, suite, given), seed=seed),
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
    echo(precision_line(made.size))


# The rate the precision line is given at: about the COPAL paper's real-traffic error rate
# (174 of 1,000 pairs).
TYPICAL_RATE = 0.17


def precision_line(size: int) -> str:
    """What a sample of `size` can tell apart: the Wilson 95% interval's half-width of a rate
    near TYPICAL_RATE measured on it."""
    from copal_tui.metrics.intervals import half_width

    return (f"an error rate near {TYPICAL_RATE:.0%} measured on {size} subject(s) has a 95% "
            f"interval of about +/-{100 * half_width(size, TYPICAL_RATE):.1f} points (Wilson)")


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
        agreement = _agreement(db, report.campaign.suite, name)
    except StoreError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        db.conn.close()
    if as_json:
        shown = asdict(report)
        if agreement is not None:
            shown["agreement"] = agreement.figures.to_dict()
        write_json(json.dumps(shown, indent=2) + "\n")
        return
    c = report.campaign
    echo(f"campaign {c.name}: {c.size} {c.suite} subjects, created {c.created_at}")
    echo(precision_line(c.size))
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
    if agreement is not None:
        _print_agreement(agreement)


def _agreement(db: Database, suite: str, campaign: str) -> Agreement | None:
    """The annotators' agreement on the campaign, where its suite measures one (a campaign of
    a suite no longer registered has none)."""
    from copal_tui.domain.suites import SUITES
    from copal_tui.services.annotation.suites import rules

    return rules(suite).agreement(db, campaign) if suite in SUITES else None


def _print_agreement(agreement: Agreement) -> None:
    """The annotators' agreement, a row per field: Cohen's kappa (the mean of the pairwise
    kappas with more than two annotators) and Krippendorff's alpha, each undefined figure's
    reason under the table."""
    reasons = [f"{r.field} {what}: {m.reason}" for r in agreement.rows
               for what, m in (("kappa", r.kappa), ("alpha", r.alpha)) if m.value is None]
    unit = agreement.unit
    print_table(["field", unit, "annotators", "kappa", "alpha"],
                [[r.field, r.subjects, r.annotators, _figure(r.kappa), _figure(r.alpha)]
                 for r in agreement.rows], right=[unit, "annotators", "kappa", "alpha"],
                title=f"Agreement ({unit} with two labels or more)", note=agreement.note)
    for reason in reasons:
        echo(f"undefined: {reason}")


def _figure(metric: Metric) -> str:
    return "undefined" if metric.value is None else f"{metric.value:.3f}"


COMMANDS = [campaign]
