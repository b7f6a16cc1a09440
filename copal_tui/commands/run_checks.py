"""What `copal run` checks before a stage starts (so a refusal records no run): every option
typed on the command line is read by a stage of the run, and every world it names is stored,
each suite's own options pass its check (`copal_tui.commands.suite_run`), and together they
select something to work on.

`read_by` says which stages read each of `copal run`'s options (the shared ones here, each
suite's from its part). An option typed for a run
whose stages would all ignore it (`copal run judge --model M`: the judge judges every stored
response in scope) is refused, naming the stages that read it; one set by an environment
variable (`COPAL_GENERATOR`) or left at its default is never refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import click
from click.core import ParameterSource

from copal_tui.commands.choices import BadValue, require_known
from copal_tui.domain.suites import SUITES
from copal_tui.pipeline import GENERATOR_STAGES, REGISTRY, STAGES
from store.db import Database


def _world_stages() -> tuple[str, ...]:
    """The stages that read --world: all but those working on stored dialogues or imported
    traffic (`pipeline.base.WORLDLESS`, imported only when a run is checked)."""
    from copal_tui.pipeline.base import WORLDLESS

    return tuple(s for s in STAGES if s not in WORLDLESS)
# Read by every stage that calls a model: never refused.
_EVERY = tuple(STAGES)


@cache
def read_by() -> Mapping[str, tuple[str, ...]]:
    """Option (its parameter name) -> the stages that read it: the options every stage
    shares, then each suite's (`copal_tui.commands.suite_run`)."""
    from copal_tui.commands.suite_run import suite_runs
    from copal_tui.pipeline.runner import BATCH_STAGES

    shared: dict[str, tuple[str, ...]] = {
        "worlds": _world_stages(), "all_worlds": _world_stages(),
        # The targets that answer, or whose answers are judged.
        "models": tuple(n for n, s in REGISTRY.items() if s.needs_models)
        + ("judge", "compass_judge"),
        "judges": tuple(n for n, s in REGISTRY.items() if s.needs_judges),
        # compass_verify verifies with the generator when no --verifier is given, and
        # compass_respond's few-shot variant has it write the reference answers.
        "generator": (*GENERATOR_STAGES, "compass_verify", "compass_respond"),
        "concurrency": _EVERY, "models_file": _EVERY,
        "batch": BATCH_STAGES,
    }
    for part in suite_runs():
        shared.update(part.read_by())
    return shared


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
            unread.append(f"{param.opts[-1]} is read by {stage_words(readers)}, not by "
                          f"{', '.join(stages)}")
    if unread:
        raise BadValue("; ".join(unread) + ": this run would ignore it (run those stages, or "
                       "leave the option out)")


def stage_words(stages: Sequence[str]) -> str:
    """Stages in words: "the COMPASS stages", "every stage but dialogue_judge", a list."""
    for spec in SUITES.values():
        if len(spec.stages) > 1 and tuple(stages) == spec.stage_names():
            return f"the {spec.short} stages"
    others = [s for s in STAGES if s not in stages]
    if len(others) < len(stages):
        return f"every stage but {', '.join(others)}"
    return ", ".join(stages)


def check_scope(db: Database, stages: Sequence[str], worlds: Sequence[str],
                models: Sequence[str], params: Mapping[str, Any]) -> None:
    """BadValue unless each world named is stored and a world stage has a world to work on;
    for a run that judges without answering, each --model has stored responses to judge; and
    each suite's own check of its options (`params`) passes."""
    from copal_tui.commands.suite_run import check_all
    from copal_tui.services import launch

    answers = {"respond", "compass_respond"} & set(stages)
    judged = [s for s in ("judge", "compass_judge") if s in stages]
    if models and judged and not answers:
        known = sorted(set(launch.response_models(db)) | set(launch.compass_models(db)))
        require_known("--model", models, known, "a model with stored responses")

    if any(s in _world_stages() for s in stages):
        known = launch.worlds(db)
        hint = "`copal import PATH` adds worlds (`copal demo` builds an example store)"
        require_known("--world", worlds, known, "a stored world", none_yet=hint)
        if not known:
            raise BadValue(f"no world is stored, so {stage_words(stages)} has nothing to work "
                           f"on: {hint}")
    check_all(db, stages, params)
