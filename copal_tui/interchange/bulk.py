"""The bulk record types of an interchange import: items, responses, judgments, labels and
adjudications, a chunk at a time.

Plain functions over the import's state (`importer.Importer`: the transaction, what was met so
far, the caches below). Each chunk is checked against what the store holds with one query per
chunk of ids (stored rows, referents, contracts) and written with one executemany (labels: one
`append_many` into the annotation log). Marks are checked against the response's contract and
the error and direction come from the domain's rule, never from the file; a stated error that
disagrees with the marks is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from copal_tui.domain.annotation.payloads import CopalLabel
from copal_tui.domain.contract import content_sha256, evaluate, item_kinds, unknown_ids
from copal_tui.domain.taxonomy import FACET_PATTERN
from copal_tui.interchange import records as rec
from copal_tui.interchange.loader import SourceRecord
from copal_tui.interchange.records import same
from store.annotation import annotations as log
from store.artifacts import reads, writes
from store.artifacts.records import ItemContract, ResponseContent
from store.db import dumps

if TYPE_CHECKING:
    from copal_tui.interchange.importer import Importer

# Contracts kept between chunks (the judgments of an item come near one another), then
# started over: bounded whatever the file's size.
CONTRACT_CACHE = 20_000


@dataclass(slots=True)
class Contract:
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
    def of(cls, item: ItemContract | ResponseContent) -> Contract:
        req, forb = item.required, item.forbidden
        ids_req, ids_forb, kinds = [c["id"] for c in req], [c["id"] for c in forb], item_kinds(req)
        world_id = item.world_id if isinstance(item, ItemContract) else ""
        return cls(world_id, item.query, req, forb, ids_req, ids_forb, kinds,
                   (tuple(ids_req), tuple(ids_forb), tuple(kinds.items())))


# (error, direction, marks as stored JSON) per contract shape and mark set met: most items
# share a few shapes and most marks repeat, so the rule runs a few times per import rather
# than once per judgment. Starts over when full, to stay bounded.
VERDICT_CACHE = 100_000


def items(imp: Importer, srcs: list[SourceRecord]) -> None:
    stored = imp._stored("item", srcs, reads.items_by_id)
    parents = reads.item_worlds(imp.db, {s.data["parent_item_id"] for s in srcs
                                          if s.data["parent_item_id"] is not None})
    chunk_seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    kept: list[SourceRecord] = []
    for src in srcs:
        d = src.data
        old = imp._fresh("item", src, stored, chunk_seen)
        imp._need_world(src, d["world_id"])
        if d["composition_id"] is not None and imp._world_of_ref(
                "composition", d["composition_id"]) != d["world_id"]:
            raise imp.fail(src, f"unknown composition {d['composition_id']!r}",
                            "composition_id")
        if d["parent_item_id"] is not None and parents.get(
                d["parent_item_id"]) != d["world_id"]:
            raise imp.fail(src, f"unknown parent item {d['parent_item_id']!r}",
                            "parent_item_id")
        if d["facet"] and d["pattern"] and FACET_PATTERN[d["facet"]] != d["pattern"]:
            raise imp.fail(src, f"facet {d['facet']!r} does not belong to pattern "
                                 f"{d['pattern']!r}", "facet")
        for side in ("required", "forbidden"):
            for i, ci in enumerate(d[side]):
                cid = ci.get("clause_id")
                if cid is not None and imp._world_of_ref("clause", cid) != d["world_id"]:
                    raise imp.fail(src, f"unknown clause {cid!r}", f"{side}[{i}].clause_id")
        # A later projection in this chunk may name this item as its parent.
        parents[d["id"]] = d["world_id"]
        if not imp._unchanged("item", src, old, d, rec.item_record):
            rows.append(d)
            kept.append(src)
    imp._write("item", writes.insert_items, rows, kept)


def responses(imp: Importer, srcs: list[SourceRecord]) -> None:
    items = reads.item_worlds(imp.db, {s.data["item_id"] for s in srcs})
    stored = imp._stored("response", srcs, reads.responses_by_id)
    clean = imp.clean("response", srcs, stored)
    chunk_seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    kept: list[SourceRecord] = []
    for src in srcs:
        d = src.data
        old = None if clean else imp._fresh("response", src, stored, chunk_seen)
        if d["item_id"] not in items:
            raise imp.fail(src, f"unknown item {d['item_id']!r}", "item_id")
        if clean or not imp._unchanged("response", src, old, d, rec.response_record):
            rows.append(d)
            kept.append(src)
    imp._write("response", writes.insert_responses, rows, kept)


def contracts_of(imp: Importer, response_ids: set[str]) -> dict[str, Contract]:
    """The contract of each stored response among `response_ids` (by response id)."""
    item_of = reads.response_items(imp.db, response_ids)
    missing = set(item_of.values()) - imp._contracts.keys()
    if len(imp._contracts) + len(missing) > CONTRACT_CACHE:
        imp._contracts.clear()
        missing = set(item_of.values())
    for item_id, row in reads.item_contracts(imp.db, missing).items():
        imp._contracts[item_id] = Contract.of(row)
    out: dict[str, Contract] = {}
    for rid, item_id in item_of.items():
        c = imp._contracts.get(item_id)
        if c is not None:
            out[rid] = c
    return out


def marks(imp: Importer, src: SourceRecord, d: dict[str, Any], c: Contract | None
           ) -> tuple[int | None, str | None, str | None]:
    """Check marks against the response's contract: (error, direction, observed as
    stored JSON)."""
    if c is None:
        raise imp.fail(src, f"unknown response {d['response_id']!r}", "response_id")
    if d["observed"] is None:
        return d["error"], None, None
    given = tuple(d["observed"])
    key = (c.shape, given)
    hit = imp._verdicts.get(key)
    if hit is None:
        bad = unknown_ids(c.req, c.forb, given)
        if bad:
            raise imp.fail(src, f"not a contract item of this response's item: "
                                 f"{', '.join(bad)}", "observed")
        verdict = evaluate(c.req, c.forb, given, c.kinds)
        if len(imp._verdicts) >= VERDICT_CACHE:
            imp._verdicts.clear()
        hit = imp._verdicts[key] = (verdict.error, verdict.direction.value,
                                     dumps(list(given)))
    if d["error"] is not None and d["error"] != hit[0]:
        raise imp.fail(src, f"error={d['error']} disagrees with the marks in `observed` "
                             f"(which give error={hit[0]})", "error")
    return hit


def judgments(imp: Importer, srcs: list[SourceRecord]) -> None:
    contracts = contracts_of(imp, {s.data["response_id"] for s in srcs})
    stored = imp._stored("judgment", srcs, reads.judgments_by_id)
    if imp.clean("judgment", srcs, stored):
        rows, kept = _new_judgments(imp, srcs, contracts), srcs
    else:
        rows, kept = [], []
        chunk_seen: set[str] = set()
        for src in srcs:
            d = src.data
            old = imp._fresh("judgment", src, stored, chunk_seen)
            error, direction, observed = marks(imp, src, d, contracts.get(d["response_id"]))
            # Compared as it would be stored: the error the marks give.
            if old is not None and imp._unchanged("judgment", src, old,
                                                  {**d, "error": error}, rec.judgment_record):
                continue
            rows.append(_judgment_row(d, error, direction, observed, imp._now))
            kept.append(src)
    imp._write("judgment", writes.insert_judgment_rows, rows, kept)


def _new_judgments(imp: Importer, srcs: list[SourceRecord], contracts: dict[str, Contract]
                   ) -> list[tuple[Any, ...]]:
    """The rows of a chunk of judgments none of which is stored or repeated (`clean`): the
    verdict cache is read inline and `marks` is called only on a miss or a disagreement,
    where it computes, or words the error, as for any judgment."""
    verdicts, now = imp._verdicts, imp._now
    rows: list[tuple[Any, ...]] = []
    for src in srcs:
        d = src.data
        c, given = contracts.get(d["response_id"]), d["observed"]
        hit: tuple[int | None, str | None, str | None] | None = (
            None if c is None or given is None else verdicts.get((c.shape, tuple(given))))
        if hit is None or (d["error"] is not None and d["error"] != hit[0]):
            hit = marks(imp, src, d, c)
        rows.append(_judgment_row(d, *hit, now))
    return rows


def _judgment_row(d: dict[str, Any], error: int | None, direction: str | None,
                  observed: str | None, now: str) -> tuple[Any, ...]:
    evidence = d["evidence"]
    return (d["id"], d["response_id"], d["judge"], d["mode"], observed, error, direction,
            None if evidence is None else dumps(evidence), d["facet"], d["rationale"], now)


def labels(imp: Importer, srcs: list[SourceRecord]) -> None:
    """Labels and adjudications of one chunk, into the annotation log."""
    ids = {s.data["response_id"] for s in srcs}
    contents = reads.response_contents(imp.db, ids)
    labelled = reads.annotated(imp.db, "copal", ids)
    contracts = {rid: Contract.of(c) for rid, c in contents.items()}
    events: list[log.NewEvent] = []
    kept: list[SourceRecord] = []
    for src in srcs:
        d = src.data
        if d["type"] == "label":
            who, role = d["annotator"], log.ANNOTATOR
            imp._once(("label", d["response_id"], who), src.path, src.line, "annotator")
        else:
            who, role = d["adjudicator"], log.ADJUDICATOR
            imp._once(("adjudication", d["response_id"]), src.path, src.line,
                       "response_id")
        c = contracts.get(d["response_id"])
        error, direction, _ = marks(imp, src, d, c)
        if d["response_id"] in labelled and same_label(imp, d, who, role, error):
            continue
        assert c is not None  # marks() refused a label on an unknown response
        content = contents[d["response_id"]]
        events.append(log.NewEvent(
            suite="copal", subject=d["response_id"], annotator=who, role=role,
            action="label", payload=CopalLabel(
                observed=d["observed"], error=None if error is None else 1 if error else 0,
                direction=direction, facet=d["facet"], note=d["note"]),
            content_sha256=content_sha256(c.query, c.required, c.forbidden,
                                          content.response or ""),
            created_at=d["created_at"]))
        kept.append(src)
    kind = srcs[0].data["type"]
    imp.insert(kind, kept, log.append_many, events)
    imp.written[kind] += len(events)


def same_label(imp: Importer, d: dict[str, Any], who: str, role: str, error: int | None) -> bool:
    """Whether the current label (decision) already says what `d` says."""
    if role == log.ANNOTATOR:
        stored = log.current(imp.db, "copal", d["response_id"], who)
        return stored is not None and same(rec.label_record(stored), {**d, "error": error})
    stored = log.decision(imp.db, "copal", d["response_id"])
    return stored is not None and same(rec.adjudication_record(stored),
                                        {**d, "error": error})
