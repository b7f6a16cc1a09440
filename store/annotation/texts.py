"""Long texts read a part at a time, so a screen never loads a whole one: what the label screens
read of a response.

A response can be any size (a model that never stops, an HTTP target that answers 200 MB). A
part is read with SQLite's incremental blob I/O: the bytes of that part of the stored UTF-8
text, not the value (a `SELECT` of the column, even with `substr`, makes SQLite load all of it).
Part k of a text of `size` bytes holds the characters that start in bytes
[k * part_bytes, (k + 1) * part_bytes): whole characters, at most `part_bytes` + 3 bytes, and
ceil(size / part_bytes) parts in all (one, empty, for an empty text). `part_of` cuts a text
already in memory the same way, counting characters.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.db import Database

# What may be read in parts: name -> (table, column); every table is keyed by `id`.
TEXTS = {"response": ("responses", "text"),
         "compass_response": ("compass_responses", "text")}
_MAX_CHAR = 4  # bytes of the longest UTF-8 character


@dataclass(frozen=True)
class TextPart:
    """Part `index` (from 0) of a text of `count` parts; `size` is the whole text's length, in
    bytes of UTF-8 when it was read in parts from the store, else in characters. One part is
    the whole text."""

    text: str
    index: int
    count: int
    size: int

    @property
    def whole(self) -> bool:
        return self.count == 1


def read_part(db: Database, kind: str, key: str, index: int = 0,
              part_bytes: int | None = None) -> TextPart | None:
    """Part `index` (clamped to the parts there are) of the text `kind` (`TEXTS`) of row `key`,
    or with `part_bytes` None the whole text as one part; None when the row is missing or its
    text is NULL."""
    table, column = TEXTS[kind]
    if part_bytes is None:
        row = db.execute(f"SELECT {column} FROM {table} WHERE id = ?", (key,)).fetchone()
        if row is None or row[0] is None:
            return None
        text = str(row[0])
        return TextPart(text, 0, 1, len(text))
    if part_bytes < _MAX_CHAR:
        raise ValueError(f"a part holds at least {_MAX_CHAR} bytes")
    # typeof() reads the value's type from the record header, not the value.
    row = db.execute(f"SELECT rowid, typeof({column}) FROM {table} WHERE id = ?",
                     (key,)).fetchone()
    if row is None or row[1] not in ("text", "blob"):
        return None
    with db.conn.blobopen(table, column, row[0], readonly=True) as blob:
        size = len(blob)
        count = max(1, -(-size // part_bytes))
        index = min(max(index, 0), count - 1)
        start = index * part_bytes
        blob.seek(start)
        chunk = blob.read(part_bytes + _MAX_CHAR - 1)
    return TextPart(_whole_characters(chunk, part_bytes, first=start == 0), index, count, size)


def _whole_characters(chunk: bytes, part_bytes: int, *, first: bool) -> str:
    """The characters that start in the first `part_bytes` bytes of `chunk`: the continuation
    bytes it starts with belong to the previous part's last character, and the last character
    may run up to three bytes past `part_bytes`."""
    lead = 0
    if not first:
        while lead < min(_MAX_CHAR - 1, len(chunk)) and _continues(chunk[lead]):
            lead += 1
    end = min(part_bytes, len(chunk))
    while end < len(chunk) and _continues(chunk[end]):
        end += 1
    return chunk[lead:end].decode("utf-8", "replace")


def _continues(byte: int) -> bool:
    return 0x80 <= byte < 0xC0  # 10xxxxxx: not the first byte of a character


def part_of(text: str, index: int, part_chars: int) -> TextPart:
    """Part `index` (clamped) of a text in memory, `part_chars` characters a part."""
    count = max(1, -(-len(text) // part_chars))
    index = min(max(index, 0), count - 1)
    return TextPart(text[index * part_chars:(index + 1) * part_chars], index, count, len(text))
