"""A user's redaction file: extra patterns and known names, checked before anything is redacted.

The file is YAML with three optional keys:

```yaml
phone_region: GB            # how numbers written without a country code are read
patterns:                   # extra identifiers, each replaced by <TYPE_N>
  - type: EMPLOYEE_ID
    regex: 'EMP-[0-9]{5}'
  - type: MEMBERSHIP        # only the group named `value` is replaced when there is one
    regex: 'member(?:ship)? no\\.? (?P<value>[0-9]{6,})'
names:                      # removed as NAME wherever they stand as whole words, any case
  - Jane Doe
  - Priya Raman
```

Every problem is a `RulesError` naming the file, the line and the entry (`rules.yaml:5:
patterns[1].regex: bad regex '(EMP': missing ), unterminated subpattern at position 0`),
raised before any text is read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import phonenumbers
import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, field_validator

# UPPER_SNAKE, and not ending in a number: `<TYPE_N>` must read back as one type and one number.
_TYPE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]*[A-Z][A-Z0-9]*)*")
# A one-letter "name" would remove that letter wherever it stands alone ("I", "a").
MIN_NAME_LENGTH = 2


class RulesError(ValueError):
    """A redaction file that cannot be used; `str()` is the one line to show."""

    def __init__(self, path: str, message: str, line: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.path, self.message, self.line, self.field = path, message, line, field

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = f"{self.field}: " if self.field else ""
        return f"{where}: {what}{self.message}"


class ExtraPattern(BaseModel):
    """One identifier the defaults do not know: every match (or its group `value`) becomes
    `<TYPE_N>`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    regex: str

    @field_validator("type")
    @classmethod
    def _upper_snake(cls, v: str) -> str:
        if not _TYPE.fullmatch(v):
            raise ValueError(f"type {v!r} must be UPPER_SNAKE (A-Z, 0-9, _), starting with a "
                             "letter and not ending in a number")
        return v

    @field_validator("regex")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            compiled = re.compile(v)
        except re.error as exc:
            raise ValueError(f"bad regex {v!r}: {exc}") from None
        if compiled.search("") is not None:
            raise ValueError(f"bad regex {v!r}: it matches the empty string")
        return v


def check_region(region: str) -> str:
    """A phone region (a two-letter country code libphonenumber knows), in capitals; a
    ValueError naming close codes otherwise."""
    if region.upper() not in phonenumbers.SUPPORTED_REGIONS:
        close = sorted(r for r in phonenumbers.SUPPORTED_REGIONS if r[0] == region[:1].upper())
        raise ValueError(f"unknown phone region {region!r} (two-letter country codes, e.g. "
                         f"{', '.join(close[:6]) or 'GB, US'})")
    return region.upper()


def _known_name(name: str) -> str:
    if len(name.strip()) < MIN_NAME_LENGTH:
        raise ValueError(f"name {name!r} is shorter than {MIN_NAME_LENGTH} characters")
    return " ".join(name.split())


KnownName = Annotated[str, AfterValidator(_known_name)]


class RedactionRules(BaseModel):
    """What a user adds to the default recognisers; the defaults need no file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    phone_region: str = "GB"
    patterns: tuple[ExtraPattern, ...] = ()
    names: tuple[KnownName, ...] = ()

    @field_validator("phone_region")
    @classmethod
    def _region(cls, v: str) -> str:
        return check_region(v)


def load_rules(path: Path | str) -> RedactionRules:
    """The redaction file at `path`, checked; any problem is a `RulesError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(str(path), f"cannot read the redaction file: {exc}") from None
    return parse_rules(text, str(path))


def parse_rules(text: str, source: str) -> RedactionRules:
    """The redaction file's text, checked; `source` names it in errors."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise RulesError(source, f"not valid YAML: {problem}", line=line) from None
    except RecursionError:
        raise RulesError(source, "not valid YAML: nested too deeply") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RulesError(source, "expected a mapping with `patterns`, `names` and "
                                 "`phone_region`", line=1)
    try:
        return RedactionRules.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field (expected patterns, names, phone_region; an entry has "\
                      "type and regex)"
        elif err["type"] == "missing":
            message = "missing field"
        raise RulesError(source, message, line=_line(node, loc), field=_field(loc)) from None


def _field(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def _line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The line of the YAML node at `loc` (a mapping's entry: its key's line), or of its
    nearest existing parent."""
    line = None if node is None else node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == part), None)
            if pair is None:
                return line
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
                and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line
