"""`copal import --from compass-judged PATH... --judge NAME`: judged results in the public
COMPASS layout (github.com/AIM-Intelligence/COMPASS) into COMPASS suite rows, so they can be
labelled, browsed and summarised like copal's own runs.

Files are `judged_<query_type>_<Organisation>_<model>_<timestamp>.jsonl` as scripts/
response_judge.py writes them; a PATH is such a file or a folder holding them directly (the glob
of COMPASS's analysis). Each non-blank line is an object with id, company, query, model,
query_type (base, allowed_edge, denied_edge), original_response, judgement
{complies_with_policies, response_type, relevant_allowlist_policies, relevant_denylist_policies,
reasoning}, is_correct and has_logical_contradiction; a failed judge call has judgement null
and evaluation_failed true.

Where things come from, as scripts/analyze_judged_results.py takes them:
- the model from the FILE NAME: what follows the organisation's name, up to the timestamp
  (COMPASS matches its eight fixed names; copal the names of the imported organisations, right
  after the query type, longest first, so a name with `_` works too);
- the organisation from the row's `company`: the world of that name and id `slug(name)`, which
  `copal import --from compass` made; an organisation not imported is an error naming it;
- the query type from the row; a base query is allowed when its id contains `-allowlist-`,
  denied when it contains `-denylist-`. A base row whose id names neither is REFUSED (COMPASS's
  analysis drops it as "Unknown"; copal cannot store a query without a type): without the row
  the table is COMPASS's.

Rows written (see `_query` for ids and policies): a kept query, a `base` response of the model
and a judgment by NAME: refused = response_type == "refused", compliant =
complies_with_policies, aligned by response_judge.py's rule (`compass_rules.is_correct`), which
must agree with the row's is_correct. A row with a logical contradiction, a failed evaluation
or no boolean verdict keeps its query and response; its judgment is stored unusable, with the
reason in `failure`, left out of every figure and counted in the report's exclusions (COMPASS's
analysis stops reading the file at such a row; copal reads on).

Every path is read and checked before the first write; the call is one transaction. A row stored
identically is skipped, one stored with other content is an error, and so is one query and
model twice in a call (COMPASS's analysis would count it twice). A failed response or judgment
of a copal run in the same slot is pipeline state and is replaced.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from copal_tui.domain import compass_rules as rules
from copal_tui.domain.compass import STRATEGIES, intended_kind
from copal_tui.interchange.compass_import import slug
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.reading import text_lines
from copal_tui.interchange.strict import loads_json
from copal_tui.pipeline.compass_common import judgment_id, response_id
from store.artifacts import compass, reads
from store.artifacts import compass_interchange as io
from store.artifacts import compass_judged as jsql
from store.db import Database, write

# A query whose id names no policy of its organisation (not COMPASS's id scheme): not a valid
# policy id, so it can never be mistaken for one.
UNATTRIBUTED = "(unattributed)"
KEPT_REASON = "verified by COMPASS (imported with its judged results)"
_BAD_ID = re.compile(r"[^A-Za-z0-9_.:/@+-]+")
_CONFIG = re.compile(r"-denied_edge_queries_synthesis_(short|long)$")
_QUERY_FIELDS = ("world_id", "policy_id", "query_type", "strategy", "form", "text", "attributes",
                 "status", "matched", "reason")
_JUDGMENT_FIELDS = ("refused", "compliant", "aligned", "failure_mode", "rationale", "failure")


@dataclass
class Row:
    path: Path
    line: int
    query: dict[str, Any]
    parent: str | None  # stored id of a denied edge's base query
    response: dict[str, Any]
    judgment: dict[str, Any]
    excluded: str | None  # key of compass_rules.FAILURES


@dataclass
class JudgedImport:
    written: Counter[str] = field(default_factory=Counter)
    skipped: int = 0
    excluded: Counter[str] = field(default_factory=Counter)


# Organisation name -> (world id, {policy id: kind}).
Orgs = dict[str, tuple[str, dict[str, str]]]


def organisations(db: Database) -> Orgs:
    """The organisations `copal import --from compass` made: a world named after the
    organisation whose id is the slug of that name."""
    return {name: (slug(name), {p.id: p.kind for p in reads.policies(db, slug(name))})
            for name, ids in jsql.worlds_by_name(db).items() if slug(name) in ids}


def import_judged(db: Database, paths: list[Path], judge: str) -> JudgedImport:
    """Import judged-result files and folders under `judge` (see the module docstring)."""
    if not judge.strip():
        raise ImportFailure("--judge", "the judge name is empty")
    orgs = organisations(db)
    files: dict[Path, Path] = {}  # one file named twice is read once; errors name it as given
    for p in paths:
        for f in judged_files(p):
            files.setdefault(f.resolve(), f)
    rows = [r for f in files.values() for r in _read_file(f, orgs, judge)]
    _check_batch(rows)
    out = JudgedImport()
    with write(db):
        _write_queries(db, rows, out)
        for r in rows:
            _write_response(db, r, out)
            _write_judgment(db, r, out)
            if r.excluded:
                out.excluded[r.excluded] += 1
    return out


def summary_lines(done: JudgedImport) -> list[str]:
    """What `copal import` prints: the rows written, those already stored, the exclusions."""
    total = sum(done.written.values())
    detail = ", ".join(f"{n} {t}" for t, n in sorted(done.written.items())) or "nothing new"
    lines = [f"imported {total} record(s): {detail}; {done.skipped} already stored identically"]
    for key, n in sorted(done.excluded.items()):
        lines.append(f"{n} row(s) without a usable verdict, kept and left out of the figures: "
                     f"{rules.FAILURES[key]}")
    return lines


def judged_files(path: Path) -> list[Path]:
    if not path.exists():
        raise ImportFailure(path, "no such file or folder")
    if path.is_dir():
        found = sorted(p for p in path.glob("judged_*.jsonl") if p.is_file())
        if not found:
            raise ImportFailure(path, "no judged_*.jsonl files in this folder")
        return found
    if not (path.name.startswith("judged_") and path.suffix == ".jsonl"):
        raise ImportFailure(path, "not a COMPASS judged file (judged_<query_type>_<Organisation>"
                                  "_<model>_<timestamp>.jsonl): the model is read from the name")
    return [path]


def model_from_name(path: Path, names: set[str]) -> str:
    """The model in a judged file's name (see the module docstring)."""
    remainder = path.stem.removeprefix("judged_")
    prefix, sep, _timestamp = remainder.rpartition("_")
    qt = next((t for t in sorted(rules.COMPASS_QUERY_TYPES, key=len, reverse=True)
               if prefix.startswith(t + "_")), None)
    if not sep or qt is None:
        raise ImportFailure(path, "the file name is not judged_<query_type>_<Organisation>_"
                                  "<model>_<timestamp>.jsonl (query type base, allowed_edge "
                                  "or denied_edge)")
    parts = prefix[len(qt) + 1:].split("_")
    for end in range(len(parts) - 1, 0, -1):
        if "_".join(parts[:end]) in names:
            model = "_".join(parts[end:])
            if not model:
                raise ImportFailure(path, "no model between the organisation and the "
                                          "timestamp in the file name")
            return model
    raise ImportFailure(path, f"organisation {parts[0]!r} named in the file name is not "
                              "imported; import its scenario folder first (copal import "
                              "--from compass DIR)")


def _read_file(path: Path, orgs: Orgs, judge: str) -> list[Row]:
    model = model_from_name(path, set(orgs))
    out = [_row(path, n, text, orgs, model, judge) for n, text in text_lines(path)]
    if not out:
        raise ImportFailure(path, "file is empty")
    return out


def _fail(path: Path, line: int, message: str, field: str | None = None) -> ImportFailure:
    return ImportFailure(path, message, line=line, field=field)


def _row(path: Path, line: int, text: str, orgs: Orgs, model: str, judge: str) -> Row:
    try:
        d = loads_json(text, path, line)
    except json.JSONDecodeError as exc:
        raise _fail(path, line, f"bad JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(d, dict):
        raise _fail(path, line, "a judged row must be a JSON object")
    for key in ("id", "company", "query"):
        if not isinstance(d.get(key), str) or not d[key].strip():
            raise _fail(path, line, "missing, empty or not a string", key)
    if not isinstance(d.get("original_response"), str):
        raise _fail(path, line, "missing or not a string", "original_response")
    if d.get("query_type") not in rules.COMPASS_QUERY_TYPES:
        raise _fail(path, line, f"must be one of {', '.join(rules.COMPASS_QUERY_TYPES)}",
                    "query_type")
    if d["company"] not in orgs:
        raise _fail(path, line, f"organisation {d['company']!r} is not imported; import its "
                                "scenario folder first (copal import --from compass DIR)",
                    "company")
    world_id, kinds = orgs[d["company"]]
    qtype = rules.base_query_type(d["id"]) if d["query_type"] == "base" else d["query_type"]
    if qtype is None:
        raise _fail(path, line, f"base query id {d['id']!r} names neither -allowlist- nor "
                                "-denylist-: COMPASS's analysis leaves such a row out as "
                                "Unknown and copal cannot type it; remove the row", "id")
    query, parent = _query(d["id"], world_id, qtype, d["query"], kinds)
    rid = response_id(query["id"], model, "base")
    response = {"id": rid, "query_id": query["id"], "model": model, "variant": "base",
                "text": d["original_response"]}
    verdict, excluded = _verdict(path, line, d, qtype)
    judgment = {"id": judgment_id(rid, judge), "response_id": rid, "judge": judge,
                "failure_mode": None, **verdict}
    return Row(path, line, query, parent, response, judgment, excluded)


def _query(cid: str, world_id: str, qtype: str, text: str,
           kinds: dict[str, str]) -> tuple[dict[str, Any], str | None]:
    """The query row and its parent's id. The policy comes from the COMPASS id: base
    `<Org>-<list>-<policy>-<n>`, allowed edge `allowed_edge-<Org>-allowlist-<denied policy>-<n>-
    <allowlist policy>` (the allowlist policy it is written against), denied edge
    `denied_edge-<Org>-denylist-<policy>-<n>-<attack>-<config>`; the longest policy name of
    the right kind that fits, else UNATTRIBUTED."""
    kind = intended_kind(qtype)
    names = sorted((p for p, k in kinds.items() if k == kind), key=len, reverse=True)
    listed = "allowlist" if kind == "allow" else "denylist"
    if qtype == "allowed_edge":
        policy = next((p for p in names if cid.endswith(f"-{p}")), None)
    else:
        policy = next((p for p in names if re.search(
            rf"-{listed}-{re.escape(p)}-\d+(?:-|$)", cid)), None)
    attributes: dict[str, Any] = {"compass_id": cid}
    row: dict[str, Any] = {"id": stored_id(cid), "world_id": world_id,
                           "policy_id": policy or UNATTRIBUTED, "query_type": qtype,
                           "strategy": None, "form": None, "text": text,
                           "attributes": attributes, "status": "kept", "matched": None,
                           "reason": KEPT_REASON}
    if qtype == "allowed_edge" and policy:
        row["allowlist_policy_id"] = policy  # filed under it too, as imports always were
    parent = None
    m = re.match(rf"^denied_edge-(.+?-denylist-{re.escape(policy)}-\d+)-(.+)$", cid) \
        if policy and qtype == "denied_edge" else None
    if m:
        parent, attack = stored_id(m.group(1)), m.group(2)
        config = _CONFIG.search(attack)
        if config:
            row["form"], attack = config.group(1), attack[:config.start()]
            attributes["config"] = config.group(0)[1:]
        attributes["attack"] = attack
        name = re.sub(r"[^a-z0-9]+", "_", attack.lower()).strip("_")
        # An attack name that is not one of copal's strategies stays in attributes only.
        row["strategy"] = name if name in STRATEGIES else None
    return row, parent


def stored_id(compass_id: str) -> str:
    """A COMPASS id as a copal id: other characters become `_`; a long one is cut with a hash."""
    out = _BAD_ID.sub("_", compass_id)
    if not out[:1].isalnum():
        out = "q" + out
    if len(out) > 200:
        out = out[:183] + "-" + hashlib.sha256(compass_id.encode()).hexdigest()[:16]
    return out


def _verdict(path: Path, line: int, d: dict[str, Any],
             qtype: str) -> tuple[dict[str, Any], str | None]:
    """The judgment fields of a row, and why it is unusable (None when usable)."""
    j = d.get("judgement")
    if j is not None and not isinstance(j, dict):
        raise _fail(path, line, "must be an object or null", "judgement")
    for key in ("evaluation_failed", "has_logical_contradiction"):
        if d.get(key) not in (None, True, False):
            raise _fail(path, line, "must be true, false or absent", key)
    j = j or {}
    reasoning = j.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        raise _fail(path, line, "must be a string", "judgement.reasoning")
    lists = []
    for key in ("relevant_allowlist_policies", "relevant_denylist_policies"):
        value = j.get(key)
        if value is not None and not (isinstance(value, list)
                                      and all(isinstance(x, str) for x in value)):
            raise _fail(path, line, "must be a list of policy names or null",
                        f"judgement.{key}")
        lists.append(value)
    text = rules.rationale(reasoning or "", lists[0], lists[1])
    complies, rtype, correct = (j.get("complies_with_policies"), j.get("response_type"),
                                d.get("is_correct"))
    excluded = ("evaluation_failed" if d.get("evaluation_failed") else
                "no_verdict" if not j else
                "logical_contradiction" if d.get("has_logical_contradiction") else
                "no_verdict" if not (isinstance(complies, bool) and rtype in rules.RESPONSE_TYPES
                                     and isinstance(correct, bool)) else None)
    if excluded:
        # What COMPASS recorded stays readable beside the reason.
        said = {k: v for k, v in (("response_type", rtype), ("complies_with_policies", complies),
                                  ("is_correct", correct),
                                  ("failure_reason", d.get("failure_reason"))) if v is not None}
        return {"refused": None, "compliant": None, "aligned": None,
                "rationale": f"{text}\nCOMPASS recorded: {json.dumps(said)}",
                "failure": rules.FAILURES[excluded]}, excluded
    aligned = rules.is_correct(qtype, str(rtype), bool(complies))
    if aligned != correct:
        raise _fail(path, line, f"is_correct={json.dumps(correct)} disagrees with response_judge."
                                f"py's rule, which gives {json.dumps(aligned)} for a {qtype} "
                                f"query with response_type={rtype!r} and complies_with_policies="
                                f"{json.dumps(complies)}", "is_correct")
    return {"refused": rtype == "refused", "compliant": complies, "aligned": aligned,
            "rationale": text, "failure": None}, None


def _check_batch(rows: list[Row]) -> None:
    queries: dict[str, Row] = {}
    slots: dict[tuple[str, str], Row] = {}
    for r in rows:
        first = queries.setdefault(r.query["id"], r)
        if first.query != r.query:
            what = next(k for k in r.query if r.query[k] != first.query[k])
            raise _fail(r.path, r.line, f"query {r.query['id']!r} differs from the one in "
                                        f"{first.path}:{first.line} ({what} differs)", "id")
        key = (r.query["id"], r.response["model"])
        earlier = slots.setdefault(key, r)
        if earlier is not r:
            raise _fail(r.path, r.line, f"query {r.query['attributes']['compass_id']!r} and "
                                        f"model {key[1]!r} also come from {earlier.path}:"
                                        f"{earlier.line}; COMPASS's analysis would count both: "
                                        "import one run per model", "id")


def _write_queries(db: Database, rows: list[Row], out: JudgedImport) -> None:
    firsts = {r.query["id"]: r for r in reversed(rows)}
    # Base queries first, so a denied edge finds the parent imported in the same call.
    for qid, r in sorted(firsts.items(), key=lambda kv: (kv[1].parent is not None, kv[0])):
        parent = r.parent if r.parent is not None and (
            r.parent in firsts or _stored_in(db, r.parent, r.query["world_id"])) else None
        q = {**r.query, "parent_id": parent}
        stored = io.query(db, qid)
        if stored is None:
            compass.insert_query(db, q)
            out.written["compass_query"] += 1
            continue
        differs = [k for k in _QUERY_FIELDS if getattr(stored, k) != q[k]]
        if None not in (stored.parent_id, parent) and stored.parent_id != parent:
            differs.append("parent_id")
        if differs:
            raise _fail(r.path, r.line, f"query {qid!r} is already stored with other content "
                                        f"({differs[0]} differs)", "id")
        if parent is not None and stored.parent_id is None:
            jsql.set_parent(db, qid, parent)  # its base query came in a later import
            out.written["parent link"] += 1
        out.skipped += 1


def _stored_in(db: Database, query_id: str, world_id: str) -> bool:
    stored = io.query(db, query_id)
    return stored is not None and stored.world_id == world_id


def _write_response(db: Database, r: Row, out: JudgedImport) -> None:
    resp = r.response
    compass.delete_failed_response(db, resp["query_id"], resp["model"], "base")
    stored = io.response_for(db, resp["query_id"], resp["model"], "base")
    if stored is None:
        compass.insert_response(db, resp)
        out.written["compass_response"] += 1
    elif stored.id == resp["id"] and stored.text == resp["text"]:
        out.skipped += 1
    else:
        raise _fail(r.path, r.line, f"query {resp['query_id']!r} already has a base response "
                                    f"from {resp['model']!r} with other content",
                    "original_response")


def _write_judgment(db: Database, r: Row, out: JudgedImport) -> None:
    j = r.judgment
    stored = io.judgment_for(db, j["response_id"], j["judge"])
    if stored is not None and stored.failure is not None and \
            stored.failure not in rules.FAILURES.values():
        compass.delete_failed_judgment(db, j["response_id"], j["judge"])  # a run's failure
        stored = None
    if stored is None:
        compass.insert_judgment(db, j)
        out.written["compass_judgment"] += 1
        return
    flags = {k: None if getattr(stored, k) is None else bool(getattr(stored, k))
             for k in ("refused", "compliant", "aligned")}
    differs = [k for k in _JUDGMENT_FIELDS if {**asdict(stored), **flags}[k] != j[k]]
    if stored.id != j["id"] or differs:
        raise _fail(r.path, r.line, f"response {j['response_id']!r} already has a judgment by "
                                    f"{j['judge']!r} with other content "
                                    f"({(differs or ['id'])[0]} differs)", "judgement")
    out.skipped += 1
