"""The building blocks of the typed report (`copal_tui.metrics.document`): `Metric`, a figure
that is either a number or undefined with the reason why, with its confidence `Interval`; and
`FlatModel`, the base of every section model, whose serialiser writes the report's JSON layout.

That layout is kept because readers (and diffs) depend on it: a figure's value under its key
(NaN in `to_dict()`, null in JSON, when undefined), `<key>_reason` beside it when undefined, the
interval as `ci_low` / `ci_high` (or prefixed names) with their own `_reason` keys, or as an
entry of a `ci` object (judge validity's bootstrap intervals). A `Flat` annotation on a metric
field says which names and positions it uses. The keys come in the order of the model's fields
(a model with several bases takes its last base's fields first, as pydantic does); a field that
defaults to None is left out, not null, when None.
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
    """Where a metric field's keys go in its section's JSON. `prefix`: the interval's keys are
    `<prefix>ci_low` and `<prefix>ci_high` (None: no interval); `ci`: the interval is an entry
    of the section's `ci` object instead; `reasons_last`: the value's reason after the interval
    (COMPASS's layout); `interval_after` / `reason_after`: the interval (or the reason) goes
    after that later field."""

    prefix: str | None = None
    ci: bool = False
    reasons_last: bool = False
    interval_after: str | None = None
    reason_after: str | None = None


RATE = Flat(prefix="")
CI = Flat(ci=True)


@dataclass(frozen=True)
class Inline:
    """On a field holding {name: section}: each section's keys go into the enclosing section's
    JSON in the field's place, in the mapping's order (no key of the field's own)."""


INLINE = Inline()

Pairs = list[tuple[str, Any]]


def _unfold(value: Any) -> Any:
    """A field's value in the JSON's form (sections unfolded, containers copied)."""
    if isinstance(value, FlatModel):
        return value._unfold()
    if isinstance(value, dict):
        return {k: _unfold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unfold(v) for v in value]
    return value


class FlatModel(BaseModel):
    """A section of the report (unknown fields are refused: every key of the JSON is typed)."""

    model_config = ConfigDict(extra="forbid")
    _flat: ClassVar[dict[str, Flat]]  # every metric field's layout
    _omit: ClassVar[frozenset[str]]
    _ci_last: ClassVar[str | None]  # the field after which the `ci` object comes
    _inline: ClassVar[frozenset[str]]  # fields whose sections' keys are written in their place

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = cls.model_fields
        cls._flat = {n: next((m for m in fi.metadata if isinstance(m, Flat)), Flat())
                     for n, fi in fields.items() if fi.annotation is Metric}
        cls._omit = frozenset(n for n, fi in fields.items() if fi.default is None)
        cls._ci_last = next((n for n in reversed(cls._flat) if cls._flat[n].ci), None)
        cls._inline = frozenset(n for n, fi in fields.items()
                                if any(isinstance(m, Inline) for m in fi.metadata))

    @model_serializer(mode="plain")
    def _unfold(self) -> dict[str, Any]:
        # A plain walk rather than pydantic's field serialisers: nested sections are unfolded
        # by the same loop, which keeps writing a large report to tens of milliseconds.
        out: dict[str, Any] = {}
        later: dict[str, Pairs] = {}
        ci: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            spec = self._flat.get(name)
            if spec is not None:
                self._write_metric(name, value, spec, out, later, ci)
            elif name in self._inline:
                for section in value.values():
                    out.update(_unfold(section))
            elif not (value is None and name in self._omit):
                out[name] = _unfold(value)
            out.update(later.pop(name, []))
            if name == self._ci_last:
                out["ci"] = ci
        return out

    @staticmethod
    def _write_metric(name: str, m: Metric, spec: Flat, out: dict[str, Any],
                      later: dict[str, Pairs], ci: dict[str, Any]) -> None:
        reason: Pairs = [] if m.reason is None else [(f"{name}_reason", m.reason)]
        interval: Pairs = []
        if spec.prefix is not None and m.interval is not None:
            low, high = f"{spec.prefix}ci_low", f"{spec.prefix}ci_high"
            interval = [(low, _nan(m.interval.low)), (high, _nan(m.interval.high))]
            if m.interval.reason is not None:
                interval += [(f"{low}_reason", m.interval.reason),
                             (f"{high}_reason", m.interval.reason)]
        elif spec.ci and m.interval is not None:
            ci[name] = m.interval.ci_entry()
        out[name] = _nan(m.value)
        if spec.reason_after:
            later.setdefault(spec.reason_after, []).extend(reason)
            reason = []
        if spec.interval_after:
            later.setdefault(spec.interval_after, []).extend(interval)
            interval = []
        if spec.reasons_last:  # the interval's bounds, then every reason
            reason, interval = interval[:2] + reason, interval[2:]
        out.update([*reason, *interval])

    def to_dict(self) -> dict[str, Any]:
        """The section in the JSON's layout (NaN where undefined, every key in its place)."""
        return self.model_dump()


class SuiteSections(FlatModel):
    """The sections of one suite besides COPAL (its descriptor's `Report.build` makes them):
    its fields are keys at the top level of the report's JSON (`ReportDocument.suites`), and
    `SUITE` is the suite's name."""

    SUITE: ClassVar[str] = ""

    def provenance_counts(self) -> dict[str, dict[str, int]] | None:
        """What the suite adds to its provenance besides the models: {what: {by: count}}
        (the traffic suite: what de-identification removed, by source and type); None:
        nothing."""
        return None
