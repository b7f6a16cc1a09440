"""`copal import`: world files and interchange records into the store, as one transaction.

Record files are read twice: a first pass notes where each record type sits (`RecordIndex`),
the second reads each type back, referents first, in chunks of `CHUNK` records, and checks and
writes a chunk at a time; so memory holds one chunk, never the file. The whole import is one
transaction and the first problem (its file, line and field) rolls it all back, so a bad record
after earlier chunks were written leaves the store as it was. References are checked against
the store inside that transaction (so records may refer to rows imported earlier in the same
call). A record identical to one already stored is skipped, so importing the same file twice is
harmless; a different record under an existing id is an error, and so is an id given twice. So
is a record the store's constraints refuse (a response whose item, model and variant another
response has, under another id): it is named by file and line like any other (`refusal`), the
bulk chunk it was in found again row by row.

Items, responses and judgments, the bulk of a large store, are checked a chunk at a time
against what the store holds (one query per chunk of ids: their stored rows, their referents)
and each chunk is written by one executemany; labels go to the annotation log the same way
(`append_many`). Those checks are plain functions in `bulk.py` over this module's `Importer`;
the smaller types (worlds, policies, clauses, compositions, COMPASS records) are checked here
record by record. A large import into a small table builds that table's secondary indexes
once, at the end (`writes.bulk_load`). Every size takes this one path.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from copal_tui.domain.schema import RECORD_ORDER, WorldFile
from copal_tui.interchange import bulk, compass_records
from copal_tui.interchange import records as rec
from copal_tui.interchange.loader import (
    ImportFailure,
    RecordIndex,
    SourceRecord,
    expand,
    load_world,
)
from copal_tui.interchange.records import norm, same
from copal_tui.interchange.strict import paused_gc
from store.artifacts import compass, reads, writes
from store.artifacts.records import Stored
from store.db import Database, utcnow, write

# Records read, checked and written at a time: large enough that the per-chunk queries and
# statements cost little, small enough that a chunk's records weigh a few tens of MB at most.
CHUNK = 20_000

# A stored row of any type, compared through its type's export function.
_Row = TypeVar("_Row")


def import_paths(db: Database, paths: list[Path]) -> Counter[str]:
    """Import files and folders; returns how many records of each type were written."""
    # No record outlives its chunk and none makes a reference cycle, so the cyclic collector
    # would only walk the chunk's objects again and again for nothing.
    with paused_gc():
        return _import(db, paths)


def _import(db: Database, paths: list[Path]) -> Counter[str]:
    world_files, record_files = expand(paths)
    worlds = [(p, load_world(p)) for p in world_files]
    index = RecordIndex(record_files)
    importer = Importer(db)
    with write(db), writes.bulk_load(db, {t: index.count(r) for r, t in BULK.items()}):
        importer.begin()
        for path, world in worlds:
            importer.world_file(path, world)
        for kind in RECORD_ORDER:
            for chunk in index.chunks(kind, CHUNK, PARENT.get(kind)):
                importer.group(kind, chunk)
                # Let go before the next chunk is read, or two would be alive at once.
                del chunk
    return importer.written


# The record types imported in bulk (checked a chunk at a time, written by one executemany
# per chunk), and their tables.
BULK = {"item": "items", "response": "responses", "judgment": "judgments"}
# The stored rows of a bulk type under given ids.
_LOOKUPS: dict[str, Callable[[Database, Iterable[str]], Mapping[str, Stored[Any]]]] = {
    "item": reads.items_by_id, "response": reads.responses_by_id,
    "judgment": reads.judgments_by_id}
# Projections follow every parent of their type.
PARENT = {"item": "parent_item_id", "compass_query": "parent_id"}
# The types checked and written a chunk at a time (the others record by record).
_BULK_HANDLERS: dict[str, Callable[[Importer, list[SourceRecord]], None]] = {
    "item": bulk.items, "response": bulk.responses, "judgment": bulk.judgments,
    "label": bulk.labels, "adjudication": bulk.labels}


class Importer:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.written: Counter[str] = Counter()
        # Keys met so far of the types not imported in bulk (worlds, policies, clauses,
        # compositions, labels, COMPASS records: small next to the bulk types).
        self.seen: set[tuple[str, ...]] = set()
        # Next policy position per world, asked of the store once per world (not per record).
        self._position: dict[str, int] = {}
        self._worlds: set[str] = set()
        self._world_of: dict[tuple[str, str], str | None] = {}
        # Bulk types: a stored row above the table's rowid at the start was written by this
        # import (the id is given twice); ids found stored and identical are remembered (a
        # re-import) so that a second occurrence is still a duplicate.
        self._base: dict[str, int] = {}
        self._skipped: dict[str, set[str]] = {kind: set() for kind in BULK}
        self._contracts: dict[str, bulk.Contract | None] = {}
        self._verdicts: dict[tuple[Any, ...], tuple[int, str, str]] = {}
        self._now = utcnow()

    def begin(self) -> None:
        """Inside the write transaction, before the first record."""
        self._base = {table: reads.max_rowid(self.db, table) for table in BULK.values()}

    def _once(self, key: tuple[str, ...], path: Path, line: int | None, field: str) -> None:
        if key in self.seen:
            raise ImportFailure(path, f"duplicate {key[0]} {key[-1]!r}", line=line, field=field)
        self.seen.add(key)

    def _fresh(self, kind: str, src: SourceRecord, stored: Mapping[str, Stored[_Row]],
               chunk_seen: set[str]) -> _Row | None:
        """The duplicate check of a bulk record: raises when its id was given before in this
        import; returns the row stored before the import under its id, if any."""
        rid: str = src.data["id"]
        old = stored.get(rid)
        if rid in chunk_seen or rid in self._skipped[kind] or (
                old is not None and old.rowid > self._base[BULK[kind]]):
            raise ImportFailure(src.path, f"duplicate {kind} {rid!r}", line=src.line, field="id")
        chunk_seen.add(rid)
        return None if old is None else old.row

    def _unchanged(self, kind: str, src: SourceRecord, old: _Row | None,
                   d: dict[str, Any], export: Callable[[_Row], dict[str, Any]]) -> bool:
        """True when the record is stored already, the same (then it is not written)."""
        if not self._exists(src, old, d, export):
            return False
        self._skipped[kind].add(d["id"])
        return True

    def clean(self, kind: str, srcs: list[SourceRecord], stored: Mapping[str, object]) -> bool:
        """True when no record of the chunk is stored already, none repeats within it and
        none was met (and skipped) before: `_fresh` and `_unchanged` would pass each one, and
        an id written by an earlier chunk fails the insert, which `insert` names."""
        if stored:
            return False
        ids = {s.data["id"] for s in srcs}
        return len(ids) == len(srcs) and self._skipped[kind].isdisjoint(ids)

    def _stored(self, kind: str, srcs: list[SourceRecord],
                lookup: Callable[[Database, Iterable[str]], dict[str, Stored[_Row]]]
                ) -> dict[str, Stored[_Row]]:
        """The rows stored under the chunk's ids (before it), by id."""
        # A table empty when the import began holds only what it wrote: an id given again in
        # a later chunk fails the insert instead, and `insert` names it, so the common bulk
        # load into an empty store asks nothing per chunk.
        if self._base[BULK[kind]] == 0:
            return {}
        return lookup(self.db, (s.data["id"] for s in srcs))

    def _write(self, kind: str, insert: Callable[[Database, list[Any]], object],
               rows: list[Any], kept: list[SourceRecord]) -> None:
        """Write a chunk's `rows` (those of `kept`, its records not stored already)."""
        self.insert(kind, kept, insert, rows)
        self.written[kind] += len(rows)

    def insert(self, kind: str, kept: list[SourceRecord],
               insert: Callable[[Database, list[Any]], object], rows: list[Any]) -> None:
        """`insert(db, rows)`, the rows of the records `kept`, as one statement in a savepoint.
        When the store refuses a row (an id an earlier chunk wrote, a response whose item,
        model and variant another has), the chunk leaves nothing and its rows are inserted
        again one at a time, to name the record refused (the import then fails, so what the
        rows before it write goes with it)."""
        try:
            with self.db.atomic():
                insert(self.db, rows)
        except sqlite3.IntegrityError:
            for src, row in zip(kept, rows, strict=True):
                try:
                    insert(self.db, [row])
                except sqlite3.IntegrityError as exc:
                    raise self.fail(src, *self._refusal(kind, src.data, exc)) from None
            raise

    def _refusal(self, kind: str, d: Mapping[str, Any], exc: sqlite3.IntegrityError
                 ) -> tuple[str, str | None]:
        """`refusal`, first asking whether the record's id is stored already: an id given
        twice is a duplicate, whichever of its row's constraints SQLite checked first."""
        lookup = _LOOKUPS.get(kind)
        if lookup is not None and lookup(self.db, [d["id"]]):
            return f"duplicate {kind} {d['id']!r}", "id"
        return refusal(kind, d, exc)

    def group(self, kind: str, srcs: list[SourceRecord]) -> None:
        """Import one chunk of records of one type (in the order given)."""
        if not srcs:
            return
        bulk = _BULK_HANDLERS.get(kind)
        if bulk is not None:
            bulk(self, srcs)
            return
        handler: Callable[[SourceRecord, dict[str, Any]], None] = getattr(self, f"_{kind}")
        for src in srcs:
            try:
                handler(src, src.data)
            except sqlite3.IntegrityError as exc:
                raise self.fail(src, *refusal(kind, src.data, exc)) from None

    # ------------------------------------------------------------------ worlds

    def world_file(self, path: Path, w: WorldFile) -> None:
        self._once(("world", w.id), path, None, "id")
        data = w.model_dump(mode="json")
        policies = data.pop("policies")
        existing = reads.world(self.db, w.id)
        if existing is not None:
            stored = [rec.policy_record(w.id, p) for p in reads.policies(self.db, w.id)]
            incoming = [{"type": "policy", "world_id": w.id, **p} for p in policies]
            if not same(rec.world_record(existing), {"type": "world", **data}) or [
                norm(p) for p in stored
            ] != [norm(p) for p in incoming]:
                raise ImportFailure(path, f"world {w.id!r} already exists with other content",
                                    field="id")
            return
        writes.insert_world(self.db, data, source_path=str(path))
        self.written["world"] += 1
        writes.insert_policies(self.db, w.id, policies)
        self.written["policy"] += len(policies)

    # ------------------------------------------------------------------ records

    def fail(self, src: SourceRecord, message: str, field: str | None = None) -> ImportFailure:
        return ImportFailure(src.path, message, line=src.line, field=field)

    def _need_world(self, src: SourceRecord, world_id: str) -> None:
        # Every record names its world; an import deletes none, so one look-up per world does.
        if world_id in self._worlds:
            return
        if reads.world(self.db, world_id) is None:
            raise self.fail(src, f"unknown world {world_id!r}", "world_id")
        self._worlds.add(world_id)

    def _exists(self, src: SourceRecord, stored: _Row | None, d: dict[str, Any],
                export: Callable[[_Row], dict[str, Any]]) -> bool:
        if stored is None:
            return False
        if not same(export(stored), d):
            raise self.fail(src, f"{d['type']} {d.get('id')!r} already exists with other content",
                            "id")
        return True

    def _world(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("world", d["id"]), src.path, src.line, "id")
        if self._exists(src, reads.world(self.db, d["id"]), d, rec.world_record):
            return
        writes.insert_world(self.db, d, source_path=str(src.path))
        if d.get("system_prompt") is not None:
            compass.set_system_prompt(self.db, d["id"], d["system_prompt"])
        self.written["world"] += 1

    def _policy(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("policy", d["world_id"], d["id"]), src.path, src.line, "id")
        self._need_world(src, d["world_id"])
        wid = d["world_id"]
        stored = reads.policy(self.db, wid, d["id"])
        if self._exists(src, stored, d, lambda p: rec.policy_record(wid, p)):
            return
        if wid not in self._position:
            self._position[wid] = writes.next_policy_position(self.db, wid)
        writes.insert_policy(self.db, wid, d, self._position[wid])
        self._position[wid] += 1
        self.written["policy"] += 1

    def _clause(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("clause", d["id"]), src.path, src.line, "id")
        self._need_world(src, d["world_id"])
        for i, pid in enumerate(d["policy_ids"]):
            if reads.policy(self.db, d["world_id"], pid) is None:
                raise self.fail(src, f"unknown policy {pid!r} in world {d['world_id']!r}",
                                f"policy_ids[{i}]")
        if self._exists(src, reads.clause(self.db, d["id"]), d, rec.clause_record):
            return
        writes.insert_clause(self.db, d)
        self.written["clause"] += 1

    def _composition(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("composition", d["id"]), src.path, src.line, "id")
        self._need_world(src, d["world_id"])
        for i, cid in enumerate(d["clause_ids"]):
            c = reads.clause(self.db, cid)
            if c is None or c.world_id != d["world_id"]:
                raise self.fail(src, f"unknown clause {cid!r} in world {d['world_id']!r}",
                                f"clause_ids[{i}]")
        if len(set(d["clause_ids"])) != len(d["clause_ids"]):
            raise self.fail(src, "clause ids repeat", "clause_ids")
        if self._exists(src, reads.composition(self.db, d["id"]), d, rec.composition_record):
            return
        writes.insert_composition(self.db, d)
        self.written["composition"] += 1

    def _world_of_ref(self, table: str, ref: str) -> str | None:
        """The world of a stored clause or composition (None: there is none), asked once."""
        key = (table, ref)
        if key not in self._world_of:
            row = reads.clause(self.db, ref) if table == "clause" else reads.composition(
                self.db, ref)
            self._world_of[key] = None if row is None else row.world_id
        return self._world_of[key]

    # COMPASS suites: the checks live in compass_records.

    def _compass_query(self, src: SourceRecord, d: dict[str, Any]) -> None:
        compass_records.query(self, src, d)

    def _compass_response(self, src: SourceRecord, d: dict[str, Any]) -> None:
        compass_records.response(self, src, d)

    def _compass_judgment(self, src: SourceRecord, d: dict[str, Any]) -> None:
        compass_records.judgment(self, src, d)


def refusal(kind: str, d: Mapping[str, Any], exc: sqlite3.IntegrityError) -> tuple[str, str | None]:
    """(reason, field) of a record the store's constraints refused, in the record's words."""
    msg = str(exc)
    if msg.startswith("UNIQUE constraint failed: "):
        cols = [c.split(".", 1)[-1] for c in msg.removeprefix("UNIQUE constraint failed: ")
                .split(", ")]
        if cols == ["id"]:
            return f"duplicate {kind} {d.get('id')!r}", "id"
        shown = ", ".join(f"{c} {_short(d.get(c))}" for c in cols)
        return (f"another {kind} (stored before, or earlier in this import) already has "
                f"{shown}: the store keeps one {kind} per {', '.join(cols)}", cols[0])
    if msg.startswith("NOT NULL constraint failed: "):
        col = msg.rsplit(".", 1)[-1]
        return "is required", col
    if msg.startswith("FOREIGN KEY"):
        return "refers to a row that is not stored", None
    return f"the store does not accept this {kind} ({msg})", None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
