"""Typed rows of the COMPASS tables, shared by the COMPASS store modules that read them whole.

Each is one row as stored, JSON columns decoded; the store builds them from a `sqlite3.Row` and
callers read attributes, turning one into a dict (`dataclasses.asdict`) only at an output
boundary.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from store.db import loads


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

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> CompassQueryRow:
        return cls(id=r["id"], world_id=r["world_id"], policy_id=r["policy_id"],
                   query_type=r["query_type"], strategy=r["strategy"], form=r["form"],
                   parent_id=r["parent_id"], text=r["text"], attributes=loads(r["attributes"]),
                   status=r["status"], matched=loads(r["matched"]), reason=r["reason"],
                   run_id=r["run_id"], created_at=r["created_at"])


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
