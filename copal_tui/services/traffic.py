"""Importing a deployed chatbot's traffic log: read a pair, de-identify it, store it; nothing
else ever holds a raw text.

`import_log` streams the file (`copal_tui.interchange.traffic_log`), hands each pair's texts
(query, response and the earlier turns shown as its context) to one `Deidentifier`, and writes
only what comes back, in one transaction: a malformed record anywhere leaves the store as it
was, and the error names the file and the line (`ImportFailure`). What was removed is counted
by type, for the import and for each pair.

A pair read before, from this file or an earlier one, is a duplicate: counted, not stored. It
is recognised by an HMAC-SHA256 of the pair as read under the store's own random key
(`traffic.content_key`): two different customers' identical questions after de-identification
stay two pairs (the error rates count every interaction), while the stored value reveals
nothing of the text to anyone without the whole text. Pair ids are `tp-` and the first 16 hex
digits of that HMAC, so importing the same log again stores nothing new.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from copal_tui.domain.deid import Deidentifier, RedactionRules, capabilities
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.traffic_log import Fields, RawPair, detect, read_pairs
from store.artifacts import traffic
from store.db import Database, StoreError, write

# Pairs written per executemany (memory stays bounded whatever the log's size).
CHUNK = 2_000


@dataclass
class ImportSummary:
    """What one import read, kept and removed."""

    import_id: str
    source: str
    layout: str
    records: int = 0
    pairs: int = 0
    stored: int = 0
    duplicates: int = 0
    redactions: Counter[str] = field(default_factory=Counter)


Progress = Callable[[int, int], None]  # (lines read so far, lines in the file)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def count_lines(path: Path) -> int:
    """Lines in the file (the progress bar's total), at least 1."""
    lines = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
    return max(1, lines)


def import_log(db: Database, path: Path, *, source: str, world: str | None = None,
               layout: str = "auto", fields: Fields | None = None,
               rules: RedactionRules | None = None, phone_region: str | None = None,
               on_progress: Progress | None = None) -> ImportSummary:
    """De-identify and store every pair of the log at `path` (see the module docstring)."""
    source = source.strip()
    if not source:
        raise StoreError("a traffic import needs a source name (--source)")
    if world is not None and db.execute("SELECT 1 FROM worlds WHERE id = ?",
                                        (world,)).fetchone() is None:
        raise StoreError(f"no world {world!r} in the store")
    fields = fields or Fields()
    if layout == "auto":
        layout = detect(path, fields)
    deid = Deidentifier(rules, phone_region=phone_region)
    digest = file_sha256(path)
    summary = ImportSummary(import_id=f"ti-{digest[:12]}-{_sha(source)[:6]}", source=source,
                            layout=layout)
    size = count_lines(path)
    last_line = 0  # pairs come in file order: a new line is a new record
    batch: list[tuple[object, ...]] = []
    with write(db):
        if db.execute("SELECT 1 FROM traffic_imports WHERE id = ?",
                      (summary.import_id,)).fetchone() is not None:
            raise StoreError(f"{path.name} was imported already as source {source!r} "
                             f"({summary.import_id})")
        traffic.insert_import(
            db, id=summary.import_id, source=source, world_id=world, file_name=path.name,
            file_sha256=digest, layout=layout,
            options={"query_field": fields.query, "response_field": fields.response,
                     "messages_field": fields.messages},
            deidentifier={"removes": [c.type for c in capabilities(deid.rules).types],
                          "names_removed": bool(deid.rules.names),
                          "patterns": len(deid.rules.patterns), "names": len(deid.rules.names),
                          "phone_region": deid.rules.phone_region})
        key = traffic.content_key(db)
        for raw in read_pairs(path, layout, fields):
            if raw.line != last_line:
                last_line = raw.line
                summary.records += 1
            summary.pairs += 1
            batch.append(_row(raw, deid, key, summary, world))
            if len(batch) >= CHUNK:
                _flush(db, batch, summary)
                if on_progress is not None:
                    on_progress(min(size, raw.line), size)
        _flush(db, batch, summary)
        traffic.finish_import(db, summary.import_id, records=summary.records,
                              pairs=summary.pairs, duplicates=summary.duplicates,
                              redactions=dict(sorted(summary.redactions.items())))
    if on_progress is not None:
        on_progress(size, size)
    return summary


def _row(raw: RawPair, deid: Deidentifier, key: bytes, summary: ImportSummary,
         world: str | None) -> tuple[object, ...]:
    texts = [raw.query, raw.response, *(content for _role, content in raw.context)]
    mac = hmac.new(key, json.dumps([raw.context, raw.query, raw.response],
                                   ensure_ascii=False).encode("utf-8"), "sha256").hexdigest()
    done = deid.redact(texts)
    query, response, *context = done.texts
    summary.redactions.update(done.counts)
    shown = [[role, text] for (role, _raw), text in zip(raw.context, context, strict=True)]
    return (f"tp-{mac[:16]}", summary.import_id, summary.source, world, raw.line, raw.turn,
            json.dumps(shown, ensure_ascii=False) if shown else None, query, response, mac,
            json.dumps(dict(sorted(done.counts.items()))))


def _flush(db: Database, batch: list[tuple[object, ...]], summary: ImportSummary) -> None:
    stored = traffic.insert_pairs(db, batch)
    summary.stored += stored
    summary.duplicates += len(batch) - stored
    batch.clear()


__all__ = ["ImportFailure", "ImportSummary", "import_log"]
