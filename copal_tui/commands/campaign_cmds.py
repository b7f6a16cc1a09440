"""`copal campaign create|list|show`: labelling campaigns, frozen samples of subjects that
annotators label in full with `copal label --campaign NAME`
(copal_tui.services.annotation.campaigns).

`create NAME` draws by filter (--suite, --world, --model, --pattern, --judge) or balanced over
the suite's strata (--balanced --size 200, like the paper's 200-pair human audit); `list`
shows the campaigns and their sizes; `show NAME` shows how it was drawn, its strata and each
annotator's progress, and for a traffic campaign the annotators' agreement on category and on
error. --json prints one JSON object instead of tables.
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
    from copal_tui.metrics.document_base import Metric
    from copal_tui.metrics.traffic_agreement import TrafficAgreement
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

    if suite == "dialogue" and (worlds or models or patterns):
        raise click.UsageError("--world, --model and --pattern apply to copal and compass; "
                               "judge mistakes are chosen with --judge")
    if suite != "dialogue" and judges:
        raise click.UsageError("--judge only applies to --suite dialogue")
    if suite == "traffic" and patterns:
        raise click.UsageError("--pattern applies to copal and compass; traffic pairs are "
                               "chosen by --world (the linked world) and --model (the source)")
    db = open_db(ctx, write=True)
    try:
        patterns = _check_filters(db, suite, worlds, models, patterns, judges)
        made = campaigns.create(db, name, suite,
                                Filters(worlds, models, patterns, judges, seed=seed),
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
    elif suite == "traffic":
        if models:  # a deployed chatbot's traffic is split by source, not by model
            require_known("--model", models, launch.traffic_sources(db),
                          "the source of an imported traffic log")
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
        agreement = None
        if report.campaign.suite == "traffic":
            from copal_tui.services.annotation import traffic

            agreement = traffic.agreement(db, name)
    except StoreError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        db.conn.close()
    if as_json:
        shown = asdict(report)
        if agreement is not None:
            shown["agreement"] = agreement.to_dict()
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


def _print_agreement(agreement: TrafficAgreement) -> None:
    """The annotators' agreement on a traffic campaign: Cohen's kappa (the mean of the pairwise
    kappas with more than two annotators) and Krippendorff's alpha, on category and on error,
    each undefined figure's reason under the table."""
    fields = (agreement.category, agreement.error)
    reasons = [f"{f.field} {what}: {m.reason}" for f in fields
               for what, m in (("kappa", f.kappa), ("alpha", f.alpha)) if m.value is None]
    note = f"{agreement.excluded_sensitive} pair(s) flagged sensitive left out"
    print_table(["field", "pairs", "annotators", "kappa", "alpha"],
                [[f.field, f.n_pairs, f.n_annotators, _figure(f.kappa), _figure(f.alpha)]
                 for f in fields], right=["pairs", "annotators", "kappa", "alpha"],
                title="Agreement (pairs with two labels or more)", note=note)
    for reason in reasons:
        echo(f"undefined: {reason}")


def _figure(metric: Metric) -> str:
    return "undefined" if metric.value is None else f"{metric.value:.3f}"


COMMANDS = [campaign]
