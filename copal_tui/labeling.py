"""Labelling operations shared by the label queue, the CLI and imports.

Each operation is one committed `BEGIN IMMEDIATE` transaction, so a label survives a killed
process or a dropped SSH session the moment the call returns. The error and direction stored
with a label are computed here from the marks (contract logic), never typed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from copal_tui.domain.contract import content_sha256, evaluate, item_kinds, unknown_ids
from store import labels as label_sql
from store import reads, writes
from store.db import Database, StoreError, write


@dataclass(frozen=True)
class Submitted:
    event_id: int
    error: int
    direction: str


def _content_and_ids(db: Database, response_id: str) -> tuple[dict, list[str], list[str]]:
    content = reads.response_content(db, response_id)
    if content is None:
        raise StoreError(f"unknown response {response_id!r}")
    req = [c["id"] for c in content["required"]]
    forb = [c["id"] for c in content["forbidden"]]
    return content, req, forb


def submit(
    db: Database,
    response_id: str,
    annotator: str,
    observed: Sequence[str],
    *,
    facet: str | None = None,
    note: str | None = None,
) -> Submitted:
    """Record an annotator's marks on a response as their current label."""
    with write(db):
        content, req, forb = _content_and_ids(db, response_id)
        bad = unknown_ids(req, forb, observed)
        if bad:
            raise StoreError(f"not contract items of this response: {', '.join(bad)}")
        verdict = evaluate(req, forb, observed, item_kinds(content["required"]))
        sha = content_sha256(
            content["query"], content["required"], content["forbidden"], content["response"] or ""
        )
        event_id = writes.append_label_event(
            db, response_id=response_id, annotator=annotator, action="label",
            observed=list(observed), error=verdict.error, direction=verdict.direction.value,
            facet=facet, note=note, content_sha256=sha,
        )
    return Submitted(event_id, verdict.error, verdict.direction.value)


def undo_last(db: Database, annotator: str) -> str | None:
    """Retract the annotator's most recent current label; returns its response id."""
    with write(db):
        last = label_sql.latest_current_label_of(db, annotator)
        if last is None:
            return None
        writes.append_label_event(
            db, response_id=last["response_id"], annotator=annotator, action="undo"
        )
        return str(last["response_id"])


def record(db: Database, response_id: str, annotator: str, action: str, *,
           note: str | None = None, flag: str | None = None) -> int:
    """Append a skip, flag or note event."""
    if action not in ("skip", "flag", "note"):
        raise ValueError(action)
    with write(db):
        if reads.response(db, response_id) is None:
            raise StoreError(f"unknown response {response_id!r}")
        return writes.append_label_event(
            db, response_id=response_id, annotator=annotator, action=action, note=note, flag=flag
        )


def stale_labels(db: Database) -> list[dict]:
    """Current labels whose query, contract or response changed since they were given."""
    out = []
    for row in label_sql.labels_with_content(db):
        now = content_sha256(row["query"], row["required"], row["forbidden"], row["response"] or "")
        if row["content_sha256"] and row["content_sha256"] != now:
            out.append({"label_event_id": row["id"], "response_id": row["response_id"],
                        "annotator": row["annotator"]})
    return out
