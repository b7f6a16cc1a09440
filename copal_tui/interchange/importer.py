"""`copal import`: world files and interchange records into the store, as one transaction.

Record files are read twice: a first pass notes where each record type sits (`RecordIndex`),
the second reads each type back, referents first, in chunks of `CHUNK` records, and checks and
writes a chunk at a time; so memory holds one chunk, never the file. The whole import is one
transaction and the first problem (its file, line and field) rolls it all back, so a bad record
after earlier chunks were written leaves the store as it was. References are checked against
the store inside that transaction (so records may refer to rows imported earlier in the same
call). A record identical to one already stored is skipped, so importing the same file twice is
harmless; a different record under an existing id is an error, and so is an id given twice.

Items, responses and judgments, the bulk of a large store, are checked a chunk at a time
against what the store holds (one query per chunk of ids: their stored rows, their referents)
and each chunk is written by one executemany; labels go to the annotation log the same way
(`append_many`). A large import into a small table builds that table's secondary indexes once,
at the end (`writes.bulk_load`). Every size takes this one path.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from copal_tui.domain.contract import content_sha256, evaluate, item_kinds, unknown_ids
from copal_tui.domain.schema import RECORD_ORDER, WorldFile
from copal_tui.domain.taxonomy import FACET_PATTERN
from copal_tui.interchange import compass_records
from copal_tui.interchange import records as rec
from copal_tui.interchange.loader import (
    ImportFailure,
    RecordIndex,
    SourceRecord,
    expand,
    load_world,
)
from copal_tui.interchange.strict import paused_gc
from store.annotation import annotations as log
from store.artifacts import compass_sql, reads, writes
from store.db import Database, dumps, utcnow, write

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
    importer = _Importer(db)
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
# Projections follow every parent of their type.
PARENT = {"item": "parent_item_id", "compass_query": "parent_id"}


@dataclass(slots=True)
class _Contract:
    """What marks on a response are checked against: its item's world and contract."""

    world_id: str
    query: str
    required: list[dict[str, Any]]
    forbidden: list[dict[str, Any]]
    req: list[str]
    forb: list[str]
    kinds: dict[str, str]
    # Everything the error rule reads (ids and kinds): items of one shape share verdicts.
    shape: tuple[Any, ...]

    @classmethod
    def of(cls, item: dict[str, Any]) -> _Contract:
        req, forb = item["required"], item["forbidden"]
        ids_req, ids_forb, kinds = [c["id"] for c in req], [c["id"] for c in forb], item_kinds(req)
        return cls(item.get("world_id", ""), item["query"], req, forb, ids_req, ids_forb, kinds,
                   (tuple(ids_req), tuple(ids_forb), tuple(kinds.items())))


# (error, direction, marks as stored JSON) per contract shape and mark set met: most items
# share a few shapes and most marks repeat, so the rule runs a few times per import rather
# than once per judgment. Starts over when full, to stay bounded.
VERDICT_CACHE = 100_000


class _Importer:
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
        self._contracts: dict[str, _Contract | None] = {}
        self._verdicts: dict[tuple[Any, ...], tuple[int, str, str]] = {}
        self._now = utcnow()

    def begin(self) -> None:
        """Inside the write transaction, before the first record."""
        self._base = {table: reads.max_rowid(self.db, table) for table in BULK.values()}

    def _once(self, key: tuple[str, ...], path: Path, line: int | None, field: str) -> None:
        if key in self.seen:
            raise ImportFailure(path, f"duplicate {key[0]} {key[-1]!r}", line=line, field=field)
        self.seen.add(key)

    def _fresh(self, kind: str, src: SourceRecord, stored: dict[str, dict[str, Any]],
               chunk_seen: set[str]) -> dict[str, Any] | None:
        """The duplicate check of a bulk record: raises when its id was given before in this
        import; returns the row stored before the import under its id, if any."""
        rid: str = src.data["id"]
        old = stored.get(rid)
        if rid in chunk_seen or rid in self._skipped[kind] or (
                old is not None and old["_rowid"] > self._base[BULK[kind]]):
            raise ImportFailure(src.path, f"duplicate {kind} {rid!r}", line=src.line, field="id")
        chunk_seen.add(rid)
        return old

    def _unchanged(self, kind: str, src: SourceRecord, old: dict[str, Any] | None,
                   d: dict[str, Any], export: Callable[[dict[str, Any]], dict[str, Any]]
                   ) -> bool:
        """True when the record is stored already, the same (then it is not written)."""
        if not self._exists(src, old, d, export):
            return False
        self._skipped[kind].add(d["id"])
        return True

    def _stored(self, kind: str, srcs: list[SourceRecord],
                lookup: Callable[[Database, Iterable[str]], dict[str, dict[str, Any]]]
                ) -> dict[str, dict[str, Any]]:
        """The rows stored under the chunk's ids (before it), by id."""
        # A table empty when the import began holds only what it wrote: an id given again in
        # a later chunk fails the insert instead, and `_write` names it, so the common bulk
        # load into an empty store asks nothing per chunk.
        if self._base[BULK[kind]] == 0:
            return {}
        return lookup(self.db, (s.data["id"] for s in srcs))

    def _write(self, kind: str, srcs: list[SourceRecord],
               insert: Callable[[Database, list[Any]], None], rows: list[Any]) -> None:
        table = BULK[kind]
        before = reads.max_rowid(self.db, table) if self._base[table] == 0 else 0
        try:
            insert(self.db, rows)
        except sqlite3.IntegrityError:
            if self._base[table] == 0:
                lookup = {"item": reads.items_by_id, "response": reads.responses_by_id,
                          "judgment": reads.judgments_by_id}[kind]
                earlier = lookup(self.db, (s.data["id"] for s in srcs))
                for src in srcs:
                    old = earlier.get(src.data["id"])
                    if old is not None and old["_rowid"] <= before:
                        raise ImportFailure(src.path, f"duplicate {kind} {src.data['id']!r}",
                                            line=src.line, field="id") from None
            raise
        self.written[kind] += len(rows)

    def group(self, kind: str, srcs: list[SourceRecord]) -> None:
        """Import one chunk of records of one type (in the order given)."""
        if not srcs:
            return
        bulk: Callable[[list[SourceRecord]], None] | None = getattr(self, f"_bulk_{kind}", None)
        if bulk is not None:
            bulk(srcs)
            return
        for src in srcs:
            handler: Callable[[SourceRecord, dict[str, Any]], None] = getattr(self, f"_{kind}")
            handler(src, src.data)

    # ------------------------------------------------------------------ worlds

    def world_file(self, path: Path, w: WorldFile) -> None:
        self._once(("world", w.id), path, None, "id")
        data = w.model_dump(mode="json")
        policies = data.pop("policies")
        existing = reads.world(self.db, w.id)
        if existing is not None:
            stored = [rec.policy_record(p) for p in reads.policies(self.db, w.id)]
            incoming = [{"type": "policy", "world_id": w.id, **p} for p in policies]
            if not _same(rec.world_record(existing), {"type": "world", **data}) or [
                _norm(p) for p in stored
            ] != [_norm(p) for p in incoming]:
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
        if not _same(export(stored), d):
            raise self.fail(src, f"{d['type']} {d.get('id')!r} already exists with other content",
                            "id")
        return True

    def _world(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("world", d["id"]), src.path, src.line, "id")
        if self._exists(src, reads.world(self.db, d["id"]), d, rec.world_record):
            return
        writes.insert_world(self.db, d, source_path=str(src.path))
        if d.get("system_prompt") is not None:
            compass_sql.set_system_prompt(self.db, d["id"], d["system_prompt"])
        self.written["world"] += 1

    def _policy(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("policy", d["world_id"], d["id"]), src.path, src.line, "id")
        self._need_world(src, d["world_id"])
        stored = reads.policy(self.db, d["world_id"], d["id"])
        if self._exists(src, stored, d, rec.policy_record):
            return
        wid = d["world_id"]
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
            if c is None or c["world_id"] != d["world_id"]:
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
            self._world_of[key] = None if row is None else row["world_id"]
        return self._world_of[key]

    def _bulk_item(self, srcs: list[SourceRecord]) -> None:
        stored = self._stored("item", srcs, reads.items_by_id)
        parents = reads.item_worlds(self.db, {s.data["parent_item_id"] for s in srcs
                                              if s.data["parent_item_id"] is not None})
        chunk_seen: set[str] = set()
        rows: list[dict[str, Any]] = []
        for src in srcs:
            d = src.data
            old = self._fresh("item", src, stored, chunk_seen)
            self._need_world(src, d["world_id"])
            if d["composition_id"] is not None and self._world_of_ref(
                    "composition", d["composition_id"]) != d["world_id"]:
                raise self.fail(src, f"unknown composition {d['composition_id']!r}",
                                "composition_id")
            if d["parent_item_id"] is not None and parents.get(
                    d["parent_item_id"]) != d["world_id"]:
                raise self.fail(src, f"unknown parent item {d['parent_item_id']!r}",
                                "parent_item_id")
            if d["facet"] and d["pattern"] and FACET_PATTERN[d["facet"]] != d["pattern"]:
                raise self.fail(src, f"facet {d['facet']!r} does not belong to pattern "
                                     f"{d['pattern']!r}", "facet")
            for side in ("required", "forbidden"):
                for i, ci in enumerate(d[side]):
                    cid = ci.get("clause_id")
                    if cid is not None and self._world_of_ref("clause", cid) != d["world_id"]:
                        raise self.fail(src, f"unknown clause {cid!r}", f"{side}[{i}].clause_id")
            # A later projection in this chunk may name this item as its parent.
            parents[d["id"]] = d["world_id"]
            if not self._unchanged("item", src, old, d, rec.item_record):
                rows.append(d)
        self._write("item", srcs, writes.insert_items, rows)

    def _bulk_response(self, srcs: list[SourceRecord]) -> None:
        items = reads.item_worlds(self.db, {s.data["item_id"] for s in srcs})
        stored = self._stored("response", srcs, reads.responses_by_id)
        chunk_seen: set[str] = set()
        rows: list[dict[str, Any]] = []
        for src in srcs:
            d = src.data
            old = self._fresh("response", src, stored, chunk_seen)
            if d["item_id"] not in items:
                raise self.fail(src, f"unknown item {d['item_id']!r}", "item_id")
            if not self._unchanged("response", src, old, d, rec.response_record):
                rows.append(d)
        self._write("response", srcs, writes.insert_responses, rows)

    def _contracts_of(self, response_ids: set[str]) -> dict[str, _Contract]:
        """The contract of each stored response among `response_ids` (by response id)."""
        item_of = reads.response_items(self.db, response_ids)
        missing = set(item_of.values()) - self._contracts.keys()
        # Kept between chunks (the judgments of an item come near one another) up to a chunk's
        # worth, then started over: bounded whatever the file's size.
        if len(self._contracts) + len(missing) > CHUNK:
            self._contracts.clear()
            missing = set(item_of.values())
        for item_id, row in reads.item_contracts(self.db, missing).items():
            self._contracts[item_id] = _Contract.of(row)
        out: dict[str, _Contract] = {}
        for rid, item_id in item_of.items():
            c = self._contracts.get(item_id)
            if c is not None:
                out[rid] = c
        return out

    def _marks(self, src: SourceRecord, d: dict[str, Any], c: _Contract | None
               ) -> tuple[int | None, str | None, str | None]:
        """Check marks against the response's contract: (error, direction, observed as
        stored JSON)."""
        if c is None:
            raise self.fail(src, f"unknown response {d['response_id']!r}", "response_id")
        if d["observed"] is None:
            return d["error"], None, None
        marks = tuple(d["observed"])
        key = (c.shape, marks)
        hit = self._verdicts.get(key)
        if hit is None:
            bad = unknown_ids(c.req, c.forb, marks)
            if bad:
                raise self.fail(src, f"not a contract item of this response's item: "
                                     f"{', '.join(bad)}", "observed")
            verdict = evaluate(c.req, c.forb, marks, c.kinds)
            if len(self._verdicts) >= VERDICT_CACHE:
                self._verdicts.clear()
            hit = self._verdicts[key] = (verdict.error, verdict.direction.value,
                                         dumps(list(marks)))
        if d["error"] is not None and d["error"] != hit[0]:
            raise self.fail(src, f"error={d['error']} disagrees with the marks in `observed` "
                                 f"(which give error={hit[0]})", "error")
        return hit

    def _bulk_judgment(self, srcs: list[SourceRecord]) -> None:
        contracts = self._contracts_of({s.data["response_id"] for s in srcs})
        stored = self._stored("judgment", srcs, reads.judgments_by_id)
        chunk_seen: set[str] = set()
        rows: list[tuple[Any, ...]] = []
        now = self._now
        for src in srcs:
            d = src.data
            old = self._fresh("judgment", src, stored, chunk_seen)
            error, direction, observed = self._marks(src, d, contracts.get(d["response_id"]))
            # Compared as it would be stored: the error the marks give.
            if old is not None and self._unchanged("judgment", src, old, {**d, "error": error},
                                                   rec.judgment_record):
                continue
            evidence = d["evidence"]
            rows.append((d["id"], d["response_id"], d["judge"], d["mode"], observed, error,
                         direction, None if evidence is None else dumps(evidence), d["facet"],
                         d["rationale"], now))
        self._write("judgment", srcs, writes.insert_judgment_rows, rows)

    def _label(self, srcs: list[SourceRecord]) -> None:
        """Labels and adjudications of one chunk (`_bulk_label`, `_bulk_adjudication`)."""
        ids = {s.data["response_id"] for s in srcs}
        contents = reads.response_contents(self.db, ids)
        labelled = reads.annotated(self.db, "copal", ids)
        contracts = {rid: _Contract.of(c) for rid, c in contents.items()}
        events: list[log.NewEvent] = []
        for src in srcs:
            d = src.data
            if d["type"] == "label":
                who, role = d["annotator"], log.ANNOTATOR
                self._once(("label", d["response_id"], who), src.path, src.line, "annotator")
            else:
                who, role = d["adjudicator"], log.ADJUDICATOR
                self._once(("adjudication", d["response_id"]), src.path, src.line,
                           "response_id")
            c = contracts.get(d["response_id"])
            error, direction, _ = self._marks(src, d, c)
            if d["response_id"] in labelled and self._same_label(d, who, role, error):
                continue
            assert c is not None  # _marks refused a label on an unknown response
            content = contents[d["response_id"]]
            events.append(log.NewEvent(
                suite="copal", subject=d["response_id"], annotator=who, role=role,
                action="label", payload={"observed": d["observed"], "error": error,
                                         "direction": direction, "facet": d["facet"],
                                         "note": d["note"]},
                content_sha256=content_sha256(c.query, c.required, c.forbidden,
                                              content["response"] or ""),
                created_at=d["created_at"]))
        log.append_many(self.db, events)
        self.written[srcs[0].data["type"]] += len(events)

    _bulk_label = _bulk_adjudication = _label

    def _same_label(self, d: dict[str, Any], who: str, role: str, error: int | None) -> bool:
        """Whether the current label (decision) already says what `d` says."""
        if role == log.ANNOTATOR:
            stored = log.current(self.db, "copal", d["response_id"], who)
            return stored is not None and _same(rec.label_record(stored), {**d, "error": error})
        stored = log.decision(self.db, "copal", d["response_id"])
        return stored is not None and _same(rec.adjudication_record(stored),
                                            {**d, "error": error})

    # COMPASS suites: the checks live in compass_records.

    def _compass_query(self, src: SourceRecord, d: dict[str, Any]) -> None:
        compass_records.query(self, src, d)

    def _compass_response(self, src: SourceRecord, d: dict[str, Any]) -> None:
        compass_records.response(self, src, d)

    def _compass_judgment(self, src: SourceRecord, d: dict[str, Any]) -> None:
        compass_records.judgment(self, src, d)


def _norm(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _same(stored: dict[str, Any], incoming: dict[str, Any]) -> bool:
    return all(_norm(stored).get(k) == incoming.get(k) for k in set(_norm(stored)) | set(_norm(incoming)))
