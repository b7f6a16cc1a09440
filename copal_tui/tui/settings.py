"""User settings for the TUI: environment variables `COPAL_*`.

`COPAL_KEYMAP='{"label.submit": "ctrl+s", "app.help": "f1"}'` remaps any binding by its id;
`COPAL_OVERLAP=3` sets how many annotators label each subject, in every suite's queue
(copal_tui.services.annotation.queue); `COPAL_BLIND=false` shows the judge while labelling (off by
default: annotators label blind); `COPAL_SHOW_MODEL=true` names the responding model in the
label queues (off by default: a neutral "Response", since a model's name colours the judgement
of its answer); `COPAL_PAGE_SIZE`,
`COPAL_LEASE_MINUTES`, `COPAL_THEME`, `COPAL_MIN_WIDTH`, `COPAL_MIN_HEIGHT` likewise.

Why a dataclass and not pydantic-settings' `BaseSettings`: importing pydantic-settings cost the
TUI's cold start about 0.25 s (a third of copal's own start-up, see BENCHMARKS.md) on every run,
mostly with no `COPAL_*` variable set at all. The fields and their bounds live here once
(`annotated_types` constraints, which pydantic enforces); pydantic and the constraints are
imported only when there is something to validate: a variable in the environment or an explicit
override.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

if TYPE_CHECKING:  # the bounds are read only to validate a value (`_validate`)
    from annotated_types import Ge, Gt, Le

PREFIX = "COPAL_"


class SettingsError(ValueError):
    """A `COPAL_*` variable that does not parse or is out of range (one line per problem)."""


@dataclass(frozen=True)
class Settings:
    keymap: dict[str, str] = field(default_factory=dict)  # binding id -> keys
    theme: str = "textual-dark"
    overlap: Annotated[int, Ge(1), Le(10)] = 2
    lease_minutes: Annotated[float, Gt(0)] = 30
    blind: bool = True
    show_model: bool = False
    page_size: Annotated[int, Ge(10), Le(2000)] = 100
    min_width: int = 80
    min_height: int = 24

    def __post_init__(self) -> None:
        # Every value that is not the default is coerced and checked, whoever passed it.
        changed = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                   if getattr(self, f.name) != _default(f)}
        for name, value in _validate(changed).items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from `COPAL_<FIELD>` variables (case-insensitive); the rest default."""
        env = os.environ if environ is None else environ
        names = {f.name for f in dataclasses.fields(cls)}
        raw: dict[str, Any] = {}
        for key, value in env.items():
            if key.upper().startswith(PREFIX) and key[len(PREFIX):].lower() in names:
                name = key[len(PREFIX):].lower()
                raw[name] = _decode(name, key, value) if name == "keymap" else value
        return cls(**raw)


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def _decode(name: str, key: str, value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{key}: not JSON ({exc.msg})") from None


def _validate(values: dict[str, Any]) -> dict[str, Any]:
    """Coerce and check values against the field types (pydantic, imported only here)."""
    if not values:
        return {}
    # Imported here, not at the top: annotated_types alone took 12-17 ms of every start.
    import annotated_types
    from pydantic import TypeAdapter, ValidationError

    hints = get_type_hints(Settings, localns=vars(annotated_types), include_extras=True)
    out = {}
    for name, value in values.items():
        try:
            out[name] = TypeAdapter(hints[name]).validate_python(value)
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            raise SettingsError(f"{PREFIX}{name.upper()}={value!r}: {problem}") from None
    return out
