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
from pydantic import ValidationError

from copal_tui.domain.schema import RECORD_ADAPTER, WorldFile
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.strict import load_yaml, loads_json

WORLD_SUFFIXES = (".yaml", ".yml")
RECORD_SUFFIXES = (".jsonl",)


@dataclass(slots=True)
class SourceRecord:
    """One validated interchange record: its fields as the schema gives them (defaults filled
    in, JSON values), and where it was read, for the error that names file and line."""

    path: Path
    line: int
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data["type"])


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
    """The records of a JSONL file, each validated, read a line at a time (a file of a million
    responses is never held whole)."""
    blank = True
    for n, raw in enumerate(_lines(path), 1):
        if not raw.strip():
            continue
        blank = False
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
        yield SourceRecord(path, n, rec.model_dump(mode="json"))
    if blank:
        raise ImportFailure(path, "file is empty")


def load_groups(paths: list[Path]) -> dict[str, list[SourceRecord]]:
    """Every record of `paths` by type, each type in file order, except that projections (items
    with a parent item, COMPASS queries with a parent query) follow every parent."""
    groups: dict[str, list[SourceRecord]] = {}
    for p in paths:
        for src in iter_records(p):
            groups.setdefault(src.type, []).append(src)
    for kind, parent in (("item", "parent_item_id"), ("compass_query", "parent_id")):
        srcs = groups.get(kind, [])
        groups[kind] = ([s for s in srcs if s.data.get(parent) is None]
                        + [s for s in srcs if s.data.get(parent) is not None])
    return groups


def _lines(path: Path) -> Iterator[str]:
    """The file's lines as text, split on newlines only (JSON strings may hold U+2028 and
    the other characters str.splitlines would also split on), a leading BOM dropped."""
    offset = 0
    with path.open("rb") as fh:
        for n, data in enumerate(fh, 1):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFailure(path, f"not valid UTF-8 (byte {offset + exc.start})",
                                    line=n) from None
            if n == 1 and text.startswith("\ufeff"):
                text = text[1:]
            offset += len(data)
            yield text


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
