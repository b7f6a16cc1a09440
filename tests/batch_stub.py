"""A local OpenAI-compatible files + batches server for the batch tests, on 127.0.0.1.

It implements what `copal run --batch` uses of the provider: POST /v1/files (multipart upload),
POST /v1/batches, GET /v1/batches/{id} (in_progress for `polls_in_progress` polls, then
completed, unless `hold` keeps it running), GET /v1/files/{id}/content, POST
/v1/batches/{id}/cancel, and POST /v1/chat/completions for the live path. Each batch line is
answered the way tests/stub_server answers a live call (the same text, 10 prompt and 5
completion tokens); a line whose user text contains one of `failing` gets an error line instead.
"""

from __future__ import annotations

import json
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.http_stub_support import USAGE, JsonHandler, chat_completion, serve_http
from tests.stub_server import answer


@dataclass
class BatchStub:
    polls_in_progress: int = 1
    hold: bool = False  # keep every batch in_progress (a batch the provider has not finished)
    failing: set[str] = field(default_factory=set)
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    creates: int = 0
    uploads: int = 0
    polls: int = 0
    live_calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def upload(self, content: bytes) -> dict[str, Any]:
        with self.lock:
            self.uploads += 1
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = content
        return {"id": fid, "object": "file", "bytes": len(content), "created_at": 1,
                "filename": "input.jsonl", "purpose": "batch", "status": "processed"}

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.creates += 1
            bid = f"batch_{len(self.batches) + 1}"
            lines = self.files[body["input_file_id"]].decode().splitlines()
            self.batches[bid] = {
                "id": bid, "object": "batch", "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"], "completion_window": "24h",
                "status": "validating", "created_at": 1, "output_file_id": None,
                "error_file_id": None, "polls": 0,
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            }
            return self._public(bid)

    def retrieve(self, bid: str) -> dict[str, Any]:
        with self.lock:
            self.polls += 1
            batch = self.batches[bid]
            batch["polls"] += 1
            if batch["status"] in ("completed", "cancelled"):
                return self._public(bid)
            total = batch["request_counts"]["total"]
            if self.hold or batch["polls"] <= self.polls_in_progress:
                batch["status"] = "in_progress"
                batch["request_counts"]["completed"] = min(total, batch["polls"] - 1)
            else:
                self._finish(bid)
            return self._public(bid)

    def cancel(self, bid: str) -> dict[str, Any]:
        with self.lock:
            self.batches[bid]["status"] = "cancelled"
            return self._public(bid)

    def _finish(self, bid: str) -> None:
        batch = self.batches[bid]
        out, errors = [], []
        for raw in self.files[batch["input_file_id"]].decode().splitlines():
            line = json.loads(raw)
            messages = line["body"]["messages"]
            text = "\n".join(m["content"] for m in messages if m["role"] == "user")
            if any(marker in text for marker in self.failing):
                errors.append({"id": f"req-{line['custom_id'][:8]}",
                               "custom_id": line["custom_id"],
                               "response": {"status_code": 500, "body": {"error": {
                                   "message": "upstream failure"}}}, "error": None})
                continue
            out.append({"id": f"req-{line['custom_id'][:8]}", "custom_id": line["custom_id"],
                        "response": {"status_code": 200, "request_id": "r", "body": {
                            "id": "chatcmpl-batch", "object": "chat.completion", "created": 1,
                            "model": line["body"]["model"],
                            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                "role": "assistant", "content": answer(messages)}}],
                            "usage": USAGE}}, "error": None})
        batch["output_file_id"] = self._store(out)
        batch["error_file_id"] = self._store(errors) if errors else None
        batch["status"] = "completed"
        batch["request_counts"].update(completed=len(out), failed=len(errors))

    def _store(self, rows: list[dict[str, Any]]) -> str:
        fid = f"file-{len(self.files) + 1}"
        self.files[fid] = "".join(json.dumps(r) + "\n" for r in rows).encode()
        return fid

    def _public(self, bid: str) -> dict[str, Any]:
        return {k: v for k, v in self.batches[bid].items() if k != "polls"}


def _file_part(content_type: str, body: bytes) -> bytes:
    message = BytesParser(policy=HTTP).parsebytes(
        f"content-type: {content_type}\r\n\r\n".encode() + body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            data = part.get_payload(decode=True)
            return data if isinstance(data, bytes) else b""
    raise ValueError("no file part")


def _handler(stub: BatchStub) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:
            parts = self.path.split("?")[0].strip("/").split("/")
            if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                self.send_json(200, stub.retrieve(parts[2]))
            elif parts[:2] == ["v1", "files"] and parts[-1] == "content":
                self.send_json(200, stub.files[parts[2]])
            else:
                self.send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            parts = self.path.split("?")[0].strip("/").split("/")
            if parts == ["v1", "files"]:
                self.send_json(200, stub.upload(_file_part(self.headers["content-type"], raw)))
            elif parts == ["v1", "batches"]:
                self.send_json(200, stub.create(json.loads(raw)))
            elif parts[:2] == ["v1", "batches"] and parts[-1] == "cancel":
                self.send_json(200, stub.cancel(parts[2]))
            elif parts == ["v1", "chat", "completions"]:
                with stub.lock:
                    stub.live_calls += 1
                messages = json.loads(raw)["messages"]
                self.send_json(200, chat_completion(answer(messages),
                                                    completion_id="chatcmpl-live"))
            else:
                self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    return Handler


def serve(stub: BatchStub) -> AbstractContextManager[str]:
    return serve_http(_handler(stub))
