"""`copal export --format jsonl`: the store as interchange records, byte-stable.

Same database, same bytes: records come in a fixed type order and key order, lists as stored,
JSON without whitespace variation. Export, import into a new database and export again gives
identical output. A file export goes through copal_tui.export.safe_paths: never onto the
database or a non-regular file, onto an existing file only with --force, and atomically.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import IO, Any

import orjson

from copal_tui.export.safe_paths import OutputGuard, atomic_output
from copal_tui.interchange.records import iter_records
from store.db import Database

# One encoder for every record (json.dumps with options builds one per call). Records are
# read, converted and written one at a time: memory stays flat however large the store.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

# The types that make up nearly all of a large store hold only strings, integers, booleans,
# nulls, lists of ids and maps of strings; orjson writes those byte for byte as `_encode` does
# (a test compares the two over every character class) about ten times faster. It spells
# floats differently (1e-5 for 1e-05), so the types that may hold one (a clause's confidence,
# an item's screening, COMPASS attributes) keep `_encode` (an item without a screening has none).
_ORJSON_TYPES = frozenset({"response", "judgment", "label", "adjudication"})


def encode_record(record: dict[str, Any]) -> str:
    """One record as its JSONL line (without the newline)."""
    kind = record["type"]
    # An item's only numbers are in its screening, written only when it has one.
    if kind in _ORJSON_TYPES or (kind == "item" and "screening" not in record):
        try:
            return orjson.dumps(record).decode()
        except TypeError:
            pass  # an integer beyond 64 bits or a lone surrogate: `_encode` writes those
    return _encode(record)


# Lines handed to the stream at a time: one call into the text layer (and its encoder) per
# 2,048 lines rather than one per line.
_LINES_PER_WRITE = 2048


def write_jsonl(db: Database, out: IO[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    lines: list[str] = []
    for record in iter_records(db):
        lines.append(encode_record(record))
        counts[record["type"]] += 1
        if len(lines) >= _LINES_PER_WRITE:
            out.write("\n".join(lines) + "\n")
            lines.clear()
    if lines:
        out.write("\n".join(lines) + "\n")
    return counts


def export_jsonl(db: Database, path: Path, guard: OutputGuard | None = None) -> Counter[str]:
    """Write `path` through a temporary beside it (removed if anything fails), then rename.

    `guard` says what may be written (default: no existing file); the file the connection has
    open is always protected.
    """
    guard = (guard or OutputGuard()).with_connection(db)
    with atomic_output(path, guard, newline="\n") as fh:
        counts = write_jsonl(db, fh)
    return counts
