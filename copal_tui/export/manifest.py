"""`manifest.json` of an export: what produced the files and how to re-check them.

Tool, schema and litellm versions; the models and prompt versions of the runs whose rows are
in scope (from each run's stored manifest); the label set and annotator ids; every exclusion
with its reason; the result of `PRAGMA quick_check`; and the sha256 of every file written.
Everything except `created_at` is a function of the database, so two exports of the same
database differ only there. API keys are never in a run manifest, so none can leak here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from copal_tui import __version__
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_sections import Exclusion
from store.db import Database, utcnow
from store.report import provenance
from store.report import reads as q
from store.schema_state import schema_version

MANIFEST_FORMAT = "copal-export-manifest/1"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _installed(dist: str) -> str | None:
    # The installed distribution's version, read from its metadata: litellm is never imported.
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def runs_summary(db: Database, worlds: list[str] | None) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    models: set[str] = set()
    prompts: dict[str, set[str]] = {}
    litellm: set[str] = set()
    for run_id, stage, status, raw in provenance.runs_involved(db, worlds):
        try:
            man = json.loads(raw or "{}")
        except json.JSONDecodeError:
            man = {}
        opts = man.get("options") or {}
        # The models a stage actually calls: targets answer, judges judge, the generator
        # does everything else (the options carry all three for every stage).
        if stage == "respond":
            used = sorted(opts.get("models") or [])
        elif stage == "judge":
            used = sorted(opts.get("judges") or [])
        else:
            used = [opts["generator"]] if opts.get("generator") else []
        models.update(used)
        versions = man.get("prompt_versions") or {}
        for task, sha in versions.items():
            prompts.setdefault(task, set()).add(sha)
        if man.get("litellm_version"):
            litellm.add(man["litellm_version"])
        runs.append({"id": run_id, "stage": stage, "status": status, "models": used,
                     "judge_modes": sorted(opts.get("modes") or []) if stage == "judge" else [],
                     "prompt_versions": dict(sorted(versions.items())),
                     "litellm_version": man.get("litellm_version")})
    return {
        "runs": runs,
        "models": sorted(models),
        "prompt_versions": {task: sorted(shas) for task, shas in sorted(prompts.items())},
        "litellm_versions_in_runs": sorted(litellm),
    }


def label_set(db: Database, worlds: list[str] | None) -> dict[str, Any]:
    """Who labelled what, with a digest of the labels so a changed label set is visible."""
    labels = q.current_labels(db, worlds)
    adjudications = q.current_adjudications(db, worlds)
    digest = hashlib.sha256()
    for kind, rows in (("label", labels), ("adjudication", adjudications)):
        for response, who, error in rows:
            digest.update(f"{kind}\t{response}\t{who}\t{error}\n".encode())
    return {
        "annotators": sorted({a for _r, a, _e in labels}),
        "adjudicators": sorted({a for _r, a, _e in adjudications}),
        "labels": len(labels),
        "adjudications": len(adjudications),
        "sha256": digest.hexdigest(),
    }


def build_manifest(db: Database, *, fmt: str, out: Path, files: Sequence[Path],
                   worlds: list[str] | None, report: ReportDocument | None,
                   exclusions: list[Exclusion],
                   content: Callable[[Path], Path] | None = None) -> dict[str, Any]:
    """The manifest of `files` (under `out`); `content` maps a file to where its bytes are now
    (the export's staged temporaries, renamed onto `files` after the manifest is written)."""
    where = content or (lambda p: p)
    labels = label_set(db, worlds)
    manifest: dict[str, Any] = {
        "manifest_format": MANIFEST_FORMAT,
        "created_at": utcnow(),
        "tool": {"name": "copal", "version": __version__},
        "schema_version": schema_version(db),
        "litellm_version": _installed("litellm"),
        "format": fmt,
        "quick_check": provenance.quick_check(db),
        "scope": report.scope.to_dict() if report else {"worlds": worlds or q.known_worlds(db)},
        **runs_summary(db, worlds),
        "label_set": {**labels, **({"reference_labels": report.reference_labels.to_dict()}
                                   if report else {})},
        "annotators": labels["annotators"],
        "exclusions": [e.to_dict() for e in exclusions],
        "files": [
            {"path": p.relative_to(out).as_posix(), "bytes": where(p).stat().st_size,
             "sha256": sha256_file(where(p))}
            for p in sorted(files, key=lambda p: p.relative_to(out).as_posix())
        ],
    }
    return manifest
