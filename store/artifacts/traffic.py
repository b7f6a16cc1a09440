"""SQL of the real-traffic audit (migration m016_traffic): imported logs, their de-identified
pairs, and the automatic labeller's predictions.

Every text that reaches these functions has been de-identified already
(`copal_tui.services.traffic`); nothing here sees a raw log. Callers open the transaction with
`store.db.write`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from store.annotation.annotations import CURRENT, CURRENT_DECISION
from store.db import Database, dumps, utcnow


@dataclass(frozen=True, slots=True)
class PairRow:
    """One stored pair (its texts None once purged); `context` as [(role, content)]."""

    id: str
    source: str
    world_id: str | None
    import_id: str
    line: int
    turn: int | None
    context: list[tuple[str, str]]
    query: str | None
    response: str | None
    redactions: dict[str, int]
    purged_at: str | None


@dataclass(frozen=True, slots=True)
class ImportRow:
    id: str
    source: str
    world_id: str | None
    file_name: str
    layout: str
    records: int
    pairs: int
    duplicates: int
    redactions: dict[str, int]
    created_at: str


# ------------------------------------------------------------------ writes


def content_key(db: Database) -> bytes:
    """The store's key for duplicate detection, made (32 random bytes) on first use."""
    row = db.execute("SELECT key FROM traffic_key WHERE id = 1").fetchone()
    if row is not None:
        return bytes(row[0])
    key = os.urandom(32)
    db.execute("INSERT INTO traffic_key (id, key) VALUES (1, ?)", (key,))
    return key


# An import's page cache (KiB): the unique indexes of pair ids and content keys, probed for
# every pair read, stay in memory rather than being read again through the OS. At a million
# pairs: 15 s of system time instead of 73 s, the import's peak memory 120 MiB.
IMPORT_CACHE_KIB = 64 * 1024


@contextmanager
def import_cache(db: Database) -> Iterator[None]:
    """Inside an import's write transaction: its page cache, restored after."""
    before = int(db.execute("PRAGMA cache_size").fetchone()[0])
    db.execute(f"PRAGMA cache_size = -{IMPORT_CACHE_KIB}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA cache_size = {before}")


def known_content_keys(db: Database, keys: Sequence[str]) -> set[str]:
    """Those of `keys` a stored pair has (a look-up in the unique index per key)."""
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        found.update(str(r[0]) for r in db.tuples(
            f"SELECT content_key FROM traffic_pairs WHERE content_key IN "
            f"({','.join('?' * len(chunk))})", chunk))
    return found


def free_import_id(db: Database, base: str) -> str:
    """`base`, or the first of `base-2`, `base-3`... no import has (the same file imported
    again under the same source)."""
    taken = {str(r[0]) for r in db.tuples(
        "SELECT id FROM traffic_imports WHERE id = ? OR id GLOB ?", (base, f"{base}-[0-9]*"))}
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def insert_pairs(db: Database, rows: Sequence[tuple[object, ...]]) -> int:
    """Insert (id, import_id, source, world_id, line, turn, context JSON, query, response,
    content_key, redactions JSON) rows; a pair whose content key is stored already (the same
    record, imported before or repeated in the file) is skipped. Returns how many were
    stored."""
    before = db.conn.total_changes
    db.conn.executemany(
        "INSERT OR IGNORE INTO traffic_pairs (id, import_id, source, world_id, line, turn, "
        "context, query, response, content_key, redactions) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows)
    return db.conn.total_changes - before


def insert_import(db: Database, *, id: str, source: str, world_id: str | None, file_name: str,
                  file_sha256: str, layout: str, options: dict[str, object],
                  deidentifier: dict[str, object], run_id: str | None = None) -> None:
    """An import's row, before its pairs (their counts come with `finish_import`)."""
    db.execute(
        "INSERT INTO traffic_imports (id, source, world_id, file_name, file_sha256, layout, "
        "options, records, pairs, duplicates, redactions, deidentifier, run_id, created_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (id, source, world_id, file_name, file_sha256, layout, dumps(options), 0, 0, 0, "{}",
         dumps(deidentifier), run_id, utcnow()))


def finish_import(db: Database, import_id: str, *, records: int, pairs: int, duplicates: int,
                  redactions: dict[str, int]) -> None:
    """The counts of an import, once its pairs are stored."""
    db.execute("UPDATE traffic_imports SET records = ?, pairs = ?, duplicates = ?, "
               "redactions = ? WHERE id = ?",
               (records, pairs, duplicates, dumps(redactions), import_id))


def purge(db: Database, pair_ids: Iterable[str]) -> int:
    """Remove the texts of these pairs for good (the row and its counts stay); how many were
    purged now (a pair purged before is not counted again)."""
    now = utcnow()
    before = db.conn.total_changes
    db.conn.executemany(
        "UPDATE traffic_pairs SET context = NULL, query = NULL, response = NULL, "
        "purged_at = ? WHERE id = ? AND purged_at IS NULL", [(now, i) for i in pair_ids])
    return db.conn.total_changes - before


def replace_judgment(db: Database, *, pair_id: str, judge: str, category: str | None,
                     erroneous: bool | None, policies: list[str] | None, reason: str | None,
                     failure: str | None, run_id: str | None) -> None:
    db.execute(
        "INSERT OR REPLACE INTO traffic_judgments (pair_id, judge, category, erroneous, "
        "policies, reason, failure, run_id, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
        (pair_id, judge, category, None if erroneous is None else int(erroneous),
         None if policies is None else dumps(policies), reason, failure, run_id, utcnow()))


# ------------------------------------------------------------------ reads


_PAIR = ("id, source, world_id, import_id, line, turn, context, query, response, redactions, "
         "purged_at")


def _pair(row: Sequence[object]) -> PairRow:
    context = json.loads(str(row[6])) if row[6] else []
    return PairRow(str(row[0]), str(row[1]), None if row[2] is None else str(row[2]),
                   str(row[3]), int(str(row[4])), None if row[5] is None else int(str(row[5])),
                   [(str(r), str(c)) for r, c in context], None if row[7] is None else str(row[7]),
                   None if row[8] is None else str(row[8]), json.loads(str(row[9] or "{}")),
                   None if row[10] is None else str(row[10]))


def pair(db: Database, pair_id: str) -> PairRow | None:
    row = db.tuples(f"SELECT {_PAIR} FROM traffic_pairs WHERE id = ?", (pair_id,)).fetchone()
    return None if row is None else _pair(row)


def pair_ids(db: Database, *, sources: Sequence[str] = (), worlds: Sequence[str] = (),
             with_text: bool = True) -> list[tuple[str, str]]:
    """(id, source) of the pairs, optionally of some sources or worlds, by id; purged pairs
    only when `with_text` is False."""
    # One scan of the table and a sort: walking the id index instead looks each row up in the
    # table in id order, a random read per pair (4-7 s against 1.3 s at 1M pairs).
    sql = "SELECT id, source FROM traffic_pairs NOT INDEXED WHERE 1=1"
    params: list[object] = []
    if with_text:
        sql += " AND purged_at IS NULL"
    if sources:
        sql += f" AND source IN ({','.join('?' * len(sources))})"
        params += list(sources)
    if worlds:
        sql += f" AND world_id IN ({','.join('?' * len(worlds))})"
        params += list(worlds)
    rows: list[tuple[str, str]] = db.tuples(sql + " ORDER BY id", params).fetchall()
    return rows  # both columns are TEXT NOT NULL


def unplaced(db: Database, campaign: str) -> list[tuple[str, str]]:
    """(id, source) of the pairs with text that are not in the campaign yet, by id: a scan of
    two key indexes (no pair's row is read unless it is new), so a queue's start costs little
    when nothing was imported since."""
    new = [str(r[0]) for r in db.tuples(
        "SELECT id FROM traffic_pairs WHERE id NOT IN (SELECT subject FROM campaign_subjects "
        "WHERE campaign = ?) ORDER BY id", (campaign,))]
    if len(new) > 20_000:  # many (a queue's first start): one scan beats a look-up per pair
        wanted = set(new)
        return [row for row in pair_ids(db) if row[0] in wanted]
    out: list[tuple[str, str]] = []
    for start in range(0, len(new), 500):
        chunk = new[start:start + 500]
        out += [(str(i), str(s)) for i, s in db.tuples(
            f"SELECT id, source FROM traffic_pairs WHERE id IN ({','.join('?' * len(chunk))}) "
            "AND purged_at IS NULL ORDER BY id", chunk)]
    return out


def flagged_sensitive(db: Database) -> list[str]:
    """Pairs still holding text whose current label (an annotator's) or current decision (an
    adjudicator's) flags sensitive content, by id."""
    return [str(r[0]) for r in db.tuples(
        f"SELECT DISTINCT e.subject FROM annotations e JOIN traffic_pairs p ON p.id = e.subject "
        f"WHERE e.suite = 'traffic' AND ({CURRENT} OR {CURRENT_DECISION}) "
        f"AND json_extract(e.payload, '$.sensitive') = 1 AND p.purged_at IS NULL "
        f"ORDER BY e.subject")]


def sources(db: Database) -> list[str]:
    return [str(r[0]) for r in db.tuples("SELECT DISTINCT source FROM traffic_pairs "
                                         "ORDER BY source")]


def imports(db: Database) -> list[ImportRow]:
    return [ImportRow(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]), str(r[3]),
                      str(r[4]), int(r[5]), int(r[6]), int(r[7]), json.loads(str(r[8] or "{}")),
                      str(r[9]))
            for r in db.tuples("SELECT id, source, world_id, file_name, layout, records, pairs, "
                               "duplicates, redactions, created_at FROM traffic_imports "
                               "ORDER BY created_at, id")]


def pair_counts(db: Database) -> tuple[int, int]:
    """(stored pairs, pairs whose text was purged)."""
    row = db.execute("SELECT COUNT(*), COUNT(purged_at) FROM traffic_pairs").fetchone()
    return int(row[0]), int(row[1])


def redaction_counts(db: Database) -> dict[str, dict[str, int]]:
    """What de-identification removed, by source and type, over every import."""
    out: dict[str, dict[str, int]] = {}
    for source, redactions in db.tuples("SELECT source, redactions FROM traffic_imports"):
        mine = out.setdefault(str(source), {})
        for kind, n in json.loads(str(redactions or "{}")).items():
            mine[kind] = mine.get(kind, 0) + int(n)
    return {s: dict(sorted(c.items())) for s, c in sorted(out.items())}
