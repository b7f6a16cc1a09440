"""Writes from the UI thread that wait out a busy database instead of freezing the screen.

Another process may hold SQLite's write lock for minutes (an import, a pipeline stage). A write
made with the connection's 30 s busy timeout would freeze the screen that long and then fail,
losing what the annotator had just submitted. So every write the queue screens make (COPAL,
COMPASS, dialogue review, adjudication) goes through the app's one `WriteQueue`:

- it is tried at once with a short busy timeout (`ATTEMPT_MS`): when the database is free the
  write is committed before the key handler returns, exactly as before;
- when the database is busy the write waits in a first-in, first-out line, retried by a timer
  (`RETRY_SECONDS`, backing off) until it lands; a write made while others wait goes behind
  them, so labels land in the order they were submitted and none is dropped;
- while anything waits, the screens say "waiting for the database" on their status line;
- quitting while a label waits never loses it silently: the first `q` says so and quits as
  soon as everything waiting is saved; a second `q` quits at once, discarding the waiting
  writes, and the command exits 1 naming them (`exit_note`).

A write is one transaction, because a retry repeats all of it: a label and the lease renewal
after it are two writes. Lease writes are `keep=False`: they are dropped at exit (a lease
expires on its own). Waiting writes live in memory: if the process is killed while the
database is busy they are lost, which the status line has said all along.

`QueueWrites` is the mixin the queue screens share: writing, taking the next subject of a queue,
the status text, and `q`.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text

from store.db import BUSY_TIMEOUT_MS, Database, StoreError

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.timer import Timer

    from copal_tui.services.annotation.queue import AnnotationQueue
    from copal_tui.tui.app import CopalApp

# How long one attempt may wait for the write lock on the UI thread: long enough for another
# annotator's label (milliseconds) to finish, short enough that the screen never feels stuck.
ATTEMPT_MS = 200
# Seconds between attempts while the database stays busy (the last value repeats).
RETRY_SECONDS = (0.25, 0.5, 1.0, 2.0)


def is_busy(exc: BaseException) -> bool:
    """The error SQLite gives when another connection holds the lock past the busy timeout."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_BUSY  # extended codes keep the primary in 8 bits
    return "database is locked" in str(exc)


@contextmanager
def busy_timeout(db: Database, ms: int) -> Iterator[Database]:
    """Wait at most `ms` for a lock on this connection, then give the default back."""
    db.execute(f"PRAGMA busy_timeout = {int(ms)}")
    try:
        yield db
    finally:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


@dataclass(eq=False)
class Write:
    what: str  # shown while it waits and when it is discarded: "label on #12"
    run: Callable[[Database], Any]  # one transaction on the UI thread's connection
    done: Callable[[Any], None] | None = None  # called with run's result once it lands
    keep: bool = True  # False: a lease, dropped at exit
    subject: Any = None  # what it is about (a response id, a review key)
    key: str | None = None  # a newer write with the same key replaces it at the line's end


class WriteQueue:
    """The app's line of writes (UI thread only)."""

    def __init__(self, app: CopalApp) -> None:
        self.app = app
        self.waiting: deque[Write] = deque()
        self.quit_when_saved = False
        self._timer: Timer | None = None
        self._tries = 0
        self._exiting = False

    @property
    def busy(self) -> bool:
        return bool(self.waiting)

    def kept(self) -> list[Write]:
        """The waiting writes that must not be lost (labels, skips, undos, notes, flags)."""
        return [w for w in self.waiting if w.keep]

    def subjects(self) -> set[Any]:
        return {w.subject for w in self.waiting if w.keep and w.subject is not None}

    def submit(self, write: Write) -> bool:
        """Run `write` now if nothing waits, else behind what waits; True when it landed."""
        if write.key is not None and self.waiting and self.waiting[-1].key == write.key:
            # A lease renewed again while the last renewal still waits: one is enough (only
            # at the end of the line, so it never jumps a release made in between).
            self.waiting[-1] = write
            return False
        if not self.waiting and self._attempt(write):
            return True
        self.waiting.append(write)
        self._schedule()
        self._changed()
        return False

    def try_now(self, write: Write) -> bool:
        """Run `write` only when nothing waits and the database is free; never queue it. For
        a caller with another way forward when the database is busy (a read, a later try)."""
        return not self.waiting and self._attempt(write)

    def quit(self) -> None:
        """`q`: exit now when nothing must be saved; else wait for it (first q) or discard it
        and exit 1 (second q)."""
        kept = self.kept()
        if not kept:
            self._exit()
        elif self.quit_when_saved:
            names = "; ".join(w.what for w in kept)
            self.app.exit_note = (f"quit with {len(kept)} unsaved change(s), discarded while "
                                  f"the database was busy: {names}")
            self._exit(return_code=1)
        else:
            self.quit_when_saved = True
            self.app.notify(f"{len(kept)} change(s) still waiting for the database: copal "
                            "quits as soon as they are saved. Press q again to quit now and "
                            "discard them.", severity="warning", timeout=10)
            self._changed()

    # -------------------------------------------------------------- internals

    def _attempt(self, write: Write) -> bool:
        """One try; True when the write is done with (landed, or refused by the store)."""
        db = self.app.db
        try:
            with busy_timeout(db, ATTEMPT_MS):
                result = write.run(db)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                return False
            raise
        except StoreError as exc:
            # The write itself is wrong (an unknown response, a stale key): retrying is useless.
            self.app.notify(str(exc), severity="error")
            return True
        if write.done is not None:
            write.done(result)
        return True

    def _drain(self) -> None:
        self._timer = None
        while self.waiting:
            write = self.waiting.popleft()
            if not self._attempt(write):
                self.waiting.appendleft(write)
                self._tries += 1
                self._schedule()
                self._changed()
                return
        self._tries = 0
        self._changed()

    def _schedule(self) -> None:
        if self._timer is None and not self._exiting:
            delay = RETRY_SECONDS[min(self._tries, len(RETRY_SECONDS) - 1)]
            self._timer = self.app.set_timer(delay, self._drain)

    def _changed(self) -> None:
        if self.quit_when_saved and not self.kept():
            self._exit()
            return
        for screen in self.app.screen_stack:
            hook = getattr(screen, "writes_changed", None)
            if callable(hook):
                hook()

    def _exit(self, return_code: int = 0) -> None:
        if not self._exiting:
            self._exiting = True
            self.app.exit(return_code=return_code)


if TYPE_CHECKING:
    _Base = Screen[None]
else:
    _Base = object  # a mixin: the screen classes bring Screen


class QueueWrites(_Base):
    """Mixin for the queue screens (listed before the Screen base): writes through the app's
    `WriteQueue`, the "waiting for the database" status text, and `q`. The screen provides
    `_status()` (its status line) and may override `leave()` (give back leases)."""

    @property
    def copal(self) -> CopalApp:
        return cast("CopalApp", self.app)

    def write(self, what: str, run: Callable[[Database], Any],
              done: Callable[[Any], None] | None = None, *, keep: bool = True,
              subject: Any = None, key: str | None = None) -> bool:
        """Make a write (now, or once the database is free); True when it landed now.
        `done` runs when it lands, unless this screen has been closed by then."""
        def landed(result: Any) -> None:
            if done is not None and self.is_attached:
                done(result)

        return self.copal.writes.submit(Write(what, run, landed if done else None, keep,
                                              subject, key))

    def write_now(self, run: Callable[[Database], Any],
                  done: Callable[[Any], None] | None = None) -> bool:
        """Make an optional write only if it can land now (see WriteQueue.try_now)."""
        return self.copal.writes.try_now(Write("", run, done, keep=False))

    def take_from(self, queue: AnnotationQueue, after: int = 0) -> str | None:
        """The next subject of `queue` after position `after` for this annotator: leased at
        once when the database is free; when it is busy, found with reads (never one whose
        write still waits), and the screen leases it once the database is free."""
        skip = self.pending()
        got: list[str | None] = []
        if self.write_now(lambda _db: queue.take_next(after, skip), got.append):
            return got[0] if got else None
        return queue.candidate(after, skip)

    def pending(self) -> set[Any]:
        """Subjects of writes still waiting (a response labelled but not saved yet)."""
        return self.copal.writes.subjects()

    def waiting_text(self) -> Text:
        """The status-line part saying what waits for the database (empty when nothing)."""
        writes = self.copal.writes
        if not writes.busy:
            return Text("")
        out = Text("\u00b7 waiting for the database", style="bold yellow")
        kept = writes.kept()
        if kept:
            more = f" and {len(kept) - 1} more" if len(kept) > 1 else ""
            out.append(f" to save your {kept[0].what}{more}", style="yellow")
        if writes.quit_when_saved:
            out.append(" \u00b7 quitting once saved (q again discards)", style="bold yellow")
        out.append(" ")
        return out

    def writes_changed(self) -> None:
        if self.is_mounted:
            self._status()

    def _status(self) -> None:
        raise NotImplementedError

    def leave(self) -> None:
        """Give back whatever the screen holds (leases) before it closes."""

    def action_quit_queue(self) -> None:
        """Quit `copal label`/`adjudicate` (waiting for unsaved writes, see WriteQueue.quit),
        or go back when the screen was opened over another one (from the browser's palette;
        its writes keep waiting in the app's line)."""
        self.leave()
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.copal.writes.quit()
