"""How much one `copal serve` can be made to hold, and the count of its live app sessions.

Every session (a browser tab's websocket) is an app process with its own copy of the app, so
without a cap one URL could open sessions until the machine swaps and every other user waits.
`ServeLimits` holds the caps and deadlines (`copal serve` options; the defaults below); `Sessions`
counts the sessions open per token and in total and says why one more is refused.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, fields

from copal_tui.serve import ServeConfigError


@dataclass(frozen=True)
class ServeLimits:
    """The server's bounds. Every value must be positive (and finite)."""

    sessions_per_token: int = 3
    sessions_total: int = 32
    idle_close_s: float = 30 * 60.0
    header_timeout_s: float = 10.0
    max_connections: int = 256

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ServeConfigError(f"{OPTION[field.name]} must be a positive number, "
                                       f"not {value!r}")
        if self.max_connections <= self.sessions_total:
            # Each session holds a connection for its whole life; the page and its files
            # need more.
            raise ServeConfigError(
                f"--max-connections {self.max_connections} must be more than --max-sessions "
                f"{self.sessions_total} (each session holds one connection)")

    @property
    def idle_minutes(self) -> str:
        return f"{self.idle_close_s / 60:g}"


# The `copal serve` option that sets each limit (for messages).
OPTION = {"sessions_per_token": "--max-sessions-per-url", "sessions_total": "--max-sessions",
          "idle_close_s": "--idle-minutes", "header_timeout_s": "--header-timeout",
          "max_connections": "--max-connections"}


@dataclass(frozen=True)
class Full:
    """Why no session can open: 429 when the URL has its share, 503 when the server is full."""

    status: int
    title: str
    message: str


class Sessions:
    """The app sessions open now, per token digest. Used from the event loop only."""

    def __init__(self, limits: ServeLimits) -> None:
        self.limits = limits
        self._open: Counter[bytes] = Counter()

    def of(self, digest: bytes) -> int:
        return self._open[digest]

    def total(self) -> int:
        return self._open.total()

    def refusal(self, digest: bytes) -> Full | None:
        """Why one more session for this token would be refused, or None."""
        limits = self.limits
        if self._open[digest] >= limits.sessions_per_token:
            return Full(429, "Too many sessions for this URL",
                        f"This URL already has {_sessions(self._open[digest])} open, the most "
                        f"one URL may have. Close a browser tab that uses it (a tab left without "
                        f"input is closed after {limits.idle_minutes} minutes), then reload.")
        if self.total() >= limits.sessions_total:
            return Full(503, "The server is full",
                        f"The server already runs {_sessions(self.total())}, the most it allows. "
                        f"Reload in a few minutes (a session left without input is closed after "
                        f"{limits.idle_minutes} minutes).")
        return None

    def open(self, digest: bytes) -> Full | None:
        """Takes a session slot for this token, or says why not."""
        full = self.refusal(digest)
        if full is None:
            self._open[digest] += 1
        return full

    def close(self, digest: bytes) -> None:
        self._open[digest] -= 1
        if self._open[digest] <= 0:
            del self._open[digest]


def _sessions(n: int) -> str:
    return f"{n} session" + ("" if n == 1 else "s")
