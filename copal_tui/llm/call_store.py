"""Where an LLM client's calls are kept: the response cache and the call log, buffered.

The client (copal_tui.llm.client) decides what to ask and when to retry; this owns the SQLite
side of it. Its connection is opened lazily, in the event loop's thread (sqlite connections are
per thread). Log and cache rows are buffered and written in batches (every `flush_interval`
seconds or `flush_rows` rows, and at `close()`): a commit per call with synchronous=FULL would
cost an fsync each, and losing the unflushed tail in a crash only means calling those requests
again. The SQL itself is store.pipeline.llm_log's.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from os import PathLike

from store.db import Database, connect
from store.pipeline import llm_log


@dataclass
class _Buffers:
    calls: list[llm_log.CallRow] = field(default_factory=list)
    cache: dict[str, llm_log.CacheRow] = field(default_factory=dict)


class CallStore:
    """The cache and call log of one client, with its write buffers and flush timer."""

    def __init__(self, db_path: str | PathLike[str], *, flush_interval: float = 0.2,
                 flush_rows: int = 50) -> None:
        self.db_path = db_path
        self.flush_interval = flush_interval
        self.flush_rows = flush_rows
        self._db: Database | None = None
        self._buf = _Buffers()
        self._timer: asyncio.TimerHandle | None = None
        self._known: set[str] | None = None
        self._closed = False

    def conn(self) -> Database:
        if self._db is None:
            # Opened here, in the event loop's thread (sqlite connections are per thread).
            self._db = connect(self.db_path)
        return self._db

    def get(self, key: str) -> str | None:
        """The cached answer of a request (buffered or stored), None when there is none."""
        row = self._buf.cache.get(key)
        if row is not None:
            return row.response
        if self._known is None:
            # One read of the cached hashes instead of a query per request: on a new run most
            # requests miss, and each query would hand the GIL to litellm's worker threads.
            # A row another process adds meanwhile is only missed (re-called), never wrong.
            self._known = llm_log.cache_keys(self.conn())
        if key not in self._known:
            return None
        return llm_log.cache_get(self.conn(), key)

    def evict(self, key: str) -> None:
        """Forget a cached answer that turned out unusable."""
        if not key:
            return
        self._buf.cache.pop(key, None)
        if self._known is not None:
            self._known.discard(key)
        llm_log.cache_delete(self.conn(), key)

    def log(self, row: llm_log.CallRow) -> None:
        self._buf.calls.append(row)
        self._maybe_flush()

    def cache(self, row: llm_log.CacheRow) -> None:
        self._buf.cache[row.request_hash] = row
        self._maybe_flush()

    def close(self) -> None:
        """Flush what is buffered, then close the connection (a failed flush still closes)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
        finally:
            if self._db is not None:
                self._db.conn.close()
                self._db = None

    def _maybe_flush(self) -> None:
        if len(self._buf.calls) + len(self._buf.cache) >= self.flush_rows:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_interval, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        try:
            self.flush()
        except Exception:
            # Rows were put back by flush; try again later rather than lose them. A lasting
            # problem surfaces at close(), which flushes without this guard.
            if not self._closed:
                self._timer = asyncio.get_running_loop().call_later(
                    self.flush_interval, self._on_timer)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        buf, self._buf = self._buf, _Buffers()
        if not buf.calls and not buf.cache:
            return
        try:
            llm_log.flush(self.conn(), buf.calls, list(buf.cache.values()))
        except Exception:
            self._buf.calls[:0] = buf.calls
            self._buf.cache = {**buf.cache, **self._buf.cache}
            raise
        if self._known is not None:
            self._known.update(buf.cache)
