"""`copal export --format jsonl`: the store as interchange records, byte-stable.

Same database, same bytes: records come in a fixed type order and key order, lists as stored,
JSON without whitespace variation. Export, import into a new database and export again gives
identical output.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import IO

from copal_tui.interchange.records import iter_records
from store.db import Database


def write_jsonl(db: Database, out: IO[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for record in iter_records(db):
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        counts[record["type"]] += 1
    return counts


def export_jsonl(db: Database, path: Path) -> Counter[str]:
    """Write to a temporary file and rename, so a crash never leaves half an export."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        counts = write_jsonl(db, fh)
    tmp.replace(path)
    return counts
