"""The building blocks of the typed report (`copal_tui.metrics.document`): `Metric`, a figure
that is either a number or undefined with the reason why, with its confidence `Interval`; and
`FlatModel`, the base of every section model, which folds the report's flat keys into metrics
when it reads a section and unfolds them again when it writes one.

The report's JSON has one layout for every figure, kept because readers (and diffs) depend on
it: the value under its key (NaN, then null in JSON, when undefined), `<key>_reason` beside it
when undefined, the interval as `ci_low` / `ci_high` (or prefixed names) with their own
`_reason` keys, or as an entry of a `ci` object for the bootstrap intervals of judge validity.
A `Flat` annotation on a metric field says which of those names and positions the field uses,
so `model_dump()` gives back exactly the dict the section builders produce, key order included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    model_serializer,
    model_validator,
)

# The reason given to an undefined figure that arrived without one (as the JSON writer did).
GENERIC_REASON = "undefined for these data"


def _undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _nan(value: float | None) -> float:
    """None as NaN: the report dict (and its consumers) use NaN for an undefined figure."""
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

    @model_validator(mode="before")
    @classmethod
    def _nan_to_none(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {**data, **{k: None for k in ("low", "high") if _undefined(data.get(k))}}
        return data

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        return self.low, self.high

    def ci_entry(self) -> dict[str, Any]:
        """The entry of a `ci` object (judge validity), in the order the bootstrap writes it."""
        out: dict[str, Any] = {"low": _nan(self.low), "high": _nan(self.high)}
        if self.resamples_defined is not None:
            out["resamples_defined"] = self.resamples_defined
        if self.reason is not None:
            out["low_reason"] = out["high_reason"] = self.reason
        if self.resamples_defined is None:
            out["resamples_defined"] = 0
        return out

    @classmethod
    def from_ci_entry(cls, entry: dict[str, Any]) -> Interval:
        keys = list(entry)
        # No resample drawn: the reasons come before the count (which is then 0).
        drawn = not ("low_reason" in keys and "resamples_defined" in keys
                     and keys.index("low_reason") < keys.index("resamples_defined"))
        return cls(low=entry.get("low"), high=entry.get("high"), reason=entry.get("low_reason"),
                   resamples_defined=entry.get("resamples_defined") if drawn else None)


class Metric(BaseModel):
    """One figure: `value` (None when undefined), `reason` (set when it is undefined) and its
    `interval` when the report gives one. Counts stay ints, rates floats."""

    model_config = ConfigDict(frozen=True)
    value: int | float | None
    reason: str | None = None
    interval: Interval | None = None

    @model_validator(mode="before")
    @classmethod
    def _undefined_has_reason(cls, data: Any) -> Any:
        if isinstance(data, dict) and _undefined(data.get("value")):
            data = {**data, "value": None, "reason": data.get("reason") or GENERIC_REASON}
        return data

    @property
    def defined(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class Flat:
    """Where a metric field's keys go in its section's dict.

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
    """A field's value in the report dict's form (sections unfolded, containers copied)."""
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
    """A section of the report. Unknown keys are kept (and written after the known ones), so
    a section that grows a key still round-trips; the tests check none is left untyped."""

    model_config = ConfigDict(extra="allow")
    _flat: ClassVar[dict[str, Flat]]
    _omit: ClassVar[frozenset[str]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = cls.model_fields
        cls._flat = {n: f for n, fi in fields.items() if (f := _meta(fi, Flat)) is not None}
        cls._omit = frozenset(n for n, fi in fields.items() if _meta(fi, Omit) is not None)

    @model_validator(mode="before")
    @classmethod
    def _fold(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not cls._flat:
            return data
        data = dict(data)
        ci = data.pop("ci", None) if any(s.ci for s in cls._flat.values()) else None
        for name, spec in cls._flat.items():
            if name not in data or isinstance(data[name], Metric | dict):
                continue
            metric: dict[str, Any] = {"value": data.pop(name),
                                      "reason": data.pop(f"{name}_reason", None)}
            if spec.low and spec.high:
                metric["interval"] = {"low": data.pop(spec.low, None),
                                      "high": data.pop(spec.high, None),
                                      "reason": data.pop(f"{spec.low}_reason", None)}
                data.pop(f"{spec.high}_reason", None)
            elif spec.ci and isinstance(ci, dict) and name in ci:
                metric["interval"] = Interval.from_ci_entry(ci[name])
            data[name] = metric
        return data

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
        for key, value in (self.__pydantic_extra__ or {}).items():
            out[key] = _unfold(value)
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
        """The section as the dict the report builders produce (NaN where undefined)."""
        return self.model_dump()
