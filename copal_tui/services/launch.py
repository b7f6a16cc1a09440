"""What commands check against the store before they start: the names an id, name or filter
value may take (worlds, judges, target models, patterns, facets, dialogue domains and
ids, dialogue judges, traffic sources, campaigns). A command checks each value it is given
against these (`copal_tui.commands.choices.require_known`) before it reads, writes or takes
over the terminal, so a value that names nothing is one line on stderr, not an empty success,
an empty run or a broken screen. `filled` says how far the store has got, for a command that has
nothing to show to say what is missing. Each read is one read transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from copal_tui.services import reading
from store.db import Database


def worlds(db: Database) -> list[str]:
    """Every world id."""
    from store.report import reads

    with reading(db):
        return reads.known_worlds(db)


def judges(db: Database) -> list[str]:
    """Judges with COPAL judgments (in any mode, whether usable or failed): a skip scan of the
    (judge, mode) index, a seek per setting. Whether a judge has usable judgments in a mode and
    in the worlds asked is the report's own check (`copal_tui.metrics.options.pick`)."""
    from store.report import reads

    with reading(db):
        return sorted({judge for judge, _mode in reads.judge_settings(db)})


def patterns(db: Database, *, unmapped: bool = True) -> list[str]:
    """The relation patterns of the stored items, and (with `unmapped`) `unmapped`, the
    report's name for an item without one."""
    from store.browse import names
    from store.browse.cases import UNMAPPED

    with reading(db):
        return [*names.item_patterns(db), *([UNMAPPED] if unmapped else [])]


def facets(db: Database) -> list[str]:
    """The target facets of the stored items, and `unmapped`."""
    from store.browse import names
    from store.browse.cases import UNMAPPED

    with reading(db):
        return [*names.item_facets(db), UNMAPPED]


def response_models(db: Database) -> list[str]:
    """Target models with a COPAL response (a campaign's --model)."""
    from store.browse import names

    with reading(db):
        return names.response_models(db)


def case_models(db: Database, asked: Iterable[str] = ()) -> list[str]:
    """The report's target-model keys a --model may name: each model with a COPAL response,
    and MODEL#VARIANT for the non-base variants of the models `asked` names that way (read
    for those models only: a variant is not indexed)."""
    from store.browse import names

    with reading(db):
        found = names.response_models(db)
        bases = {a.partition("#")[0] for a in asked if "#" in a} & set(found)
        return found + [f"{m}#{v}" for m in sorted(bases)
                        for v in names.response_variants(db, m) if v != "base"]


def compass_models(db: Database) -> list[str]:
    """Target models with a COMPASS response."""
    from store.browse import names

    with reading(db):
        return names.compass_models(db)


def dialogue_domains(db: Database) -> list[str]:
    """The domains of the stored dialogues."""
    from store.browse import names

    with reading(db):
        return names.dialogue_domains(db)


def dialogue_ids(db: Database, domains: Sequence[str] | None = None,
                 ids: Sequence[str] | None = None) -> list[str]:
    """Ids of the stored dialogues (in these domains, of these ids, when given)."""
    from store.pipeline import dialogue

    with reading(db):
        return dialogue.select_dialogues(db, domains, ids)


def dialogue_judges(db: Database) -> list[str]:
    """Judges with at least one scored (not failed) dialogue attempt, by name."""
    from store.annotation.dialogue_reviews import judges

    with reading(db):
        return judges(db)


def traffic_sources(db: Database) -> list[str]:
    """The sources of the stored traffic pairs."""
    from store.artifacts import traffic

    with reading(db):
        return traffic.sources(db)


def traffic_pairs(db: Database, sources: Sequence[str] = (), sampled: bool = False) -> int:
    """Traffic pairs with text of these sources (all when none); with `sampled`, only those
    drawn into some traffic campaign."""
    from store.pipeline import traffic

    with reading(db):
        return traffic.count_in_scope(db, sources=sources, sampled=sampled)


def campaign_names(db: Database) -> list[str]:
    """The named (sampled) campaigns, oldest first."""
    from copal_tui.services.annotation import campaigns

    with reading(db):
        return [c.name for c in campaigns.listed(db)]


def campaign_suite(db: Database, name: str) -> str | None:
    """The suite of the sampled campaign `name` (what `copal campaign create` made), or None
    when there is no such campaign (a suite's default queue is not a campaign one names)."""
    from store.annotation import campaigns

    with reading(db):
        found = campaigns.get(db, name)
    if found is None or found.kind != campaigns.SAMPLE:
        return None
    return found.suite


@dataclass(frozen=True)
class Filled:
    """How far the store has got, step by step: what a command that has nothing to show says
    is missing."""

    worlds: bool
    items: bool
    responses: bool
    judgments: bool  # COPAL judgments
    dialogues: bool
    judged_dialogues: bool  # a scored dialogue attempt


def filled(db: Database) -> Filled:
    """Which steps the store has data of (one read transaction, a seek each)."""
    from store.annotation.dialogue_reviews import judges
    from store.browse import names

    with reading(db):
        return Filled(
            worlds=names.any_row(db, "worlds"), items=names.any_row(db, "items"),
            responses=names.any_row(db, "responses"),
            judgments=names.any_row(db, "judgments"),
            dialogues=names.any_row(db, "dialogues"), judged_dialogues=bool(judges(db)))
