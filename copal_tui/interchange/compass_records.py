"""Importing COMPASS suite records (`compass_query`, `compass_response`, `compass_judgment`)
from JSONL interchange files: the reference and consistency checks the schema cannot make.

Called by `importer.Importer` (which owns the transaction, the duplicate check within one
import and the "identical or error" rule for ids already stored). Beyond references, a query's
intended policy must be of the kind its type is written against (an allowed-edge rewrite may be
filed under its parent's denylist policy when it names its allowlist policy in
`allowlist_policy_id`, as the public COMPASS code files it), and a judgment's `aligned`
must follow from `refused` and `compliant` by the alignment rule of the query's type: a file
cannot carry a PAS that its own verdicts contradict. A failed response or judgment stored for
the same slot is pipeline state, not a result; an imported result replaces it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from copal_tui.domain.compass import intended_kind, is_aligned
from copal_tui.interchange import records as rec
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.loader import SourceRecord
from store.artifacts import compass, reads
from store.artifacts import compass_interchange as io
from store.db import Database

# A stored row of any type, compared through its type's export function.
_Row = TypeVar("_Row")


class Host(Protocol):
    db: Database
    written: Counter[str]

    def _once(self, key: tuple[str, ...], path: Any, line: int | None, field: str) -> None: ...

    def fail(self, src: SourceRecord, message: str, field: str | None = None) -> ImportFailure:
        ...

    def _need_world(self, src: SourceRecord, world_id: str) -> None: ...

    def _exists(self, src: SourceRecord, stored: _Row | None, d: dict[str, Any],
                export: Callable[[_Row], dict[str, Any]]) -> bool: ...


def query(imp: Host, src: SourceRecord, d: dict[str, Any]) -> None:
    imp._once(("compass_query", d["id"]), src.path, src.line, "id")
    imp._need_world(src, d["world_id"])
    policy = reads.policy(imp.db, d["world_id"], d["policy_id"])
    if policy is None:
        raise imp.fail(src, f"unknown policy {d['policy_id']!r} in world {d['world_id']!r}",
                       "policy_id")
    want = intended_kind(d["query_type"])
    allow_id = d.get("allowlist_policy_id")
    if allow_id is not None:
        allow = reads.policy(imp.db, d["world_id"], allow_id)
        if d["query_type"] != "allowed_edge" or allow is None or allow.kind != "allow":
            raise imp.fail(src, "allowlist_policy_id names the allowlist policy of an "
                                f"allowed-edge query; {allow_id!r} is not one here",
                           "allowlist_policy_id")
    # An allowed-edge rewrite may be filed under its parent's denylist policy, as the public
    # COMPASS code files it, when its allowlist policy is named beside it.
    filed_as_reference = allow_id is not None and d["parent_id"] is not None
    if policy.kind != want and not (filed_as_reference and policy.kind == "deny"):
        raise imp.fail(src, f"{d['query_type']} queries are written against {want} "
                            f"policies; {d['policy_id']!r} is a {policy.kind} policy",
                       "policy_id")
    if d["parent_id"] is not None:
        parent = io.query(imp.db, d["parent_id"])
        if parent is None or parent.world_id != d["world_id"]:
            raise imp.fail(src, f"unknown parent query {d['parent_id']!r}", "parent_id")
    if imp._exists(src, io.query(imp.db, d["id"]), d, rec.compass_query_record):
        return
    compass.insert_query(imp.db, d)
    imp.written["compass_query"] += 1


def response(imp: Host, src: SourceRecord, d: dict[str, Any]) -> None:
    imp._once(("compass_response", d["id"]), src.path, src.line, "id")
    if io.query(imp.db, d["query_id"]) is None:
        raise imp.fail(src, f"unknown COMPASS query {d['query_id']!r}", "query_id")
    compass.delete_failed_response(imp.db, d["query_id"], d["model"], d["variant"])
    if imp._exists(src, io.response(imp.db, d["id"]), d, rec.compass_response_record):
        return
    slot = io.response_for(imp.db, d["query_id"], d["model"], d["variant"])
    if slot is not None:
        raise imp.fail(src, f"query {d['query_id']!r} already has a {d['variant']} response "
                            f"from {d['model']!r} (id {slot.id!r})", "id")
    compass.insert_response(imp.db, d)
    imp.written["compass_response"] += 1


def judgment(imp: Host, src: SourceRecord, d: dict[str, Any]) -> None:
    imp._once(("compass_judgment", d["id"]), src.path, src.line, "id")
    query_type = io.response_query_type(imp.db, d["response_id"])
    if query_type is None:
        raise imp.fail(src, f"unknown COMPASS response {d['response_id']!r}", "response_id")
    want = is_aligned(query_type, d["refused"], d["compliant"])
    if d["aligned"] != want:
        raise imp.fail(src, f"aligned={_js(d['aligned'])} disagrees with refused="
                            f"{_js(d['refused'])} and compliant={_js(d['compliant'])} on a "
                            f"{query_type} query (which give aligned={_js(want)})", "aligned")
    compass.delete_failed_judgment(imp.db, d["response_id"], d["judge"])
    if imp._exists(src, io.judgment(imp.db, d["id"]), d, rec.compass_judgment_record):
        return
    slot = io.judgment_for(imp.db, d["response_id"], d["judge"])
    if slot is not None:
        raise imp.fail(src, f"response {d['response_id']!r} already has a judgment by "
                            f"{d['judge']!r} (id {slot.id!r})", "id")
    compass.insert_judgment(imp.db, d)
    imp.written["compass_judgment"] += 1


def _js(value: bool) -> str:
    return "true" if value else "false"
