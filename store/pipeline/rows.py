"""Typed rows the pipeline stages read: worlds, policies, clauses, compositions, items (with
their contract items) and rounds of the dialogue-variant loop.

Each row type declares its fields in the order of its table's columns; the readers select
exactly those columns (`columns`), so `from_row` takes the row as it comes and
`dataclasses.asdict` gives back the mapping a `dict(row)` of `SELECT *` gave.
JSON columns are decoded here, once (lists as tuples, so a frozen row stays immutable; JSON
writes a tuple as it writes a list, so a prompt built from either is the same text).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, TypeVar

from store.db import loads


def columns(row_type: type, alias: str = "") -> str:
    """The SELECT list of a row type: its fields, in order (never `*`, so a row reads the same
    whatever order a store's columns were added in)."""
    return ", ".join(f"{alias}{f.name}" for f in fields(row_type))


_Row = TypeVar("_Row")


def fast_init(row_type: type[_Row]) -> type[_Row]:
    """Give a frozen, slotted row dataclass an `__init__` that fills its slots directly.

    A frozen dataclass's own `__init__` sets each field through `object.__setattr__` (its
    `__setattr__` refuses): 3.9 us for a 13-field judgment here, a fifth of an export's time
    over 300,000 of them. Writing each slot through its descriptor is the same assignment at
    half the cost; the instance is as frozen, hashed and compared as before. Only for row types
    whose fields are all required and which have no `__post_init__`: what `__init__` does for
    them is exactly this."""
    found = fields(row_type)  # type: ignore[arg-type]
    params = row_type.__dataclass_params__  # type: ignore[attr-defined]
    if not (params.frozen and "__slots__" in row_type.__dict__) or hasattr(
            row_type, "__post_init__") or any(
            f.default is not MISSING or f.default_factory is not MISSING or not f.init
            for f in found):
        raise TypeError(f"fast_init needs a frozen, slotted row type of required fields: "
                        f"{row_type.__name__}")
    names = [f.name for f in found]
    scope = {f"_set_{n}": getattr(row_type, n).__set__ for n in names}
    exec(f"def __init__(self, {', '.join(names)}):\n"  # noqa: S102 - built from field names
         + "".join(f"    _set_{n}(self, {n})\n" for n in names), scope)
    init = scope["__init__"]
    init.__qualname__ = f"{row_type.__qualname__}.__init__"
    row_type.__init__ = init  # type: ignore[method-assign]
    return row_type


def _ids(text: str) -> tuple[str, ...]:
    value = loads(text)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _object(text: str | None) -> dict[str, Any] | None:
    value = loads(text)
    return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class ContractItem:
    """One item of a handling contract (R: required, F: forbidden), as stored in the items'
    `required` and `forbidden` JSON lists."""

    id: str
    text: str
    kind: str
    clause_id: str | None

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ContractItem:
        return cls(str(value["id"]), str(value["text"]), str(value["kind"]),
                   value.get("clause_id"))

    def view(self) -> dict[str, str | None]:
        """The item as stored and as a prompt shows it (its four keys)."""
        return {"id": self.id, "text": self.text, "kind": self.kind, "clause_id": self.clause_id}


Contract = tuple[ContractItem, ...]


def contract(text: str) -> Contract:
    """A `required` or `forbidden` column, decoded."""
    value = loads(text)
    return tuple(ContractItem.from_json(v) for v in value) if isinstance(value, list) else ()


def contract_view(items: Iterable[ContractItem]) -> list[dict[str, str | None]]:
    """Contract items as a prompt's JSON input carries them."""
    return [c.view() for c in items]


@dataclass(frozen=True, slots=True)
class WorldRow:
    id: str
    name: str
    industry: str
    use_case: str
    risk_tier: str
    context: str
    source_path: str | None
    created_at: str
    system_prompt: str | None
    explicit_refusal_prompt: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> WorldRow:
        return cls(*row)


@dataclass(frozen=True, slots=True)
class PolicyRow:
    """A policy of a world's inventory: the three fields every prompt shows."""

    id: str
    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class ClauseRow:
    id: str
    world_id: str
    policy_ids: tuple[str, ...]
    trigger: str
    scope: str
    effect: str | None
    source_span: str
    confidence: float | None
    audit_note: str | None
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ClauseRow:
        values = list(row)
        values[2] = _ids(values[2])
        return cls(*values)


@dataclass(frozen=True, slots=True)
class CompositionRow:
    id: str
    world_id: str
    clause_ids: tuple[str, ...]
    pattern: str
    status: str
    reason: str | None
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> CompositionRow:
        values = list(row)
        values[2] = _ids(values[2])
        return cls(*values)


@fast_init
@dataclass(frozen=True, slots=True)
class ItemRow:
    """A test item. `screening` is the stored JSON verdict (its keys differ by method and
    stage: the screening answer and decision, a projection's reasons, a baseline's planned
    provenance and mapping), decoded; None when the item was never screened."""

    id: str
    world_id: str
    composition_id: str | None
    pattern: str | None
    facet: str | None
    query: str
    required: Contract
    forbidden: Contract
    method: str
    parent_item_id: str | None
    selected: int
    trap: str | None
    screening: dict[str, Any] | None
    run_id: str | None
    created_at: str
    gate: str | None
    route: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ItemRow:
        values = list(row)
        values[6], values[7] = contract(values[6]), contract(values[7])
        values[12] = _object(values[12])
        return cls(*values)

    def contract_ids(self) -> list[str]:
        return [c.id for c in (*self.required, *self.forbidden)]


@dataclass(frozen=True, slots=True)
class ResponseToJudge:
    """An answered response of an active item, with its item's query and contract."""

    id: str
    item_id: str
    model: str
    variant: str
    text: str
    query: str
    required: Contract
    forbidden: Contract


@dataclass(frozen=True, slots=True)
class VariantRound:
    """One round of the dialogue-variant loop (table `dialogue_variants`)."""

    id: str
    dialogue_id: str
    turn_index: int
    round: int
    category: int
    key: str
    phase: int | None
    original_guideline: str
    modified_guideline: str | None
    original_reply: str
    new_reply: str | None
    behaviour_changed: int | None
    violation_detected: int | None
    kept: int
    reason: str | None
    failure: str | None
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> VariantRound:
        return cls(*row)
