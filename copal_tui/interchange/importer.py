"""`copal import`: world files and interchange records into the store, as one transaction.

Everything is parsed and schema-checked before the first write; references are checked against
the store inside the write transaction (so records may refer to rows imported earlier in the same
call). Any failure rolls the whole import back. A record identical to one already stored is
skipped, so importing the same file twice is harmless; a different record under an existing id is
an error.

Items, responses and judgments, the bulk of a large store, are imported a type at a time: their
references and contracts are checked against maps of what this import wrote (and of stored rows,
fetched a chunk of ids per query), and each type is written by one executemany. A large import
into a small table builds that table's secondary indexes once, at the end (`writes.bulk_load`).
Every size takes this one path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copal_tui.domain.contract import content_sha256, evaluate, item_kinds, unknown_ids
from copal_tui.domain.schema import RECORD_ORDER, WorldFile
from copal_tui.domain.taxonomy import FACET_PATTERN
from copal_tui.interchange import compass_records
from copal_tui.interchange import records as rec
from copal_tui.interchange.loader import (
    ImportFailure,
    SourceRecord,
    expand,
    load_groups,
    load_world,
)
from copal_tui.interchange.strict import paused_gc
from store.annotation import annotations as log
from store.artifacts import compass_sql, reads, writes
from store.db import Database, write


def import_paths(db: Database, paths: list[Path]) -> Counter[str]:
    """Import files and folders; returns how many records of each type were written."""
    # Every parsed record stays alive until the end, so garbage collections would walk them
    # over and over for nothing (see `paused_gc`); without them a 30k-policy import is ~1.5x
    # faster and holds the write lock for less time.
    with paused_gc():
        return _import(db, paths)


def _import(db: Database, paths: list[Path]) -> Counter[str]:
    world_files, record_files = expand(paths)
    worlds = [(p, load_world(p)) for p in world_files]
    groups = load_groups(record_files)
    importer = _Importer(db)
    with write(db), writes.bulk_load(db, {t: len(groups.get(r, ())) for r, t in BULK.items()}):
        for path, world in worlds:
            importer.world_file(path, world)
        for kind in RECORD_ORDER:
            # Popped: a type's records are freed once imported (what later types need is kept
            # in the importer's maps), so the judgments' rows do not come on top of them all.
            importer.group(kind, groups.pop(kind, []))
    return importer.written


# The record types imported in bulk (checked against in-memory maps and a lookup per chunk of
# ids, written by one executemany), and their tables.
BULK = {"item": "items", "response": "responses", "judgment": "judgments"}


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
    # (error, direction) per mark set met: the judges and annotators of one item mostly
    # agree, so the rule runs a few times per item rather than once per judgment.
    verdicts: dict[tuple[str, ...], tuple[int, str]]

    @classmethod
    def of(cls, item: dict[str, Any]) -> _Contract:
        req, forb = item["required"], item["forbidden"]
        return cls(item.get("world_id", ""), item["query"], req, forb,
                   [c["id"] for c in req], [c["id"] for c in forb], item_kinds(req), {})


class _Importer:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.written: Counter[str] = Counter()
        self.seen: set[tuple[str, ...]] = set()
        # Next policy position per world, asked of the store once per world (not per record).
        self._position: dict[str, int] = {}
        self._worlds: set[str] = set()
        # What later records are checked against, filled as records are imported (or found
        # stored) and from the store a chunk of ids at a time: no query per record.
        self._items: dict[str, _Contract | None] = {}
        self._responses: dict[str, tuple[_Contract, str]] = {}
        self._world_of: dict[tuple[str, str], str | None] = {}
        self._sha: dict[str, str] = {}

    def _once(self, key: tuple[str, ...], path: Path, line: int | None, field: str) -> None:
        if key in self.seen:
            raise ImportFailure(path, f"duplicate {key[0]} {key[-1]!r}", line=line, field=field)
        self.seen.add(key)

    def group(self, kind: str, srcs: list[SourceRecord]) -> None:
        """Import every record of one type (in the order given)."""
        if not srcs:
            return
        bulk: Callable[[list[SourceRecord]], None] | None = getattr(self, f"_bulk_{kind}", None)
        if bulk is not None:
            bulk(srcs)
            return
        if kind in ("label", "adjudication"):
            self._load_responses(s.data["response_id"] for s in srcs)
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

    def _exists(self, src: SourceRecord, stored: dict[str, Any] | None, d: dict[str, Any],
                export: Callable[[dict[str, Any]], dict[str, Any]]) -> bool:
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

    def _item_world(self, item_id: str) -> str | None:
        if item_id not in self._items:
            stored = reads.item(self.db, item_id)
            self._items[item_id] = None if stored is None else _Contract.of(stored)
        found = self._items[item_id]
        return None if found is None else found.world_id

    def _bulk_item(self, srcs: list[SourceRecord]) -> None:
        stored = reads.items_by_id(self.db, (s.data["id"] for s in srcs))
        rows: list[dict[str, Any]] = []
        for src in srcs:
            d = src.data
            self._once(("item", d["id"]), src.path, src.line, "id")
            self._need_world(src, d["world_id"])
            if d["composition_id"] is not None and self._world_of_ref(
                    "composition", d["composition_id"]) != d["world_id"]:
                raise self.fail(src, f"unknown composition {d['composition_id']!r}",
                                "composition_id")
            if d["parent_item_id"] is not None and self._item_world(
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
            # Identical and stored already, or new: either way later records may refer to it.
            self._items[d["id"]] = _Contract.of(d)
            if not self._exists(src, stored.get(d["id"]), d, rec.item_record):
                rows.append(d)
        writes.insert_items(self.db, rows)
        self.written["item"] += len(rows)

    def _bulk_response(self, srcs: list[SourceRecord]) -> None:
        unknown = {s.data["item_id"] for s in srcs} - self._items.keys()
        found = reads.items_by_id(self.db, unknown)
        for item_id in unknown:
            self._items[item_id] = _Contract.of(found[item_id]) if item_id in found else None
        stored = reads.responses_by_id(self.db, (s.data["id"] for s in srcs))
        rows: list[dict[str, Any]] = []
        for src in srcs:
            d = src.data
            self._once(("response", d["id"]), src.path, src.line, "id")
            contract = self._items.get(d["item_id"])
            if contract is None:
                raise self.fail(src, f"unknown item {d['item_id']!r}", "item_id")
            self._responses[d["id"]] = (contract, d["text"])
            if not self._exists(src, stored.get(d["id"]), d, rec.response_record):
                rows.append(d)
        writes.insert_responses(self.db, rows)
        self.written["response"] += len(rows)

    def _load_responses(self, ids: Iterable[str]) -> None:
        """Bring the contract and text of stored responses the import has not met yet."""
        unknown = set(ids) - self._responses.keys()
        for rid, c in reads.response_contents(self.db, unknown).items():
            self._responses[rid] = (_Contract.of(c), c["response"] or "")

    def _marks(self, src: SourceRecord, d: dict[str, Any]) -> dict[str, Any]:
        """Check marks against the response's contract; return stored fields."""
        found = self._responses.get(d["response_id"])
        if found is None:
            raise self.fail(src, f"unknown response {d['response_id']!r}", "response_id")
        c = found[0]
        out: dict[str, Any] = {"observed": d["observed"], "error": d["error"],
                               "direction": None}
        if d["observed"] is not None:
            key = tuple(d["observed"])
            hit = c.verdicts.get(key)
            if hit is None:
                bad = unknown_ids(c.req, c.forb, key)
                if bad:
                    raise self.fail(src, f"not a contract item of this response's item: "
                                         f"{', '.join(bad)}", "observed")
                verdict = evaluate(c.req, c.forb, key, c.kinds)
                hit = c.verdicts[key] = (verdict.error, verdict.direction.value)
            if d["error"] is not None and d["error"] != hit[0]:
                raise self.fail(src, f"error={d['error']} disagrees with the marks in `observed` "
                                     f"(which give error={hit[0]})", "error")
            out["error"], out["direction"] = hit
        return out

    def _content_sha(self, response_id: str) -> str:
        """Hash of what a label is given on (the response's item content and text)."""
        sha = self._sha.get(response_id)
        if sha is None:
            c, text = self._responses[response_id]
            sha = self._sha[response_id] = content_sha256(c.query, c.required, c.forbidden, text)
        return sha

    def _bulk_judgment(self, srcs: list[SourceRecord]) -> None:
        self._load_responses(s.data["response_id"] for s in srcs)
        stored = reads.judgments_by_id(self.db, (s.data["id"] for s in srcs))
        rows: list[dict[str, Any]] = []
        for src in srcs:
            d = src.data
            self._once(("judgment", d["id"]), src.path, src.line, "id")
            marks = self._marks(src, d)
            old = stored.get(d["id"])
            # Compared as it would be stored: the error the marks give.
            if old is None or not self._exists(src, old, {**d, "error": marks["error"]},
                                               rec.judgment_record):
                rows.append({**d, **marks})
        writes.insert_judgments(self.db, rows)
        self.written["judgment"] += len(rows)

    def _label(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("label", d["response_id"], d["annotator"]), src.path, src.line,
                   "annotator")
        self._append(src, d, d["annotator"], log.ANNOTATOR)

    def _adjudication(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("adjudication", d["response_id"]), src.path, src.line, "response_id")
        self._append(src, d, d["adjudicator"], log.ADJUDICATOR)

    def _append(self, src: SourceRecord, d: dict[str, Any], who: str, role: str) -> None:
        """A label (or decision) as an event of the annotation log, unless the current one
        already says the same."""
        marks = self._marks(src, d)
        if role == log.ANNOTATOR:
            stored = log.current(self.db, "copal", d["response_id"], who)
            same = stored is not None and _same(rec.label_record(stored),
                                                {**d, "error": marks["error"]})
        else:
            stored = log.decision(self.db, "copal", d["response_id"])
            same = stored is not None and _same(rec.adjudication_record(stored),
                                                {**d, "error": marks["error"]})
        if same:
            return
        log.append(
            self.db, suite="copal", subject=d["response_id"], annotator=who, role=role,
            action="label", payload={"observed": marks["observed"], "error": marks["error"],
                                     "direction": marks["direction"], "facet": d["facet"],
                                     "note": d["note"]},
            content_sha256=self._content_sha(d["response_id"]), created_at=d["created_at"])
        self.written["label" if role == log.ANNOTATOR else "adjudication"] += 1

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
