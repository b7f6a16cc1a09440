"""What every local HTTP stub of the tests is built from: a quiet JSON request handler, a
threaded server on 127.0.0.1 and a free port, and an OpenAI chat-completion answer body."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def send_json(self, status: int, body: dict[str, Any] | str | bytes,
                  headers: dict[str, str] | None = None,
                  content_type: str = "application/json") -> None:
        """Send `body` (a dict is JSON-encoded, text and bytes go as they are)."""
        text = json.dumps(body) if isinstance(body, dict) else body
        data = text.encode() if isinstance(text, str) else text
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


def chat_completion(content: str, *, finish_reason: str = "stop", usage: dict[str, int] = USAGE,
                    completion_id: str = "chatcmpl-stub") -> dict[str, Any]:
    return {"id": completion_id, "object": "chat.completion", "created": 1, "model": "stub",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out closed the socket before a slow answer: expected here.
        pass


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler], path: str = "/v1") -> Iterator[str]:
    """Serve `handler` until the block ends; yields the base URL (ending in `path`)."""
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
