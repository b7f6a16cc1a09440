"""Which models stand behind each figure of the report, and which of them are heuristics.

`build` reads the manifests of the runs that wrote rows in scope (typed, with the one rule for
which model a run used in which role: `copal_tui.domain.run_manifest`, which the export's
manifest reads too) and names, per suite, the generator (suite construction), verifier,
pre-filter, the judges, the targets, the roles the suite's descriptor reads from its runs'
options (`Suite.provenance_roles`) or its stored rows (`Report.provenance`), and what each
model was sent in each role (the manifests' `model_settings`). Any `offline/*` model among them
is the offline engine's deterministic heuristics, not a language model: the suite is marked
`heuristic`, with a caveat that every report form prints beside its figures. Rows imported from files carry no run: they are counted
as `imported`, so a figure over them does not look as if a known generator built it.

Reference bots (`offline/*` chatbots) are calibration, not targets: `real_targets` tells the
sections which models to pool.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from copal_tui.domain.run_manifest import ROLES, RunManifest
from copal_tui.domain.suites import SUITES, Suite, suite_of_stage
from copal_tui.metrics.document_suites import ModelSetting, OutputCount, SuiteProvenance

OFFLINE_PREFIX = "offline/"


def is_offline(model: str | None) -> bool:
    return bool(model) and str(model).startswith(OFFLINE_PREFIX)


def real_targets(models: Iterable[str]) -> list[str]:
    """The targets to pool: the real ones, or every one when all are reference bots (the
    offline demo), in which case the pooled figures carry the heuristic caveat anyway."""
    models = sorted(set(models))
    real = [m for m in models if not is_offline(m)]
    return real or models


def build(runs: Iterable[RunManifest],
          stored: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
          imported: dict[str, int] | None = None,
          primary_judge: str | None = None) -> dict[str, SuiteProvenance]:
    """Per suite, from the runs' manifests: the models by role, with those its stored rows
    name (`stored`, {suite: {role: models}}), and the roles its descriptor reads from its runs'
    options; what was imported without a run ({"<suite>:<what>": count}), the sections the
    suite stands behind, the offline models among them and the models' settings.
    `primary_judge`, the judge the report's own error figures use, comes first among the
    judges of the suite whose sections are the report's own."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    settings: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    chosen: dict[str, dict[str, set[str]]] = defaultdict(dict)
    for run in runs:
        spec = suite_of_stage(run.stage)
        if spec is None:
            continue
        suite = spec.name
        settings[suite].update(_settings(run.model_settings))
        for role, used in run.models_by_role().items():
            found[suite][role].update(used)
        for name, absent in spec.provenance_options.get(run.stage, {}).items():
            value = _option(run.options, name.split("."))
            chosen[suite].setdefault(name.rsplit(".", 1)[-1], set()).add(
                str(absent if value is None else value))
        for name, (role, absent) in spec.provenance_roles.get(run.stage, {}).items():
            *parent, option = name.split(".")
            recorded = _option(run.options, parent)
            if isinstance(recorded, Mapping):  # a run that recorded none of them names none
                found[suite][role].add(str(recorded.get(option) or absent))
    for suite, by_role in (stored or {}).items():
        for role, named in by_role.items():
            found[suite][role].update(named)
    out: dict[str, SuiteProvenance] = {}
    for suite, spec in SUITES.items():  # each suite's descriptor names its sections
        roles = found[suite]
        models: dict[str, Any] = {r: sorted(roles[r]) for r in ROLES}
        given: dict[str, Any] = {r: sorted(roles[r]) or None for r in _option_roles(spec)}
        if _owns_report_fields(spec):  # the primary judge first
            models["judge"].sort(key=lambda j: j != primary_judge)
        offline = sorted({m for r in ROLES for m in models[r] if is_offline(m)})
        # The caveat, the options' roles and the settings are absent, not null, when there are
        # none (no offline model, no run that recorded them).
        out[suite] = SuiteProvenance(
            **models, imported={k: v for k, v in (imported or {}).items()
                                if k.startswith(suite + ":") and v},
            sections=list(spec.report.sections if spec.report else ()), heuristic=offline,
            caveat=caveat(offline) if offline else None,
            **given,
            settings=[ModelSetting(**dict(zip(_SETTING_KEYS, row, strict=True)))
                      for row in sorted(settings[suite], key=_order)] or None,
            options={k: sorted(v) for k, v in sorted(chosen[suite].items())} or None)
    return out


def _option(options: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at `path` in a run's options (None where a part is missing)."""
    value: Any = options
    for part in path:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _option_roles(spec: Suite) -> set[str]:
    """The roles besides `ROLES` the suite's descriptor reads from its runs' options."""
    return {role for options in spec.provenance_roles.values()
            for role, _ in options.values()} - set(ROLES)


def _owns_report_fields(spec: Suite) -> bool:
    """Whether the suite's sections are the report's own fields (its descriptor builds none of
    its own), among them the primary judge's figures."""
    return spec.report is not None and spec.report.build is None


_SETTING_KEYS = tuple(ModelSetting.model_fields)


def _settings(recorded: Mapping[str, Mapping[str, Mapping[str, Any]]]
              ) -> Iterable[tuple[Any, ...]]:
    """The manifest's {model: {role: settings}} as rows of _SETTING_KEYS."""
    for name, roles in recorded.items():
        for role, sent in roles.items():
            yield (name, role, *(sent.get(k) for k in _SETTING_KEYS[2:]))


def _order(row: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple("" if v is None else str(v) for v in row)


def _setting_text(row: ModelSetting) -> str:
    def shown(value: float | int | None) -> str:
        return "provider default" if value is None else f"{value:g}" if isinstance(
            value, float) else str(value)

    text = (f"{row.model} ({row.role}): temperature {shown(row.temperature)}, "
            f"max_tokens {shown(row.max_tokens)}")
    if row.reasoning_effort:
        text += f", reasoning_effort {row.reasoning_effort}"
        if not row.reasoning_effort_sent:
            text += " (not sent: litellm does not list the model as taking it)"
    return text


def caveat(offline: Sequence[str]) -> str:
    return (f"HEURISTIC: rests on the offline engine ({', '.join(offline)}), deterministic "
            "heuristics, not a language model")


def line(entry: SuiteProvenance) -> str:
    """One line for a report form: the models behind the figures, marked where heuristic."""
    parts = []
    for role, names in [*((r, getattr(entry, r)) for r in ROLES),
                        ("allowed-edge writer", entry.edge_writer or [])]:
        if names:
            shown = ", ".join(f"{n} (heuristic)" if is_offline(n) else n for n in names)
            parts.append(f"{role}{'s' if len(names) > 1 else ''}: {shown}")
    parts += [f"{name.replace('_', ' ')}: {', '.join(values)}"
              for name, values in (entry.options or {}).items()]
    parts += [_setting_text(row) for row in entry.settings or []]
    parts += [f"imported without a run: {n} {what.split(':', 1)[1]}"
              for what, n in sorted(entry.imported.items())]
    parts += [f"removed by de-identification from {source}: "
              + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
              for source, kinds in (entry.removed or {}).items() if kinds]
    return "; ".join(parts) or "no run recorded"


_OUTCOMES = ("valid", "repaired", "failed")


def output_counts(runs: Iterable[RunManifest]) -> list[OutputCount]:
    """Structured answers per stage, model and task over the runs in scope: `valid` at the
    first answer, `repaired` (valid after the repair round), `failed` (no usable answer)."""
    acc: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for run in runs:
        for model, tasks in run.outputs.items():
            for task, tally in tasks.items():
                acc[(run.stage, model, task)].update(
                    {k: int(tally.get(k, 0)) for k in _OUTCOMES})
    return [OutputCount(stage=s, model=m, task=t, **{k: c[k] for k in _OUTCOMES})
            for (s, m, t), c in sorted(acc.items())]
