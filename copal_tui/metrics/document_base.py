"""The building blocks of the typed report (`copal_tui.metrics.document`): `Metric`, a figure
that is either a number or undefined with the reason why, with its confidence `Interval`; and
`FlatModel`, the base of every section model, whose serialiser writes the report's JSON layout.

The section builders construct the models directly; `Metric.of` and `Interval.of` take the
builders' NaN for an undefined figure and keep None instead.

The report's JSON has one layout for every figure, kept because readers (and diffs) depend on
it: the value under its key (NaN in `to_dict()`, null in JSON, when undefined), `<key>_reason`
beside it when undefined, the interval as `ci_low` / `ci_high` (or prefixed names) with their
own `_reason` keys, or as an entry of a `ci` object for the bootstrap intervals of judge
validity. A `Flat` annotation on a metric field says which of those names and positions the
field uses; the keys of a section come in the order of its model's fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_serializer

# The reason given to an undefined figure that arrived without one (as the JSON writer does).
GENERIC_REASON = "undefined for these data"


def _undefined(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _nan(value: float | None) -> float:
    """None as NaN: `to_dict()` (and the JSON writer after it) uses NaN for an undefined
    figure."""
    return math.nan if value is None else value


class Interval(BaseModel):
    """A confidence interval; `low` and `high` are None when it is undefined, with `reason`.

    `resamples_defined` is set on bootstrap intervals: how many resamples gave a defined
    statistic, None when no resample was drawn (the bootstrap was off or had no items)."""

    model_config = ConfigDict(frozen=True)
    low: float | None
    high: float | None
    reason: str | None = None
    resamples_defined: int | None = None

    @classmethod
    def of(cls, low: float, high: float, reason: str | None = None,
           resamples_defined: int | None = None) -> Interval:
        """The interval from bounds that are NaN when undefined."""
        return cls(low=None if _undefined(low) else low, high=None if _undefined(high) else high,
                   reason=reason, resamples_defined=resamples_defined)

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        return self.low, self.high

    def ci_entry(self) -> dict[str, Any]:
        """The entry of a `ci` object (judge validity): a drawn bootstrap gives its count
        before the reasons, an undrawn one its reasons and then a count of 0."""
        out: dict[str, Any] = {"low": _nan(self.low), "high": _nan(self.high)}
        if self.resamples_defined is not None:
            out["resamples_defined"] = self.resamples_defined
        if self.reason is not None:
            out["low_reason"] = out["high_reason"] = self.reason
        if self.resamples_defined is None:
            out["resamples_defined"] = 0
        return out


class Metric(BaseModel):
    """One figure: `value` (None when undefined), `reason` (set when it is undefined; the one
    defined figure with a reason is a judge's sensitivity or specificity too close to chance
    for the Rogan-Gladen correction) and its `interval` when the report gives one. Counts stay
    ints, rates floats."""

    model_config = ConfigDict(frozen=True)
    value: int | float | None
    reason: str | None = None
    interval: Interval | None = None

    @classmethod
    def of(cls, value: float | None, reason: str | None = None,
           interval: Interval | None = None) -> Metric:
        """The metric of a value that is NaN (or None) when undefined; an undefined value
        without a reason gets the generic one."""
        if _undefined(value):
            return cls(value=None, reason=reason or GENERIC_REASON, interval=interval)
        return cls(value=value, reason=None, interval=interval)


@dataclass(frozen=True)
class Flat:
    """Where a metric field's keys go in its section's JSON.

    `low`/`high`: the interval's keys (none: no interval); `ci`: the interval is an entry of
    the section's `ci` object instead; `reasons_last`: the value's reason after the interval
    (COMPASS's layout); `interval_after` / `reason_after`: the interval (or the reason) is
    written after that later field rather than next to the value."""

    low: str | None = None
    high: str | None = None
    ci: bool = False
    reasons_last: bool = False
    interval_after: str | None = None
    reason_after: str | None = None


RATE = Flat(low="ci_low", high="ci_high")
CI = Flat(ci=True)
PLAIN = Flat()


@dataclass(frozen=True)
class Omit:
    """The key is left out (not null) when the field is None."""


OMIT = Omit()


def _unfold(value: Any) -> Any:
    """A field's value in the JSON's form (sections unfolded, containers copied)."""
    if isinstance(value, FlatModel):
        return value._unfold()
    if isinstance(value, dict):
        return {k: _unfold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unfold(v) for v in value]
    if isinstance(value, BaseModel):
        return value.model_dump()
    return value


def _meta(field: Any, kind: type) -> Any:
    return next((m for m in field.metadata if isinstance(m, kind)), None)


class FlatModel(BaseModel):
    """A section of the report (unknown fields are refused: every key of the JSON is typed)."""

    model_config = ConfigDict(extra="forbid")
    _flat: ClassVar[dict[str, Flat]]
    _omit: ClassVar[frozenset[str]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = cls.model_fields
        cls._flat = {n: f for n, fi in fields.items() if (f := _meta(fi, Flat)) is not None}
        cls._omit = frozenset(n for n, fi in fields.items() if _meta(fi, Omit) is not None)

    @model_serializer(mode="plain")
    def _unfold(self) -> dict[str, Any]:
        # A plain walk rather than pydantic's field serialisers: nested sections are unfolded
        # by the same loop, which keeps writing a large report to tens of milliseconds.
        out: dict[str, Any] = {}
        later: dict[str, list[tuple[str, Any]]] = {}
        ci_fields = [n for n, s in self._flat.items() if s.ci]
        ci: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            spec = self._flat.get(name)
            if spec is not None and isinstance(value, Metric):
                self._write_metric(name, value, spec, out, later, ci)
            elif not (value is None and name in self._omit):
                out[name] = _unfold(value)
            for key, item in later.pop(name, []):
                out[key] = item
            if ci_fields and name == ci_fields[-1]:
                out["ci"] = ci
        return out

    @staticmethod
    def _write_metric(name: str, m: Metric, spec: Flat, out: dict[str, Any],
                      later: dict[str, list[tuple[str, Any]]], ci: dict[str, Any]) -> None:
        reason = [] if m.reason is None else [(f"{name}_reason", m.reason)]
        interval: list[tuple[str, Any]] = []
        if spec.low and spec.high and m.interval is not None:
            interval = [(spec.low, _nan(m.interval.low)), (spec.high, _nan(m.interval.high))]
            if m.interval.reason is not None:
                interval += [(f"{spec.low}_reason", m.interval.reason),
                             (f"{spec.high}_reason", m.interval.reason)]
        elif spec.ci and m.interval is not None:
            ci[name] = m.interval.ci_entry()
        out[name] = _nan(m.value)
        if spec.reason_after:
            later.setdefault(spec.reason_after, []).extend(reason)
            reason = []
        if spec.interval_after:
            later.setdefault(spec.interval_after, []).extend(interval)
            interval = []
        if spec.reasons_last and interval:
            value_reason, interval_keys = reason, interval[:2]
            interval_reasons = interval[2:]
            for key, item in [*interval_keys, *value_reason, *interval_reasons]:
                out[key] = item
            return
        for key, item in [*reason, *interval]:
            out[key] = item

    def to_dict(self) -> dict[str, Any]:
        """The section in the JSON's layout (NaN where undefined, every key in its place)."""
        return self.model_dump()
