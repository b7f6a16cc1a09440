"""A local OpenAI-compatible stub with a fixed latency, for throughput benchmarks.

    python benchmarks/stub.py PORT LATENCY_SECONDS

Answers every chat completion after LATENCY seconds: a judge request (one carrying a COPAL
task trailer) gets a valid judge answer (every contract item marked absent), anything else a short chatbot reply. Serves
127.0.0.1 only; runs until killed.
"""

from __future__ import annotations

import asyncio
import json
import sys

from aiohttp import web


def judge_answer(prompt: str) -> str:
    """A valid contract-judge answer: one mark per contract item of the task's input object
    (every item absent), as the judge's output model requires."""
    task = prompt[prompt.index("COPAL-TASK:"):]
    data, _end = json.JSONDecoder().raw_decode(task[task.index("{"):])
    items = [*data.get("required", []), *data.get("forbidden", [])]
    marks = [{"id": it["id"], "present": False, "evidence": None} for it in items]
    return json.dumps({"marks": marks, "facet": None, "rationale": "stub"})


async def chat(request: web.Request) -> web.Response:
    body = await request.json()
    await asyncio.sleep(request.app["latency"])
    last = body["messages"][-1]["content"]
    content = judge_answer(last) if "COPAL-TASK:" in last else "Thanks for asking. Here is what I can share."
    request.app["state"]["count"] += 1
    return web.json_response({
        "id": "stub", "object": "chat.completion", "created": 0, "model": body.get("model"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    })


async def count(request: web.Request) -> web.Response:
    return web.json_response({"count": request.app["state"]["count"]})


def main() -> None:
    port, latency = int(sys.argv[1]), float(sys.argv[2])
    app = web.Application()
    app["latency"], app["state"] = latency, {"count": 0}
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/count", count)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


if __name__ == "__main__":
    main()
