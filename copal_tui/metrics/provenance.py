"""Which models stand behind each figure of the report, and which of them are heuristics.

A figure is only as good as the models that built the suite it counts and judged the answers.
This module reads the manifests of the runs that wrote rows in scope and names, per group of
report sections, the generator (suite construction), verifier and pre-filter (COMPASS), the
judges and the targets, and for COMPASS which allowed-edge writer built the suite (`edge_writer`,
from the compass_generate runs' options; a run recorded before the option existed wrote
`variants`). Any `offline/*` model among them is the offline engine's deterministic
heuristics, not a language model: the group is marked `heuristic` with a caveat that every
report form prints beside the figures. What each model was sent in each role (temperature,
max_tokens, the reasoning effort asked for and whether it was sent), from the manifests'
`model_settings`, is listed as `settings`. Rows imported from files carry no run: they are
counted as `imported`, so a figure over them does not look as if a known generator built it.

Reference bots (`offline/*` chatbots) are calibration, not targets: `real_targets` tells the
sections which models to pool.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from copal_tui.domain.suites import SUITES, suite_of_stage
from copal_tui.metrics.document_suites import ModelSetting, OutputCount, SuiteProvenance

OFFLINE_PREFIX = "offline/"

# Stage -> (role, option names in the run's manifest that hold the models of that role).
_ROLES: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "ground": [("generator", ("generator",))],
    "compose": [("generator", ("generator",))],
    "generate": [("generator", ("generator",))],
    "select": [("generator", ("generator",))],
    "project": [("generator", ("generator",))],
    "ablate": [("generator", ("generator",))],
    "respond": [("target", ("models",))],
    "judge": [("judge", ("judges",))],
    "compass_generate": [("generator", ("generator",))],
    "compass_verify": [("verifier", ("compass.verifier", "verifier", "generator"))],
    "compass_respond": [("target", ("models",))],
    "compass_judge": [("judge", ("judges",))],
    "dialogue_variants": [("generator", ("generator",))],
    "dialogue_judge": [("judge", ("judges",))],
}
ROLES = ("generator", "verifier", "prefilter", "target", "judge")


def is_offline(model: str | None) -> bool:
    return bool(model) and str(model).startswith(OFFLINE_PREFIX)


def real_targets(models: Iterable[str]) -> list[str]:
    """The targets to pool: the real ones, or every one when all are reference bots (the
    offline demo), in which case the pooled figures carry the heuristic caveat anyway."""
    models = sorted(set(models))
    real = [m for m in models if not is_offline(m)]
    return real or models


def _values(options: dict[str, Any], names: Sequence[str]) -> list[str]:
    """The first option set among `names` (a dotted name reads a suite's own options; the
    flat spelling is how runs recorded them before the options were split by suite)."""
    for name in names:
        value: Any = options
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value:
            return [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return []


def build(runs: Iterable[tuple[str, str]], prefilters: Iterable[str] = (),
          imported: dict[str, int] | None = None,
          primary_judge: str | None = None) -> dict[str, SuiteProvenance]:
    """Per suite: the models by role, what was imported without a run, the sections the suite
    stands behind, the offline models among them (with the caveat when there are any), the
    allowed-edge writers (COMPASS) and the models' settings, from (stage, manifest JSON)
    pairs.

    `primary_judge` (the COPAL judge the error figures use) is named first among the judges.
    """
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    settings: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    for stage, manifest in runs:
        spec = suite_of_stage(stage)
        if spec is None:
            continue
        suite = spec.name
        try:
            data = json.loads(manifest or "{}") or {}
        except json.JSONDecodeError:
            data = {}
        options = data.get("options") or {}
        settings[suite].update(_settings(data.get("model_settings")))
        for role, names in _ROLES[stage]:
            found[suite][role].update(_values(options, names))
        if stage == "compass_generate" and isinstance(options.get("compass"), dict):
            found[suite]["edge_writer"].add(str(options["compass"].get("edge_writer")
                                                or "variants"))
    for name in prefilters:
        found["compass"]["prefilter"].add(name)
    out: dict[str, SuiteProvenance] = {}
    for suite, spec in SUITES.items():  # each suite's descriptor names its sections
        roles = found.get(suite, {})
        models = {r: sorted(roles.get(r, ())) for r in ROLES}
        if suite == "copal" and primary_judge and primary_judge in models["judge"]:
            models["judge"] = [primary_judge] + [j for j in models["judge"]
                                                 if j != primary_judge]
        offline = sorted({m for r in ROLES for m in models[r] if is_offline(m)})
        out[suite] = SuiteProvenance(
            generator=models["generator"], verifier=models["verifier"],
            prefilter=models["prefilter"], target=models["target"], judge=models["judge"],
            imported={k: v for k, v in (imported or {}).items()
                      if k.startswith(suite + ":") and v},
            sections=list(spec.report_sections), heuristic=offline,
            # absent, not null, when no figure rests on the offline engine
            caveat=caveat(offline) if offline else None,
            # absent when no compass_generate run built the suite
            edge_writer=sorted(roles["edge_writer"]) if roles.get("edge_writer") else None,
            # absent when no run in scope recorded them
            settings=[ModelSetting(**dict(zip(_SETTING_KEYS, row, strict=True)))
                      for row in sorted(settings[suite], key=_order)]
            if settings.get(suite) else None)
    return out


_SETTING_KEYS = ("model", "role", "litellm_model", "temperature", "max_tokens",
                 "reasoning_effort", "reasoning_effort_sent")


def _settings(recorded: Any) -> Iterable[tuple[Any, ...]]:
    """The manifest's {model: {role: settings}} as rows of _SETTING_KEYS."""
    if not isinstance(recorded, dict):
        return
    for name, roles in recorded.items():
        for role, sent in (roles or {}).items():
            if isinstance(sent, dict):
                yield (str(name), str(role), *(sent.get(k) for k in _SETTING_KEYS[2:]))


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
    for role in ROLES:
        names: list[str] = getattr(entry, role)
        if names:
            shown = ", ".join(f"{n} (heuristic)" if is_offline(n) else n for n in names)
            parts.append(f"{role}{'s' if len(names) > 1 else ''}: {shown}")
    writers = entry.edge_writer or []
    if writers:
        parts.append(f"allowed-edge writer{'s' if len(writers) > 1 else ''}: "
                     + ", ".join(writers))
    for row in entry.settings or []:
        parts.append(_setting_text(row))
    for what, n in sorted(entry.imported.items()):
        parts.append(f"imported without a run: {n} {what.split(':', 1)[1]}")
    return "; ".join(parts) or "no run recorded"


def output_counts(runs: Iterable[tuple[str, str]]) -> list[OutputCount]:
    """Structured answers per stage, model and task over the runs in scope: `valid` at the
    first answer, `repaired` (valid after the repair round), `failed` (no usable answer)."""
    acc: dict[tuple[str, str, str], dict[str, int]] = {}
    for stage, manifest in runs:
        try:
            outputs = (json.loads(manifest or "{}") or {}).get("outputs") or {}
        except json.JSONDecodeError:
            continue
        for model, tasks in outputs.items():
            for task, tally in tasks.items():
                row = acc.setdefault((stage, model, task), {"valid": 0, "repaired": 0,
                                                            "failed": 0})
                for k in row:
                    row[k] += int(tally.get(k, 0))
    return [OutputCount(stage=s, model=m, task=t, valid=c["valid"], repaired=c["repaired"],
                        failed=c["failed"]) for (s, m, t), c in sorted(acc.items())]
