"""The import error and how it names a field, in a module of its own: the CLI catches it on
every command, and must not load the file schemas (pydantic models) just to name it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any


class ImportFailure(Exception):
    def __init__(
        self, path: Path | str, message: str, line: int | None = None, field: str | None = None
    ) -> None:
        super().__init__(message)
        self.path, self.message, self.line, self.field = str(path), message, line, field

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = f"{self.field}: " if self.field else ""
        return f"{where}: {what}{self.message}"


def field_name(loc: Iterable[Any]) -> str:
    """A location in a record as the errors name a field: `policies[2].text`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
