"""Reading world YAML and interchange JSONL files into validated models.

Every problem becomes an `ImportFailure` that names the file, the line where it is known, and
the field, so `copal import` can print one useful line and exit 2. Reading and parsing are
strict (`strict.py`): a record over the maximum record size (16 MiB: a JSONL line, a world
file), a repeated key, nesting deeper than 64 levels or a lone surrogate is such a problem too.
What an import holds at once is bounded: a record is read with that bound, and a chunk of
records by CHUNK_BYTES as well as by its count.
"""

from __future__ import annotations

import json
import os
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import compress
from pathlib import Path
from typing import Any

import orjson
import yaml
from pydantic import ValidationError

from copal_tui.domain.schema import RECORD_ADAPTER, RECORD_ORDER, WorldFile
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.fastcheck import FAST_CHECKS
from copal_tui.interchange.reading import (
    MAX_RECORD_BYTES,
    read_document,
    record_lines,
    record_text,
)
from copal_tui.interchange.strict import (
    SCAN,
    SURROGATE_ESCAPE_BYTES,
    field_name,
    load_yaml,
    loads_json,
    lone_surrogate,
    may_hold_surrogate,
)

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
    """A file that is one record (a world file, a COMPASS text or policies file) as text."""
    data = read_document(path)
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
    bad = lone_surrogate(data) if may_hold_surrogate(text) else None
    if bad is not None:
        raise ImportFailure(path, bad[1], line=_yaml_line(node, bad[0]),
                            field=field_name(bad[0]))
    try:
        return WorldFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        raise ImportFailure(
            path, _message(err), line=_yaml_line(node, loc), field=field_name(loc)
        ) from None


def parse_record(path: Path, line: int, raw: bytes, offset: int) -> SourceRecord:
    """One JSONL line (bytes, starting at byte `offset` of the file) as a validated record."""
    text = record_text(path, line, raw, offset)
    try:
        obj = loads_json(text, path, line=line)
    except json.JSONDecodeError as exc:
        raise ImportFailure(path, f"bad JSON: {exc.msg} (column {exc.colno})", line=line) from None
    if not isinstance(obj, dict):
        raise ImportFailure(path, "a record must be a JSON object", line=line)
    kind = obj.get("type")
    # The two types that make up nine records in ten are checked by hand first: a record the
    # check is sure of needs no pydantic model; any doubt goes through the schema, which gives
    # the verdict and the error message.
    fast = FAST_CHECKS.get(kind) if type(kind) is str else None
    data = None if fast is None else fast(obj)
    if data is None:
        try:
            rec = RECORD_ADAPTER.validate_python(obj)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = tuple(err["loc"])
            # The first element of the location is the discriminator value; drop it.
            if loc and loc[0] == kind:
                loc = loc[1:]
            raise ImportFailure(path, _message(err), line=line,
                                field=field_name(loc) or "type") from None
        data = rec.model_dump(mode="json")
    return SourceRecord(path, line, data)


# A line written as `{"type":"<kind>",...` (what `copal export` writes) is placed by its first
# bytes alone; any other line is parsed and checked whole to learn its type.
_PREFIX = b'{"type":"'
# A record type as one byte (0: a blank line).
_CODE = {k: i for i, k in enumerate(RECORD_ORDER, 1)}
_CODE_OF = {k.encode(): i for k, i in _CODE.items()}
_BOM = "\ufeff".encode()
# Records are read back by seeking forward through the file: within the buffer, a seek moves
# a pointer rather than reading again.
_BUFFER = 1 << 20
# The bytes of the records of one chunk at most (a chunk also ends at its count of records),
# and of one window of `_fast_chunks` (besides a single record up to MAX_RECORD_BYTES).
CHUNK_BYTES = 64 << 20
_WINDOW_BYTES = 8 << 20


class RecordIndex:
    """Pass one of an import: where every line of every record file starts, and its type.

    The import then reads each type back in chunks (pass two), so records are processed in
    type order (referents first) whatever order the files mix them in, while only one chunk of
    records is held at a time. A line costs nine bytes here (its offset and a type byte; its
    number is its position), not its record.
    """

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self._files = [_scan(p) for p in paths]

    def count(self, kind: str) -> int:
        return sum(codes.count(_CODE[kind]) for _, codes in self._files)

    def chunks(self, kind: str, size: int, parent: str | None = None
               ) -> Iterator[list[SourceRecord]]:
        """The records of `kind` in file order, `size` at a time; with `parent`, those whose
        `parent` field is set (projections) come after all others."""
        if kind in FAST_CHECKS and parent is None:
            yield from self._fast_chunks(kind, size)
            return
        code = _CODE[kind]
        later: list[array[int]] = [array("q") for _ in self._files]
        first: list[Iterable[int] | None] = [
            _positions(codes, code) if code in codes else None for _, codes in self._files]
        chunk: list[SourceRecord] = []
        held = 0  # bytes of the chunk's records
        rounds: list[Iterable[int] | None] | list[array[int]]
        for rounds, defer in ((first, parent), (later, None)):
            for file, lines in enumerate(rounds):
                if not lines:
                    continue
                path, offsets = self.paths[file], self._files[file][0]
                with path.open("rb", buffering=_BUFFER) as fh:
                    for i in lines:
                        fh.seek(offsets[i])
                        raw = fh.readline(MAX_RECORD_BYTES + 1)  # pass one checked its size
                        src = parse_record(path, i + 1, raw, offsets[i])
                        if defer is not None and src.data.get(defer) is not None:
                            later[file].append(i)
                            continue
                        chunk.append(src)
                        held += len(raw)
                        if len(chunk) >= size or held >= CHUNK_BYTES:
                            yield chunk
                            chunk, held = [], 0
        if chunk:
            yield chunk

    def _fast_chunks(self, kind: str, size: int) -> Iterator[list[SourceRecord]]:
        """`chunks` for the bulk types with a hand-written check (`FAST_CHECKS`) and no
        parents to put first (responses and judgments).

        The file is read forward a window of lines at a time (one read, one split), the lines
        of `kind` are picked out by their type codes, and each is decoded by `_scan_line`
        (orjson for a compact line, else the strict scanner) and checked by hand. A line that
        either does not take cleanly goes through `parse_record`, which accepts it or words the
        error exactly as for any other line.
        """
        code = _CODE[kind]
        check = FAST_CHECKS[kind]
        # Type code -> 1 for `kind`, 0 for any other: a window's mask for `compress`.
        pick = bytes(int(c == code) for c in range(256))
        chunk: list[SourceRecord] = []
        held = 0  # bytes of the chunk's records
        for file, (offsets, codes) in enumerate(self._files):
            first, end = codes.find(code), codes.rfind(code) + 1
            if first < 0:
                continue
            path = self.paths[file]
            with path.open("rb", buffering=0) as fh:
                file_size = os.fstat(fh.fileno()).st_size
                start = first
                while start < end:
                    stop = _window_end(offsets, start, end, file_size)
                    fh.seek(offsets[start])
                    block = fh.read(_offset(offsets, stop, file_size) - offsets[start])
                    mask = codes[start:stop].translate(pick)
                    lines = block.split(b"\n", stop - start - 1)
                    for i, raw in compress(zip(range(start, stop), lines, strict=False), mask):
                        obj = _scan_line(raw)
                        data = None if obj is None else check(obj)
                        chunk.append(SourceRecord(path, i + 1, data) if data is not None
                                      else parse_record(path, i + 1, raw, offsets[i]))
                        held += len(raw)
                        if len(chunk) >= size or held >= CHUNK_BYTES:
                            yield chunk
                            chunk, held = [], 0
                    start = stop
        if chunk:
            yield chunk


# Lines read at a time by `_fast_chunks` (a few MB of a typical file), and _WINDOW_BYTES at most.
_WINDOW = 8192


def _window_end(offsets: array[int], start: int, end: int, size: int) -> int:
    """The line after a window from line `start`: _WINDOW lines, fewer where they would pass
    _WINDOW_BYTES, one at least."""
    stop = min(start + _WINDOW, end)
    if _offset(offsets, stop, size) - offsets[start] > _WINDOW_BYTES:
        stop = max(start + 1, bisect_right(offsets, offsets[start] + _WINDOW_BYTES, start, stop)
                   - 1)
    return stop


def _offset(offsets: array[int], line: int, size: int) -> int:
    """Where line `line` (from 0) starts; the file's size after its last line."""
    return offsets[line] if line < len(offsets) else size


def _scan_line(raw: bytes) -> dict[str, Any] | None:
    """The JSON object on one line, or None (the line is then read again by `parse_record`):
    anything but one object starting the line, or any error.

    A line exactly as orjson writes its object back (compact, as `copal export` writes) is taken
    from orjson: orjson keeps the last of two equal names, but a line equal to the dump of a
    dict repeats none, since a dict's names are unique. Any other line, or one orjson refuses,
    goes through the strict scanner, which refuses a repeated name itself. The depth bound
    needs no check here, because what the checks of the types read this way (responses,
    judgments) accept nests two levels at most (anything else goes through `parse_record`,
    which checks it first)."""
    if SURROGATE_ESCAPE_BYTES.search(raw):
        return None  # may decode to a lone surrogate: parse_record words it
    body = raw[:-1] if raw.endswith(b"\n") else raw
    try:
        obj = orjson.loads(body)
        if type(obj) is dict and orjson.dumps(obj) == body:
            return obj
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        pass
    try:
        text = raw.decode("utf-8")
        obj, end = SCAN(text, 0)
    except Exception:  # any failure, a RecursionError too: parse_record words it
        return None
    if end != len(text) and text[end:].strip(" \t\r\n"):
        return None
    return obj if type(obj) is dict else None


def _positions(codes: bytearray, code: int) -> Iterator[int]:
    """Line indexes (from 0) of the lines of type `code`."""
    i = codes.find(code)
    while i >= 0:
        yield i
        i = codes.find(code, i + 1)


def _scan(path: Path) -> tuple[array[int], bytearray]:
    """Offset and type code of each line of a JSONL file."""
    offsets: array[int] = array("q")
    codes = bytearray()
    offset, blank = 0, True
    with path.open("rb") as fh:
        for n, raw in enumerate(record_lines(fh, path), 1):
            start = offset
            offset += len(raw)
            if n == 1 and raw.startswith(_BOM):
                raw, start = raw[len(_BOM):], start + len(_BOM)
            offsets.append(start)
            code = _CODE_OF.get(raw[len(_PREFIX):raw.find(b'"', len(_PREFIX))], 0) \
                if raw.startswith(_PREFIX) else 0
            if not code and raw.strip() and raw.decode("utf-8", errors="replace").strip():
                # A line that is not UTF-8 is not blank: its check reports it.
                code = _CODE[parse_record(path, n, raw, start).type]
            codes.append(code)
            blank = blank and not code
    if blank:
        raise ImportFailure(path, "file is empty")
    return offsets, codes


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
