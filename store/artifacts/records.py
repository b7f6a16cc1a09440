"""Typed rows of the artifact tables not covered by `store/pipeline/rows.py`: COMPASS queries,
responses and judgments; COPAL responses and judgments; what a label is given on; the demo
summaries; and `Stored`, a row with its rowid (what an importer's duplicate check needs).

Each is one row as stored, JSON columns decoded; the store builds them from a `sqlite3.Row` and
callers read attributes, turning one into a dict (`dataclasses.asdict`) only at an output
boundary. Row types that `from_row` a whole row declare their fields in their table's column
order (`store.pipeline.rows.columns` gives the SELECT list).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from store.db import loads
from store.pipeline.rows import fast_init

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Stored(Generic[T]):
    """A stored row with its rowid: an importer tells the rows it wrote itself (above the
    rowid the import began at) from the rows stored before."""

    rowid: int
    row: T


@fast_init
@dataclass(frozen=True, slots=True)
class ResponseRow:
    """One `responses` row; `text` is None for a failed call."""

    id: str
    item_id: str
    model: str
    variant: str
    text: str | None
    failure: str | None
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row | tuple[Any, ...]) -> ResponseRow:
        return cls(*row)


@fast_init
@dataclass(frozen=True, slots=True)
class JudgmentRow:
    """One `judgments` row: `observed` (the marked contract item ids) and `evidence` decoded
    from their JSON; None when not given."""

    id: str
    response_id: str
    judge: str
    mode: str
    observed: tuple[str, ...] | None
    error: int | None
    direction: str | None
    evidence: Any  # free-form JSON a judge gave (quotes by item id), kept as given
    facet: str | None
    rationale: str | None
    failure: str | None
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row | tuple[Any, ...]) -> JudgmentRow:
        # Field by field rather than through a list: an export reads every judgment this way.
        observed, evidence = row[4], row[7]
        return cls(row[0], row[1], row[2], row[3],
                   None if observed is None else marked_ids(observed), row[5], row[6],
                   None if evidence is None else json.loads(evidence), row[8], row[9], row[10],
                   row[11], row[12])


@lru_cache(maxsize=4096)
def marked_ids(text: str) -> tuple[str, ...]:
    """A stored `observed` column as a tuple of contract item ids. Judgments share a handful
    of mark sets (a contract has a few items), so an export of 300,000 judgments decodes each
    distinct one once; a tuple is immutable, so sharing it is safe."""
    return tuple(json.loads(text))


# A `required` or `forbidden` column decoded as stored: the content hash of a label is taken
# over exactly this JSON, so it is not rebuilt from typed contract items.
ContractJson = list[dict[str, Any]]


def _contract_json(text: str | None) -> ContractJson:
    value = loads(text)
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class ItemContract:
    """An item's world, query and contract (stored JSON, decoded)."""

    id: str
    world_id: str
    query: str
    required: ContractJson
    forbidden: ContractJson

    @classmethod
    def from_row(cls, row: sqlite3.Row | tuple[Any, ...]) -> ItemContract:
        return cls(row[0], row[1], row[2], _contract_json(row[3]), _contract_json(row[4]))


@dataclass(frozen=True, slots=True)
class ResponseContent:
    """What a COPAL label is given on: the response text, its item's query and contract."""

    response_id: str
    response: str | None
    item_id: str
    query: str
    required: ContractJson
    forbidden: ContractJson

    @classmethod
    def from_row(cls, row: sqlite3.Row | tuple[Any, ...]) -> ResponseContent:
        return cls(row[0], row[1], row[2], row[3], _contract_json(row[4]),
                   _contract_json(row[5]))


@dataclass(frozen=True, slots=True)
class ModelErrors:
    """Per target model: judged selected items of one method (`n`) and how many erred (demo
    summary)."""

    model: str
    n: int
    errors: int

    @property
    def rate(self) -> float:
        return self.errors / self.n if self.n else float("nan")


@dataclass(frozen=True, slots=True)
class AlignedCount:
    """Per target model, variant and kind (allowed or denied): judged COMPASS responses (`n`)
    and how many are aligned (demo summary)."""

    model: str
    variant: str
    kind: str
    n: int
    aligned: int


@dataclass(frozen=True, slots=True)
class CompassQueryRow:
    """One `compass_queries` row; `attributes` and `matched` decoded from their JSON."""

    id: str
    world_id: str
    policy_id: str
    query_type: str
    strategy: str | None
    form: str | None
    parent_id: str | None
    text: str
    attributes: Any
    status: str
    matched: Any
    reason: str | None
    run_id: str | None
    created_at: str
    # An allowed-edge query's allowlist policy (its `policy_id` may be its parent's denylist
    # policy, where the public COMPASS code files it); None for the other types.
    allowlist_policy_id: str | None = None

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> CompassQueryRow:
        return cls(id=r["id"], world_id=r["world_id"], policy_id=r["policy_id"],
                   query_type=r["query_type"], strategy=r["strategy"], form=r["form"],
                   parent_id=r["parent_id"], text=r["text"], attributes=loads(r["attributes"]),
                   status=r["status"], matched=loads(r["matched"]), reason=r["reason"],
                   run_id=r["run_id"], created_at=r["created_at"],
                   allowlist_policy_id=r["allowlist_policy_id"])


@dataclass(frozen=True, slots=True)
class CompassResponseRow:
    """One `compass_responses` row; `text` is None for a failed call."""

    id: str
    query_id: str
    model: str
    variant: str
    text: str | None
    prefilter: str | None
    prefilter_model: str | None
    prefilter_reason: str | None
    failure: str | None
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> CompassResponseRow:
        return cls(id=r["id"], query_id=r["query_id"], model=r["model"], variant=r["variant"],
                   text=r["text"], prefilter=r["prefilter"], prefilter_model=r["prefilter_model"],
                   prefilter_reason=r["prefilter_reason"], failure=r["failure"],
                   run_id=r["run_id"], created_at=r["created_at"])


@dataclass(frozen=True, slots=True)
class CompassJudgmentRow:
    """One `compass_judgments` row; the three flags as stored (0, 1 or None)."""

    id: str
    response_id: str
    judge: str
    refused: int | None
    compliant: int | None
    aligned: int | None
    failure_mode: str | None
    rationale: str | None
    failure: str | None
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> CompassJudgmentRow:
        return cls(id=r["id"], response_id=r["response_id"], judge=r["judge"],
                   refused=r["refused"], compliant=r["compliant"], aligned=r["aligned"],
                   failure_mode=r["failure_mode"], rationale=r["rationale"],
                   failure=r["failure"], run_id=r["run_id"], created_at=r["created_at"])
