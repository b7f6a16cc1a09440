"""A pipeline run's stored manifest, typed, and the one rule for which models a run used in
which role.

A stage writes its manifest into its run row as it works (`copal_tui.pipeline.base.StageRun.
manifest`: its options, prompt versions, litellm version, what each model was sent and the
structured-answer tallies). Everything that states where a figure comes from reads it through
`RunManifest`: the report's provenance (`copal_tui.metrics.provenance`) and the export's
manifest (`copal_tui.export.manifest`), from one store read of the runs behind the rows in
scope (`store.report.provenance.provenance_runs`), so the two always name the same runs and
the same models in the same roles.

The options carry every model for every stage (a judge run still records the generator it was
given); only the stage's role counts: targets answer, judges judge, the verifier verifies, and
the generator builds the suite; and where a COMPASS chatbot variant calls another model, its role
too (the pre-filter variant's pre-filter, the few-shot variant's reference writer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ROLES = ("generator", "verifier", "prefilter", "target", "judge")

# Stage -> (role, option names in the manifest that hold the models of that role: the first
# set one counts; a dotted name reads a suite's own options, the flat spelling is how runs
# recorded them before the options were split by suite).
_GENERATOR = ("generator", ("generator",))
STAGE_ROLES: dict[str, tuple[str, tuple[str, ...]]] = {
    **dict.fromkeys(("ground", "compose", "generate", "select", "project", "ablate",
                     "compass_generate", "dialogue_variants"), _GENERATOR),
    **dict.fromkeys(("respond", "compass_respond"), ("target", ("models",))),
    **dict.fromkeys(("judge", "compass_judge", "dialogue_judge", "traffic_judge"),
                    ("judge", ("judges",))),
    "compass_verify": ("verifier", ("compass.verifier", "verifier", "generator")),
}
# COMPASS chatbot variants that call a model besides the targets: (variant, role, options).
VARIANT_ROLES: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    "compass_respond": (("pre-filter", "prefilter", ("compass.prefilter", "prefilter")),
                        ("few-shot", "generator", ("generator",))),
}


@dataclass(frozen=True)
class RunManifest:
    """One run's row as provenance reads it: id, stage, status and its decoded manifest (an
    unreadable manifest reads as empty)."""

    id: str
    stage: str
    status: str
    options: Mapping[str, Any] = field(default_factory=dict)
    prompt_versions: Mapping[str, str] = field(default_factory=dict)
    litellm_version: str | None = None
    # {model: {role: {temperature, max_tokens, ...}}}: what each model was sent.
    model_settings: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    # {model: {task: {valid, repaired, failed}}}: the structured answers.
    outputs: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    @classmethod
    def read(cls, run_id: str, stage: str, status: str, manifest: str | None) -> RunManifest:
        """The run from its stored row (`manifest`: the JSON text)."""
        try:
            data = json.loads(manifest or "{}")
        except json.JSONDecodeError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        return cls(id=run_id, stage=stage, status=status,
                   options=_mapping(data.get("options")),
                   prompt_versions={str(k): str(v) for k, v in
                                    _mapping(data.get("prompt_versions")).items()},
                   litellm_version=_text(data.get("litellm_version")),
                   model_settings={str(m): {str(r): s for r, s in _mapping(roles).items()
                                            if isinstance(s, dict)}
                                   for m, roles in _mapping(data.get("model_settings")).items()},
                   outputs={str(m): {str(t): tally for t, tally in _mapping(tasks).items()
                                     if isinstance(tally, dict)}
                            for m, tasks in _mapping(data.get("outputs")).items()})

    @property
    def role(self) -> str | None:
        """The role this run's stage calls its models in (None: a stage no rule names)."""
        found = STAGE_ROLES.get(self.stage)
        return None if found is None else found[0]

    def models_by_role(self) -> dict[str, list[str]]:
        """The models this run called, by role: its stage's role, and the roles of the
        variants it ran that call another model (COMPASS's pre-filter and few-shot)."""
        found = STAGE_ROLES.get(self.stage)
        if found is None:
            return {}
        role, names = found
        out: dict[str, set[str]] = {role: set(self.option(*names))}
        variants = self.option("compass.variants")
        for variant, extra, options in VARIANT_ROLES.get(self.stage, ()):
            if variant in variants:
                out.setdefault(extra, set()).update(self.option(*options))
        return {r: sorted(models) for r, models in out.items() if models}

    def models(self) -> list[str]:
        """Every model this run called."""
        return sorted({m for names in self.models_by_role().values() for m in names})

    def judge_modes(self) -> list[str]:
        """A COPAL judge run's settings (contract, full_policy); [] for any other stage."""
        return sorted(self.option("copal.modes", "modes")) if self.stage == "judge" else []

    def option(self, *names: str) -> list[str]:
        """The first option set among `names`, as a list of strings."""
        for name in names:
            value: Any = self.options
            for part in name.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
            if value:
                return [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def used_models(runs: Sequence[RunManifest]) -> dict[str, list[str]]:
    """The models of `runs` by role (every role, sorted; empty where none)."""
    found: dict[str, set[str]] = {r: set() for r in ROLES}
    for run in runs:
        for role, models in run.models_by_role().items():
            found.setdefault(role, set()).update(models)
    return {role: sorted(models) for role, models in found.items()}
