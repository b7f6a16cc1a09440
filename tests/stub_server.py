"""A local OpenAI-compatible chat server for stage-level tests, on 127.0.0.1 and a free port.

It answers like a model would: requests carrying a COPAL task (a trailer, or a prompt laid out
in text blocks) get the offline engine's structured answer, others (chatbot calls) a comply-all answer. Faults are injected per request
by matching a marker in the last user message: a queue of one-off behaviours per marker
(`once`) and markers that always fail (`broken`) until cleared.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from copal_tui.offline import engine
from tests.http_stub_support import JsonHandler, chat_completion, serve_http


@dataclass
class Stub:
    once: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    broken: set[str] = field(default_factory=set)
    latency: float = 0.0
    calls: int = 0
    authorization: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def behaviour(self, text: str) -> tuple[Any, ...]:
        with self.lock:
            self.calls += 1
            for marker in sorted(self.broken):
                if marker in text:
                    return ("500",)
            for marker, queue in self.once.items():
                if marker in text and queue:
                    return queue.pop(0)
        return ("ok",)


def answer(messages: list[dict[str, Any]]) -> str:
    if engine.find_task(messages) is not None:  # a trailer, or a prompt laid out in blocks
        return engine.answer("judge", messages)
    return engine.answer("comply-all", messages)


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _ok(self, content: str) -> None:
            self.send_json(200, chat_completion(content))

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            stub.authorization.append(self.headers.get("authorization", ""))
            messages = body["messages"]
            # Markers match any user message, so a repair round (whose last message is the
            # repair instruction) still meets the fault planned for its item.
            act = stub.behaviour("\n".join(m["content"] for m in messages if m["role"] == "user"))
            if stub.latency:
                time.sleep(stub.latency)
            kind = act[0]
            if kind == "429":
                self.send_json(429, {"error": {"message": "rate limited", "type": "rate_limit"}},
                              {"Retry-After": str(act[1])})
            elif kind == "500":
                self.send_json(500, {"error": {"message": "upstream failure"}})
            elif kind == "slow":
                time.sleep(act[1])
                self._ok(answer(messages))
            elif kind == "truncate":
                self._ok(answer(messages)[: act[1]])
            elif kind == "raw":
                self._ok(act[1])
            elif kind == "empty":
                self._ok("")
            else:
                self._ok(answer(messages))

    return Handler


def serve(stub: Stub) -> AbstractContextManager[str]:
    return serve_http(_handler(stub))
