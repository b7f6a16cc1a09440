"""`fast_init`: typed rows built in bulk (an export's 300,000 judgments) fill their slots
directly; the row must be the same row a dataclass's own `__init__` builds, and still frozen."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass

import pytest

from store.artifacts.records import JudgmentRow, ResponseRow
from store.pipeline.rows import ItemRow, fast_init


def _plain(row_type: type) -> type:
    """The same fields as a dataclass with its own generated `__init__`."""
    return dataclass(frozen=True, slots=True)(type(row_type.__name__, (), {
        "__annotations__": {f.name: f.type for f in dataclasses.fields(row_type)}}))


@pytest.mark.parametrize("row_type", [JudgmentRow, ResponseRow, ItemRow])
def test_a_row_is_the_row_the_dataclass_init_builds_and_stays_frozen(row_type: type) -> None:
    values = [f"v{i}" for i in range(len(dataclasses.fields(row_type)))]
    row, twin = row_type(*values), _plain(row_type)(*values)
    assert dataclasses.astuple(row) == dataclasses.astuple(twin) == tuple(values)
    assert repr(row).split("(", 1)[1] == repr(twin).split("(", 1)[1]
    assert row == row_type(*values) and hash(row) == hash(row_type(*values))
    assert row_type(**{f.name: v for f, v in zip(dataclasses.fields(row_type), values,
                                                strict=True)}) == row
    with pytest.raises(FrozenInstanceError):
        row.id = "other"
    with pytest.raises(TypeError):
        row_type(*values[:-1])  # every field is required, as before


def test_it_refuses_a_row_type_its_init_would_not_match() -> None:
    @dataclass(frozen=True, slots=True)
    class WithDefault:
        a: str
        b: str = "x"

    @dataclass(slots=True)
    class Mutable:
        a: str

    @dataclass(frozen=True)
    class NoSlots:
        a: str

    for row_type in (WithDefault, Mutable, NoSlots):
        with pytest.raises(TypeError, match="fast_init"):
            fast_init(row_type)
