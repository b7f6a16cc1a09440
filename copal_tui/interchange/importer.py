"""`copal import`: world files and interchange records into the store, as one transaction.

Everything is parsed and schema-checked before the first write; references are checked against
the store inside the write transaction (so records may refer to rows imported earlier in the same
call). Any failure rolls the whole import back. A record identical to one already stored is
skipped, so importing the same file twice is harmless; a different record under an existing id is
an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
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
    iter_records,
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
    pending: list[SourceRecord] = []
    for p in record_files:
        pending.extend(iter_records(p))
    order = {t: i for i, t in enumerate(RECORD_ORDER)}
    pending.sort(
        key=lambda s: (
            order[s.record.type],  # type: ignore[attr-defined]
            # Projections after their parents (edge queries after their base queries).
            getattr(s.record, "parent_item_id", None) is not None
            or getattr(s.record, "parent_id", None) is not None,
        )
    )
    importer = _Importer(db)
    with write(db):
        for path, world in worlds:
            importer.world_file(path, world)
        for src in pending:
            importer.record(src)
    return importer.written


class _Importer:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.written: Counter[str] = Counter()
        self.seen: set[tuple[str, ...]] = set()
        self._recent: dict[str, tuple[dict[str, Any], str]] = {}
        # Next policy position per world, asked of the store once per world (not per record).
        self._position: dict[str, int] = {}
        self._worlds: set[str] = set()

    def _once(self, key: tuple[str, ...], path: Path, line: int | None, field: str) -> None:
        if key in self.seen:
            raise ImportFailure(path, f"duplicate {key[0]} {key[-1]!r}", line=line, field=field)
        self.seen.add(key)

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

    def record(self, src: SourceRecord) -> None:
        r = src.record
        handler: Callable[[SourceRecord, dict[str, Any]], None] = getattr(self, f"_{r.type}")  # type: ignore[attr-defined]
        handler(src, r.model_dump(mode="json"))

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

    def _item(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("item", d["id"]), src.path, src.line, "id")
        self._need_world(src, d["world_id"])
        if d["composition_id"] is not None:
            c = reads.composition(self.db, d["composition_id"])
            if c is None or c["world_id"] != d["world_id"]:
                raise self.fail(src, f"unknown composition {d['composition_id']!r}",
                                "composition_id")
        if d["parent_item_id"] is not None:
            parent = reads.item(self.db, d["parent_item_id"])
            if parent is None or parent["world_id"] != d["world_id"]:
                raise self.fail(src, f"unknown parent item {d['parent_item_id']!r}",
                                "parent_item_id")
        if d["facet"] and d["pattern"] and FACET_PATTERN[d["facet"]] != d["pattern"]:
            raise self.fail(src, f"facet {d['facet']!r} does not belong to pattern "
                                 f"{d['pattern']!r}", "facet")
        for side in ("required", "forbidden"):
            for i, ci in enumerate(d[side]):
                cid = ci.get("clause_id")
                if cid is not None:
                    c = reads.clause(self.db, cid)
                    if c is None or c["world_id"] != d["world_id"]:
                        raise self.fail(src, f"unknown clause {cid!r}", f"{side}[{i}].clause_id")
        if self._exists(src, reads.item(self.db, d["id"]), d, rec.item_record):
            return
        writes.insert_item(self.db, d)
        self.written["item"] += 1

    def _response(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("response", d["id"]), src.path, src.line, "id")
        if reads.item(self.db, d["item_id"]) is None:
            raise self.fail(src, f"unknown item {d['item_id']!r}", "item_id")
        if self._exists(src, reads.response(self.db, d["id"]), d, rec.response_record):
            return
        writes.insert_response(self.db, d)
        self.written["response"] += 1

    def _content(self, response_id: str) -> tuple[dict[str, Any], str] | None:
        """The response's item content and its hash, memoised: judgments and labels of one
        response arrive together, and each would otherwise re-read and re-hash it."""
        hit = self._recent.get(response_id)
        if hit is None:
            content = reads.response_content(self.db, response_id)
            if content is None:
                return None
            sha = content_sha256(content["query"], content["required"], content["forbidden"],
                                 content["response"] or "")
            if len(self._recent) > 256:
                self._recent.clear()
            hit = self._recent[response_id] = (content, sha)
        return hit

    def _marks(self, src: SourceRecord, d: dict[str, Any]) -> dict[str, Any]:
        """Check marks against the response's contract; return stored fields."""
        found = self._content(d["response_id"])
        if found is None:
            raise self.fail(src, f"unknown response {d['response_id']!r}", "response_id")
        content, sha = found
        req = [c["id"] for c in content["required"]]
        forb = [c["id"] for c in content["forbidden"]]
        out: dict[str, Any] = {"observed": d["observed"], "error": d["error"],
                               "direction": None}
        if d["observed"] is not None:
            bad = unknown_ids(req, forb, d["observed"])
            if bad:
                raise self.fail(src, f"not a contract item of this response's item: "
                                     f"{', '.join(bad)}", "observed")
            verdict = evaluate(req, forb, d["observed"], item_kinds(content["required"]))
            if d["error"] is not None and d["error"] != verdict.error:
                raise self.fail(src, f"error={d['error']} disagrees with the marks in `observed` "
                                     f"(which give error={verdict.error})", "error")
            out["error"], out["direction"] = verdict.error, verdict.direction.value
        out["content_sha256"] = sha
        return out

    def _judgment(self, src: SourceRecord, d: dict[str, Any]) -> None:
        self._once(("judgment", d["id"]), src.path, src.line, "id")
        marks = self._marks(src, d)
        d = {**d, "error": marks["error"]}
        if self._exists(src, reads.judgment(self.db, d["id"]), d, rec.judgment_record):
            return
        marks.pop("content_sha256")
        writes.insert_judgment(self.db, {**d, **marks})
        self.written["judgment"] += 1

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
            content_sha256=marks["content_sha256"], created_at=d["created_at"])
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
