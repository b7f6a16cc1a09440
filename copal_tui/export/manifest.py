"""`manifest.json` of an export: what produced the files and how to re-check them.

Tool, schema and litellm versions; the runs behind the rows in scope with the models they used
by role and their prompt versions (each run's stored manifest read as the report's provenance
reads it, `copal_tui.domain.run_manifest`: the two name the same runs and models); the label
set and annotator ids; every exclusion with its reason; the result of `PRAGMA quick_check`; and
the sha256 of every file written.
Everything except `created_at` is a function of the database, so two exports of the same
database differ only there. API keys are never in a run manifest, so none can leak here.

This module only lays the manifest out: `copal_tui.services.export` reads what it says about
the database (`StoreFacts`) and passes it in, so the export layer reads no store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from copal_tui import __version__
from copal_tui.domain.run_manifest import RunManifest, used_models
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_copal import Exclusion

MANIFEST_FORMAT = "copal-export-manifest/1"


@dataclass(frozen=True)
class Vote:
    """A current label or adjudication in scope: the response, who gave it, its error."""

    response_id: str
    who: str
    error: int


@dataclass(frozen=True)
class StoreFacts:
    """What the manifest states about the database, read in one snapshot."""

    schema_version: str | None
    quick_check: str
    runs: Sequence[RunManifest]  # the runs behind the rows in scope
    labels: Sequence[Vote]  # ordered by response, then annotator
    adjudications: Sequence[Vote]  # ordered by response
    known_worlds: Sequence[str]  # the scope of an export without a report


def sha256_file(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _installed(dist: str) -> str | None:
    # The installed distribution's version, read from its metadata: litellm is never imported.
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def runs_summary(runs_in_scope: Sequence[RunManifest]) -> dict[str, Any]:
    """The runs behind the rows in scope, each with the models it used by role (the role its
    stage calls models in, never every model its options carry), and the models, prompt
    versions and litellm versions over all of them."""
    runs: list[dict[str, Any]] = []
    prompts: dict[str, set[str]] = {}
    litellm: set[str] = set()
    for run in runs_in_scope:
        for task, sha in run.prompt_versions.items():
            prompts.setdefault(task, set()).add(sha)
        if run.litellm_version:
            litellm.add(run.litellm_version)
        runs.append({"id": run.id, "stage": run.stage, "status": run.status,
                     "models": run.models(), "models_by_role": run.models_by_role(),
                     "judge_modes": run.judge_modes(),
                     "prompt_versions": dict(sorted(run.prompt_versions.items())),
                     "litellm_version": run.litellm_version})
    by_role = used_models(runs_in_scope)
    return {
        "runs": runs,
        "models": sorted({m for models in by_role.values() for m in models}),
        "models_by_role": by_role,
        "prompt_versions": {task: sorted(shas) for task, shas in sorted(prompts.items())},
        "litellm_versions_in_runs": sorted(litellm),
    }


def label_set(labels: Sequence[Vote], adjudications: Sequence[Vote]) -> dict[str, Any]:
    """Who labelled what, with a digest of the labels so a changed label set is visible."""
    digest = hashlib.sha256()
    for kind, votes in (("label", labels), ("adjudication", adjudications)):
        for v in votes:
            digest.update(f"{kind}\t{v.response_id}\t{v.who}\t{v.error}\n".encode())
    return {
        "annotators": sorted({v.who for v in labels}),
        "adjudicators": sorted({v.who for v in adjudications}),
        "labels": len(labels),
        "adjudications": len(adjudications),
        "sha256": digest.hexdigest(),
    }


def build_manifest(facts: StoreFacts, *, created_at: str, fmt: str, out: Path,
                   files: Sequence[Path], report: ReportDocument | None,
                   exclusions: list[Exclusion], content: Callable[[Path], Path]) -> dict[str, Any]:
    """The manifest of `files` (under `out`) of an export of the database `facts` describe
    (the report's, or without one the whole store); `content` maps a file to where its bytes
    are now (the export's staged temporaries, renamed onto `files` after the manifest)."""
    labels = label_set(facts.labels, facts.adjudications)
    return {
        "manifest_format": MANIFEST_FORMAT,
        "created_at": created_at,
        "tool": {"name": "copal", "version": __version__},
        "schema_version": facts.schema_version,
        "litellm_version": _installed("litellm"),
        "format": fmt,
        "quick_check": facts.quick_check,
        "scope": report.scope.to_dict() if report else {"worlds": list(facts.known_worlds)},
        **runs_summary(facts.runs),
        "label_set": {**labels, **({"reference_labels": report.reference_labels.to_dict()}
                                   if report else {})},
        "annotators": labels["annotators"],
        "exclusions": [e.to_dict() for e in exclusions],
        "files": [
            {"path": p.relative_to(out).as_posix(), "bytes": content(p).stat().st_size,
             "sha256": sha256_file(content(p))}
            for p in sorted(files, key=lambda p: p.relative_to(out).as_posix())
        ],
    }
