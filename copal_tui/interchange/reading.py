"""Reading the files of an import with the maximum record size as the bound.

Every record an import reads is at most `MAX_RECORD_BYTES` (16 MiB): one line of a JSONL file
(interchange records, COMPASS judged rows), or a whole file where the file is one document (a
world YAML file; a COMPASS policies, context or prompt file; a CompliBench conversation or
judge output). Lines are read with that bound (`record_lines`) and documents likewise
(`read_document`), so a larger record is refused, naming its file and line, once that much of
it was read: never read whole, however large (a 1 GB line costs 16 MiB of reading).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

from copal_tui.interchange.errors import ImportFailure

# Generous: a world file of 100,000 policies, or a response of millions of words, fits; a
# public CompliBench conversation is about 100 KB.
MAX_RECORD_BYTES = 16 * 2**20
MAX_RECORD = f"{MAX_RECORD_BYTES // 2**20} MiB"


def read_document(path: Path) -> bytes:
    """The bytes of a file that is one record; refused, once MAX_RECORD_BYTES of it were read,
    when it is longer."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise ImportFailure(path, f"cannot read: {exc.strerror}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise ImportFailure(path, f"file larger than the maximum record size of {MAX_RECORD} "
                                  "(this file is one record)")
    return data


def record_lines(fh: IO[bytes], path: Path | str) -> Iterator[bytes]:
    """The lines of a file of one record per line, each read with the record bound: a longer
    line is refused, naming its number, after MAX_RECORD_BYTES + 1 of its bytes were read."""
    number = 1
    while raw := fh.readline(MAX_RECORD_BYTES + 1):
        if len(raw) > MAX_RECORD_BYTES and not (len(raw) == MAX_RECORD_BYTES + 1
                                                 and raw.endswith(b"\n")):
            raise ImportFailure(path, f"line longer than the maximum record size of "
                                      f"{MAX_RECORD} (a record is one line)", line=number)
        yield raw
        number += 1


def record_text(path: Path | str, line: int, raw: bytes, offset: int) -> str:
    """One line's text (`offset`: where it starts in the file, for the error's byte)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailure(path, f"not valid UTF-8 (byte {offset + exc.start})",
                            line=line) from None


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(number, text) of each line that is not blank, of a file of one record per line (a
    byte order mark at its start dropped)."""
    offset = 0
    with path.open("rb") as fh:
        for number, raw in enumerate(record_lines(fh, path), 1):
            text = record_text(path, number, raw, offset)
            offset += len(raw)
            if number == 1:
                text = text.removeprefix("\ufeff")
            if text.strip():
                yield number, text
