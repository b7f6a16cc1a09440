"""The import error, in a module of its own: the CLI catches it on every command, and must not
load the file schemas (pydantic models) just to name it."""

from __future__ import annotations

from pathlib import Path


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
