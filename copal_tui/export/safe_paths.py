"""Where copal may write an output file, and how: the one guard every export and backup uses.

`OutputGuard` refuses (with `OutputRefused`, naming the path) a target that is, once symbolic
links are resolved, the database in use or its -wal/-shm/-journal file (compared by name, and by
inode where the file exists, so a hard link counts too); that is not a regular file (directory,
device, FIFO, socket, dangling link); or that already exists, unless the guard was made with
`force`. Commands check every target before touching the disk, so a refusal leaves it as it was
(and report it as exit status 2: copal_tui.commands.refusals).

`Staging` writes each file to a new temporary beside its target (created with O_EXCL, so no
existing name is ever opened for writing) and renames them all onto their targets only once all
are complete; on failure the temporaries are removed. A failed or killed export, backup or demo
thus never leaves a partial file under a name that would block the retry. A staged SQLite
database (a backup, the demo) also removes the -wal/-shm/-journal files left beside its target
when it is renamed: SQLite would replay another database's log onto the new file.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Protocol

# SQLite's own files next to a database: writing any of them corrupts or loses it.
SIBLINGS = ("", "-wal", "-shm", "-journal")
# The names refusals give a target that is not a regular file.
_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


class OutputRefused(OSError):
    """A path copal will not write; the message names it. An OSError, so callers that already
    report failed writes (the dashboard's export) report this one the same way."""


class _Connection(Protocol):
    def execute(self, sql: str) -> Any: ...


@dataclass(frozen=True)
class OutputGuard:
    """Which output paths may be written: see the module docstring."""

    protected: frozenset[str] = frozenset()
    force: bool = False

    @classmethod
    def for_database(cls, *dbs: str | os.PathLike[str] | None,
                     force: bool = False) -> OutputGuard:
        return cls(force=force).protecting(*dbs)

    def protecting(self, *dbs: str | os.PathLike[str] | None) -> OutputGuard:
        names = set(self.protected)
        for db in dbs:
            if db is None or os.fspath(db) in ("", ":memory:"):
                continue
            # The name as given and with links resolved: SQLite names its -wal/-shm after
            # the resolved file, a user may name them either way.
            for base in {os.path.abspath(db), os.path.realpath(db)}:
                names.update(base + suffix for suffix in SIBLINGS)
        return replace(self, protected=frozenset(names))

    def with_connection(self, db: _Connection) -> OutputGuard:
        """Also protect the file this connection has open as its main database, whatever path
        it was opened by (none in memory)."""
        rows = db.execute("PRAGMA database_list").fetchall()
        return self.protecting(*(row[2] for row in rows if row[1] == "main"))

    def check_file(self, path: Path) -> Path:
        """Refuse `path` unless it may be written; returns it with links resolved."""
        real = os.path.realpath(path)
        self._refuse_database(path)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            if os.path.lexists(path):
                raise OutputRefused(f"refusing to write {path}: it is a symbolic link to "
                                    "nothing") from None
            return Path(real)
        except OSError as exc:  # a parent that is a file, a loop of links, no permission
            raise OutputRefused(f"refusing to write {path}: {exc.strerror or exc}") from None
        self._refuse_database(path, st)
        if not stat.S_ISREG(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "a special file")
            raise OutputRefused(f"refusing to write {path}: it is {kind}, not a regular file")
        if not self.force:
            raise OutputRefused(f"refusing to replace {path}: it already exists "
                                "(--force, or \"replace existing files\" in the app, replaces "
                                "an existing file)")
        return Path(real)

    def check_folder(self, path: Path) -> None:
        """Refuse `path` as an output folder unless it is one or does not exist yet."""
        self._refuse_database(path)
        if os.path.lexists(path) and not os.path.isdir(path):
            raise OutputRefused(f"refusing to export into {path}: it exists and is not a folder")

    def _refuse_database(self, path: Path, st: os.stat_result | None = None) -> None:
        """Refuse `path` if it names a protected file, or (given its stat) is one by inode."""
        named = {os.path.realpath(path), os.path.abspath(path)} & self.protected
        linked = st is not None and any(_same_file(name, st) for name in self.protected)
        if named or linked:
            raise OutputRefused(f"refusing to write {path}: it is the database in use "
                                "or one of its -wal/-shm files")


def names_folder(raw: str) -> bool:
    """Whether an output path, as typed, names a folder: an existing one, or one spelled as a
    folder (`bundle/`, `bundle/.`), which need not exist yet. Read from the typed text: click
    and pathlib drop a trailing separator."""
    return os.path.isdir(raw) or os.path.basename(raw) in ("", ".", "..")


def _same_file(name: str, st: os.stat_result) -> bool:
    try:
        return os.path.samestat(os.stat(name), st)
    except OSError:  # gone, or not reachable: not the file being written
        return False


@dataclass
class _Staged:
    temporary: Path
    target: Path  # as asked for (named in messages)
    real: Path  # where it goes: the target with links resolved
    database: bool = False  # an SQLite file: the target's own side files go when it lands


class Staging:
    """Output files written to temporaries and renamed onto their targets by `commit()`.

    Use as a context manager: leaving it without `commit()` (an exception, say) removes every
    temporary and leaves the targets as they were.
    """

    def __init__(self, guard: OutputGuard) -> None:
        self.guard = guard
        self._staged: list[_Staged] = []

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.discard()

    def reserve(self, target: Path, *, database: bool = False) -> Path:
        """A new, empty temporary file beside `target` (which the guard checks first);
        `database`: it will hold an SQLite database (see the module docstring)."""
        real = self.guard.check_file(target)
        real.parent.mkdir(parents=True, exist_ok=True)
        while True:
            # Short, hidden and random: never an existing name, never a too-long one.
            tmp = real.with_name(f".{real.name[:80]}.{secrets.token_hex(6)}.partial")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                continue
            os.close(fd)
            self._staged.append(_Staged(tmp, target, real, database))
            return tmp

    @contextmanager
    def writing(self, target: Path, *, binary: bool = False,
                newline: str | None = "") -> Iterator[IO[Any]]:
        """A file object whose content becomes `target` on `commit()`."""
        tmp = self.reserve(target)
        fh: IO[Any] = (tmp.open("wb") if binary
                       else tmp.open("w", encoding="utf-8", newline=newline))
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())  # complete on disk before the rename makes it visible

    def write(self, target: Path, data: str | bytes) -> None:
        with self.writing(target, binary=isinstance(data, bytes)) as fh:
            fh.write(data)

    def temporary(self, target: Path) -> Path:
        """Where `target`'s content is until `commit()` (to hash it for a manifest)."""
        return next(s.temporary for s in self._staged if s.target == target)

    def commit(self) -> list[Path]:
        """Rename every temporary onto its target, in the order staged (a manifest last)."""
        for staged in self._staged:  # a last look: something may have appeared meanwhile
            if self.guard.check_file(staged.target) != staged.real:
                raise OutputRefused(f"refusing to write {staged.target}: it changed while "
                                    "being written")
        done = []
        while self._staged:  # popped once renamed: a failed rename leaves the rest to discard()
            staged = self._staged[0]
            if staged.database:
                for suffix in SIBLINGS[1:]:
                    Path(f"{staged.real}{suffix}").unlink(missing_ok=True)
            os.replace(staged.temporary, staged.real)
            done.append(self._staged.pop(0).target)
        return done

    def discard(self) -> None:
        while self._staged:
            tmp = self._staged.pop().temporary
            # SQLite's side files too, when the temporary was a database being backed up.
            for suffix in SIBLINGS:
                Path(f"{tmp}{suffix}").unlink(missing_ok=True)


@contextmanager
def atomic_output(target: Path, guard: OutputGuard, *,
                  newline: str | None = "") -> Iterator[IO[Any]]:
    """One text output file, written through `Staging`."""
    with Staging(guard) as staging:
        with staging.writing(target, newline=newline) as fh:
            yield fh
        staging.commit()

