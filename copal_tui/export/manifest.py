"""`manifest.json` of an export: what produced the files and how to re-check them.

Tool, schema and litellm versions; the models and prompt versions of the runs whose rows are
in scope (from each run's stored manifest); the label set and annotator ids; every exclusion
with its reason; the result of `PRAGMA quick_check`; and the sha256 of every file written.
Everything except `created_at` is a function of the database, so two exports of the same
database differ only there. API keys are never in a run manifest, so none can leak here.

This module only lays the manifest out: `copal_tui.services.export` reads what it says about
the database (`StoreFacts`) and passes it in, so the export layer reads no store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from copal_tui import __version__
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_copal import Exclusion

MANIFEST_FORMAT = "copal-export-manifest/1"


@dataclass(frozen=True)
class RunRow:
    """A run that wrote a row in scope, with its stored manifest (JSON text, None if absent)."""

    id: str
    stage: str
    status: str
    manifest: str | None


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
    runs: Sequence[RunRow]  # in the order the runs started
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


def runs_summary(runs_in_scope: Sequence[RunRow]) -> dict[str, Any]:
    """The runs behind the rows in scope, and the models, prompt versions and litellm versions
    their stored manifests name."""
    runs: list[dict[str, Any]] = []
    models: set[str] = set()
    prompts: dict[str, set[str]] = {}
    litellm: set[str] = set()
    for run in runs_in_scope:
        try:
            man = json.loads(run.manifest or "{}")
        except json.JSONDecodeError:
            man = {}
        opts = man.get("options") or {}
        # The models a stage actually calls: targets answer, judges judge, the generator
        # does everything else (the options carry all three for every stage).
        if run.stage == "respond":
            used = sorted(opts.get("models") or [])
        elif run.stage == "judge":
            used = sorted(opts.get("judges") or [])
        else:
            used = [opts["generator"]] if opts.get("generator") else []
        models.update(used)
        versions = man.get("prompt_versions") or {}
        for task, sha in versions.items():
            prompts.setdefault(task, set()).add(sha)
        if man.get("litellm_version"):
            litellm.add(man["litellm_version"])
        runs.append({"id": run.id, "stage": run.stage, "status": run.status, "models": used,
                     "judge_modes": sorted(opts.get("modes") or []) if run.stage == "judge" else [],
                     "prompt_versions": dict(sorted(versions.items())),
                     "litellm_version": man.get("litellm_version")})
    return {
        "runs": runs,
        "models": sorted(models),
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
