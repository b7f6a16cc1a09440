"""Reading a deployed chatbot's traffic log, one query-response pair at a time. Nothing read
here is stored or shown: the import de-identifies each pair before it writes anything
(`copal_tui.services.traffic`), so the raw texts live only in memory, one record at a time.

Three layouts, `FORMATS` (`auto` picks by the file: `.csv` is CSV, a JSONL file whose first
record holds the messages field is transcripts, any other JSONL is pairs):
- `pairs`: JSONL, one object per line with the query and the response under `fields.query` and
  `fields.response` (default `query` and `response`);
- `transcripts`: JSONL, one conversation per line, OpenAI-style under `fields.messages`
  (default `messages`: [{role, content}, ...]); each assistant turn becomes one pair, its query
  the user message before it and its context every turn before that query (system messages
  included), which the annotator sees;
- `csv`: a header line, then one pair per row, the columns named as for `pairs`.

Bad input is an `ImportFailure` naming the file, the line and the reason: a record that is not
valid JSON or UTF-8, a missing or non-text field, a file that is empty, binary or holds no pair,
a record longer than the maximum record size (`strict.MAX_RECORD_BYTES`, read with that bound)
and a text longer than `MAX_TEXT_CHARS`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.strict import MAX_RECORD_BYTES, loads_json, record_lines

FORMATS = ("auto", "pairs", "transcripts", "csv")
_BOM = b"\xef\xbb\xbf"
# The longest query or response taken (characters): a chat message longer than this is not a
# message but a pasted document or a logging fault, and would make every screen and figure
# about it.
MAX_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class Fields:
    """Where a record keeps its texts."""

    query: str = "query"
    response: str = "response"
    messages: str = "messages"


@dataclass(frozen=True)
class RawPair:
    """One pair as read, before de-identification: `line` is the file line (CSV: the row's
    first line), `turn` the assistant message's index in a transcript."""

    line: int
    query: str
    response: str
    context: list[tuple[str, str]] = field(default_factory=list)
    turn: int | None = None


def detect(path: Path, fields: Fields) -> str:
    """The layout of a file (`auto`)."""
    if path.suffix.lower() == ".csv":
        return "csv"
    with _open(path) as fh:
        for number, raw in enumerate(record_lines(fh, path), 1):
            if raw.strip():
                record = _record(path, number, raw)
                return "transcripts" if fields.messages in record else "pairs"
    raise ImportFailure(path, "the file holds no record")


def read_pairs(path: Path, layout: str = "auto", fields: Fields | None = None
               ) -> Iterator[RawPair]:
    """Every pair of the log, in file order."""
    fields = fields or Fields()
    if layout not in FORMATS:
        raise ImportFailure(path, f"unknown log format {layout!r} (one of {', '.join(FORMATS)})")
    if layout == "auto":
        layout = detect(path, fields)
    reader = {"pairs": _pairs, "transcripts": _transcripts, "csv": _csv}[layout]
    found = False
    for pair in reader(path, fields):
        found = True
        yield pair
    if not found:
        raise ImportFailure(path, f"no query-response pair in the file (read as {layout})")


def _open(path: Path) -> io.BufferedReader:
    try:
        return path.open("rb")
    except OSError as exc:
        raise ImportFailure(path, f"cannot read: {exc.strerror}") from None


def _text(path: Path, line: int, raw: bytes) -> str:
    if line == 1:
        raw = raw.removeprefix(_BOM)  # a spreadsheet's or an editor's UTF-8 mark
    if b"\x00" in raw:
        raise ImportFailure(path, "binary data (a NUL byte): not a text log", line=line)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailure(path, f"not UTF-8 text (byte {exc.start + 1} of the line)",
                            line=line) from None


def _record(path: Path, line: int, raw: bytes) -> dict[str, Any]:
    text = _text(path, line, raw)
    try:
        value = loads_json(text, path, line)
    except json.JSONDecodeError as exc:
        raise ImportFailure(path, f"not valid JSON ({exc.msg}, column {exc.colno})",
                            line=line) from None
    if not isinstance(value, dict):
        raise ImportFailure(path, f"a record is a JSON object, not {type(value).__name__}",
                            line=line)
    return value


def _string(path: Path, line: int, record: dict[str, Any], name: str) -> str:
    if name not in record:
        raise ImportFailure(path, "missing field", line=line, field=name)
    value = record[name]
    if not isinstance(value, str):
        raise ImportFailure(path, f"must be text, not {type(value).__name__}", line=line,
                            field=name)
    return _bounded(path, line, name, value)


def _bounded(path: Path, line: int, name: str, value: str) -> str:
    if len(value) > MAX_TEXT_CHARS:
        raise ImportFailure(path, f"text of {len(value):,} characters, over the limit of "
                                  f"{MAX_TEXT_CHARS:,}", line=line, field=name)
    return value


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open(path) as fh:
        for number, raw in enumerate(record_lines(fh, path), 1):
            if raw.strip():
                yield number, _record(path, number, raw)


def _pairs(path: Path, fields: Fields) -> Iterator[RawPair]:
    for number, record in _lines(path):
        yield RawPair(number, _string(path, number, record, fields.query),
                      _string(path, number, record, fields.response))


def _transcripts(path: Path, fields: Fields) -> Iterator[RawPair]:
    for number, record in _lines(path):
        messages = record.get(fields.messages)
        if not isinstance(messages, list):
            raise ImportFailure(path, "missing, or not a list of messages", line=number,
                                field=fields.messages)
        turns: list[tuple[str, str]] = []
        for k, message in enumerate(messages):
            where = f"{fields.messages}[{k}]"
            if not isinstance(message, dict):
                raise ImportFailure(path, "a message is an object {role, content}",
                                    line=number, field=where)
            role, content = message.get("role"), message.get("content")
            if not isinstance(role, str) or not isinstance(content, str):
                raise ImportFailure(path, "a message needs a text `role` and `content`",
                                    line=number, field=where)
            turns.append((role, _bounded(path, number, f"{where}.content", content)))
        for k, (role, content) in enumerate(turns):
            if role != "assistant":
                continue
            asked = max((i for i in range(k) if turns[i][0] == "user"), default=None)
            if asked is None:
                continue  # a greeting before any user message answers no query
            yield RawPair(number, turns[asked][1], content, turns[:asked], turn=k)


def _csv(path: Path, fields: Fields) -> Iterator[RawPair]:
    with _open(path) as fh:
        # Each physical line is read with the record bound and checked for text, then parsed
        # as CSV (a quoted field may span lines).
        # utf-8-sig: a spreadsheet's export starts with a byte-order mark, which would
        # otherwise become part of the first column's name.
        text = io.TextIOWrapper(io.BufferedReader(_Checked(fh, path)), encoding="utf-8-sig",
                                newline="")
        csv.field_size_limit(MAX_RECORD_BYTES)
        # strict: a quote left open or text after a closing quote is an error, not a field
        # that swallows the rest of the file.
        reader = csv.reader(text, strict=True)
        try:
            header = next(reader)
        except UnicodeDecodeError:
            raise ImportFailure(path, "not UTF-8 text", line=1) from None
        except StopIteration:
            raise ImportFailure(path, "the file is empty (a CSV log starts with a header "
                                      "line)") from None
        missing = [n for n in (fields.query, fields.response) if n not in header]
        if missing:
            raise ImportFailure(path, f"no column named {', '.join(map(repr, missing))} in "
                                      f"the header ({', '.join(map(repr, header))})", line=1)
        q, r = header.index(fields.query), header.index(fields.response)
        start = reader.line_num + 1
        try:
            for row in reader:
                if not any(row):
                    start = reader.line_num + 1
                    continue
                if len(row) != len(header):
                    raise ImportFailure(path, f"{len(row)} columns where the header has "
                                              f"{len(header)}", line=start)
                yield RawPair(start, _bounded(path, start, fields.query, row[q]),
                              _bounded(path, start, fields.response, row[r]))
                start = reader.line_num + 1
        except csv.Error as exc:
            why = "a quote opened in this row is never closed" \
                if "unexpected end of data" in str(exc) else str(exc)
            raise ImportFailure(path, f"not valid CSV ({why})", line=start) from None
        except UnicodeDecodeError:
            raise ImportFailure(path, "not UTF-8 text", line=reader.line_num + 1) from None


class _Checked(io.RawIOBase):
    """A file read line by line with the record bound, each line checked for binary data."""

    def __init__(self, fh: io.BufferedReader, path: Path) -> None:
        self._lines = record_lines(fh, path)
        self._path = path
        self._number = 0
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._rest:
            raw = next(self._lines, b"")
            self._number += 1
            if b"\x00" in raw:
                raise ImportFailure(self._path, "binary data (a NUL byte): not a text log",
                                    line=self._number)
            self._rest = raw
        n = min(len(buffer), len(self._rest))
        buffer[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n
