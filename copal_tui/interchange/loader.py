"""Reading world YAML and interchange JSONL files into validated models.

Every problem becomes an `ImportFailure` that names the file, the line where it is known, and
the field, so `copal import` can print one useful line and exit 2. Parsing is strict
(`strict.py`): a repeated key or nesting deeper than 64 levels is such a problem too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from copal_tui.domain.schema import RECORD_ADAPTER, WorldFile
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.strict import load_yaml, loads_json

WORLD_SUFFIXES = (".yaml", ".yml")
RECORD_SUFFIXES = (".jsonl",)


@dataclass
class SourceRecord:
    path: Path
    line: int
    record: BaseModel


def expand(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """World files and record files named by `paths` (folders recursively, sorted)."""
    worlds: list[Path] = []
    records: list[Path] = []
    for p in paths:
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix in WORLD_SUFFIXES:
                    worlds.append(f)
                elif f.is_file() and f.suffix in RECORD_SUFFIXES:
                    records.append(f)
        elif not p.exists():
            raise ImportFailure(p, "no such file or folder")
        elif p.suffix in WORLD_SUFFIXES:
            worlds.append(p)
        elif p.suffix in RECORD_SUFFIXES:
            records.append(p)
        else:
            raise ImportFailure(p, "not a world file (.yaml/.yml) or interchange file (.jsonl)")
    if not worlds and not records:
        raise ImportFailure(", ".join(map(str, paths)), "no .yaml, .yml or .jsonl files found")
    return worlds, records


def read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportFailure(path, f"not valid UTF-8 (byte {exc.start})", line=line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise ImportFailure(path, "file is empty")
    return text


def load_world(path: Path) -> WorldFile:
    text = read_text(path)
    # One parse gives both the data and the node tree that maps errors to lines.
    data, node = load_yaml(text, path)
    if not isinstance(data, dict):
        raise ImportFailure(path, "a world file must be a mapping (id, name, ..., policies)")
    try:
        return WorldFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        raise ImportFailure(
            path, _message(err), line=_yaml_line(node, loc), field=_field(loc)
        ) from None


def iter_records(path: Path) -> Iterator[SourceRecord]:
    text = read_text(path)
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw, path, line=n)
        except json.JSONDecodeError as exc:
            raise ImportFailure(path, f"bad JSON: {exc.msg} (column {exc.colno})", line=n) from None
        if not isinstance(obj, dict):
            raise ImportFailure(path, "a record must be a JSON object", line=n)
        try:
            rec = RECORD_ADAPTER.validate_python(obj)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = tuple(err["loc"])
            # The first element of the location is the discriminator value; drop it.
            if loc and loc[0] == obj.get("type"):
                loc = loc[1:]
            raise ImportFailure(path, _message(err), line=n, field=_field(loc) or "type") from None
        yield SourceRecord(path, n, rec)


def _field(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _message(err: Any) -> str:
    msg = str(err.get("msg", "invalid"))
    if err.get("type") == "extra_forbidden":
        return "unknown field"
    if err.get("type") == "missing":
        return "missing field"
    return msg.removeprefix("Value error, ")


def _yaml_line(node: Any, loc: tuple[Any, ...]) -> int | None:
    """Line of the YAML node at `loc` (or of its nearest existing ancestor)."""
    line = None if node is None else node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if k.value == part), None)
            if nxt is None:
                # An unknown key: point at the key itself.
                key = next((k for k, _ in node.value if k.value == part), None)
                return key.start_mark.line + 1 if key is not None else line
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
        else:
            return line
        line = node.start_mark.line + 1
    return line
