"""Importing a deployed chatbot's traffic log: read a pair, de-identify it, store it; nothing
else ever holds a raw text.

`import_log` streams the file (`copal_tui.interchange.traffic_log`), hands each pair's texts
(query, response and the earlier turns shown as its context) to one `Deidentifier`, and writes
only what comes back, in one transaction: a malformed record anywhere leaves the store as it
was, and the error names the file and the line (`ImportFailure`). What was removed is counted
by type, for the import and for each pair.

A pair read before, from this file or an earlier one, is a duplicate: counted, not stored, and
not de-identified (its texts are dropped as read). It is recognised by an HMAC-SHA256 of the
pair as read under the store's own random key (`traffic.content_key`): two different
customers' identical questions after de-identification stay two pairs (the error rates count
every interaction), while the stored value reveals nothing of the text to anyone without the
whole text. Pair ids are `tp-` and the first 16 hex digits of that HMAC, so importing the same
log again stores nothing new: it is recorded as an import of its own whose every pair is a
duplicate. What an import removed is counted over the pairs it stored.
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
    size = count_lines(path)
    last_line = 0  # pairs come in file order: a new line is a new record
    batch: list[tuple[RawPair, str]] = []  # pairs read, each with its content key
    with write(db), traffic.import_cache(db):
        # The same file imported again under the same source is an import of its own.
        summary = ImportSummary(
            import_id=traffic.free_import_id(db, f"ti-{digest[:12]}-{_sha(source)[:6]}"),
            source=source, layout=layout)
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
            batch.append((raw, _content_key(key, raw)))
            if len(batch) >= CHUNK:
                _store(db, batch, deid, summary, world)
                if on_progress is not None:
                    on_progress(min(size, raw.line), size)
        _store(db, batch, deid, summary, world)
        traffic.finish_import(db, summary.import_id, records=summary.records,
                              pairs=summary.pairs, duplicates=summary.duplicates,
                              redactions=dict(sorted(summary.redactions.items())))
    if on_progress is not None:
        on_progress(size, size)
    return summary


def _content_key(key: bytes, raw: RawPair) -> str:
    """The HMAC of the pair as read (its context, query and response)."""
    return hmac.new(key, json.dumps([raw.context, raw.query, raw.response],
                                    ensure_ascii=False).encode("utf-8"), "sha256").hexdigest()


def _store(db: Database, batch: list[tuple[RawPair, str]], deid: Deidentifier,
           summary: ImportSummary, world: str | None) -> None:
    """De-identify and write the pairs of `batch` not stored before (nor earlier in it)."""
    seen = traffic.known_content_keys(db, [mac for _, mac in batch])
    rows: list[tuple[object, ...]] = []
    for raw, mac in batch:
        if mac not in seen:
            seen.add(mac)
            rows.append(_row(raw, mac, deid, summary, world))
    stored = traffic.insert_pairs(db, rows)
    summary.stored += stored
    summary.duplicates += len(batch) - stored
    batch.clear()


def _row(raw: RawPair, mac: str, deid: Deidentifier, summary: ImportSummary,
         world: str | None) -> tuple[object, ...]:
    texts = [raw.query, raw.response, *(content for _role, content in raw.context)]
    done = deid.redact(texts)
    query, response, *context = done.texts
    summary.redactions.update(done.counts)
    shown = [[role, text] for (role, _raw), text in zip(raw.context, context, strict=True)]
    return (f"tp-{mac[:16]}", summary.import_id, summary.source, world, raw.line, raw.turn,
            json.dumps(shown, ensure_ascii=False) if shown else None, query, response, mac,
            json.dumps(dict(sorted(done.counts.items()))))


__all__ = ["ImportFailure", "ImportSummary", "import_log"]
