"""What `copal run` checks before a stage starts (so a refusal records no run): every option
typed on the command line is read by a stage of the run, and every world, dialogue domain and
dialogue id it names is stored, and together they select something to work on.

`READ_BY` says which stages read each of `copal run`'s options. An option typed for a run
whose stages would all ignore it (`copal run judge --model M`: the judge judges every stored
response in scope) is refused, naming the stages that read it; one set by an environment
variable (`COPAL_GENERATOR`) or left at its default is never refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import click
from click.core import ParameterSource

from copal_tui.commands.choices import BadValue, require_known
from copal_tui.pipeline import (
    COMPASS_STAGES,
    DIALOGUE_STAGES,
    GENERATOR_STAGES,
    REGISTRY,
    STAGES,
)
from store.db import Database

# The stages that work on imported traffic (their scope is sources, not worlds).
_TRAFFIC_STAGES = tuple(n for n, s in REGISTRY.items() if s.suite == "traffic")
# Worlds: no world is read by the stages that work on stored dialogues or traffic.
_WORLD_STAGES = tuple(s for s in STAGES if s not in DIALOGUE_STAGES + _TRAFFIC_STAGES)
# Read by every stage that calls a model: never refused.
_EVERY = tuple(STAGES)


@cache
def read_by() -> Mapping[str, tuple[str, ...]]:
    """Option (its parameter name) -> the stages that read it."""
    from copal_tui.pipeline.runner import BATCH_STAGES

    return {
        "worlds": _WORLD_STAGES, "all_worlds": _WORLD_STAGES,
        # The targets that answer, or whose answers are judged.
        "models": ("respond", "compass_respond", "judge", "compass_judge"),
        "judges": ("judge", "compass_judge", *DIALOGUE_STAGES, *_TRAFFIC_STAGES),
        "modes": ("judge",),
        # compass_verify verifies with the generator when no --verifier is given, and
        # compass_respond's few-shot variant has it write the reference answers.
        "generator": (*GENERATOR_STAGES, "compass_verify", "compass_respond"),
        "budget": ("select",), "pattern_mix": ("compose", "select"),
        "variants": ("generate", "ablate"),
        "concurrency": _EVERY, "models_file": _EVERY,
        "compass_variants": ("compass_respond",), "prefilter": ("compass_respond",),
        "per_policy": ("compass_generate",),
        "verifier": ("compass_generate", "compass_verify"),
        "matcher": ("compass_generate", "compass_verify"),
        "edge_writer": ("compass_generate",), "base_writer": ("compass_generate",),
        "denied_edge_writer": ("compass_generate",),
        "allowed_edge_policy": ("compass_generate",),
        "judge_variant": ("compass_judge",),
        "domains": DIALOGUE_STAGES, "dialogue_ids": DIALOGUE_STAGES,
        "attempts": ("dialogue_judge",), "binary": ("dialogue_judge",),
        "judge_prompt": ("dialogue_judge",),
        "per_dialogue": ("dialogue_variants",),
        "sources": _TRAFFIC_STAGES, "sampled": _TRAFFIC_STAGES,
        "batch": BATCH_STAGES,
    }


def refuse_unread(ctx: click.Context, stages: Sequence[str]) -> None:
    """BadValue for each option typed on the command line that no stage in `stages` reads."""
    table = read_by()
    unread = []
    for param in ctx.command.params:
        if param.name is None or ctx.get_parameter_source(param.name) \
                is not ParameterSource.COMMANDLINE:
            continue
        readers = table.get(param.name, _EVERY)
        if not set(readers) & set(stages):
            unread.append(f"{param.opts[-1]} is read by {_names(readers)}, not by "
                          f"{', '.join(stages)}")
    if unread:
        raise BadValue("; ".join(unread) + ": this run would ignore it (run those stages, or "
                       "leave the option out)")


def _names(stages: Sequence[str]) -> str:
    """Stages in words: "the COMPASS stages", "every stage but dialogue_judge", a list."""
    if tuple(stages) == COMPASS_STAGES:
        return "the COMPASS stages"
    others = [s for s in STAGES if s not in stages]
    if len(others) < len(stages):
        return f"every stage but {', '.join(others)}"
    return ", ".join(stages)


def check_scope(db: Database, stages: Sequence[str], worlds: Sequence[str],
                domains: Sequence[str], dialogue_ids: Sequence[str],
                models: Sequence[str] = (), sources: Sequence[str] = (),
                sampled: bool = False) -> None:
    """BadValue unless each world, domain, dialogue and traffic source named is stored and the
    run has something to work on: a world for a world stage, a dialogue for a dialogue stage,
    a pair with text (drawn into a traffic campaign, with `sampled`) for a traffic stage; and,
    for a run that judges without answering, each --model has stored responses to judge."""
    from copal_tui.services import launch

    answers = {"respond", "compass_respond"} & set(stages)
    judged = [s for s in ("judge", "compass_judge") if s in stages]
    if models and judged and not answers:
        known = sorted(set(launch.response_models(db)) | set(launch.compass_models(db)))
        require_known("--model", models, known, "a model with stored responses")

    if any(s in _WORLD_STAGES for s in stages):
        known = launch.worlds(db)
        hint = "`copal import PATH` adds worlds (`copal demo` builds an example store)"
        require_known("--world", worlds, known, "a stored world", none_yet=hint)
        if not known:
            raise BadValue(f"no world is stored, so {_names(stages)} has nothing to work on: "
                           f"{hint}")
    if any(s in DIALOGUE_STAGES for s in stages):
        hint = "`copal import --from complibench PATH` adds dialogues"
        known_domains = launch.dialogue_domains(db)
        if not known_domains:
            raise BadValue(f"no dialogue is stored, so {_names(stages)} has nothing to work "
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
    if any(s in _TRAFFIC_STAGES for s in stages):
        _check_traffic(db, stages, sources, sampled)


def _check_traffic(db: Database, stages: Sequence[str], sources: Sequence[str],
                   sampled: bool) -> None:
    from copal_tui.services import launch

    hint = "`copal traffic import PATH --source NAME` adds a log"
    known = launch.traffic_sources(db)
    if not known:
        raise BadValue(f"no traffic pair is stored, so {_names(stages)} has nothing to work "
                       f"on: {hint}")
    require_known("--source", sources, known, "the source of a stored traffic pair")
    if not launch.traffic_pairs(db, sources, sampled):
        of = f" of --source {', '.join(sources)}" if sources else ""
        raise BadValue(f"no traffic pair{of} is in a traffic campaign (`copal campaign create "
                       f"NAME --suite traffic` draws a sample)" if sampled else
                       f"every traffic pair{of} was purged: no text is left to label")
