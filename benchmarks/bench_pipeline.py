"""Pipeline throughput: `respond` and `judge` against the local stub at fixed latency L and
concurrency C, as a fraction of the ideal C/L calls per second; the calls an identical second
run makes (must be 0); and, in the same run, litellm's own ceiling at each C.

The ceiling row sends the same requests `respond` sent (its logged messages, through the same
`litellm.acompletion` arguments) from C tasks in this process, with nothing of copal around
them: no cache, log, retries or SQLite. litellm spends several ms of CPU per call, so on a small
machine the ceiling is well under C/L; `respond`'s note says what fraction of it copal reaches.

`client_rate()` measures what one process gets through copal's client (copal_tui/llm/client.py:
cache look-up, call log, limits, retries) against the stub answering at once (L=0), so the
figure is the client's and litellm's CPU per call; beside it, litellm's own ceiling: calls per
second of `litellm.completion` with `mock_response` (no network, no copal) in one process.

    python benchmarks/bench_pipeline.py [C ...]     (default: C=8)
    python benchmarks/bench_pipeline.py --client [CALLS]
"""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench_store import row

HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str) -> None:
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("stub did not start")


def _logged_messages(db: Path, run_id: str) -> list[list[dict[str, Any]]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT request FROM llm_calls WHERE run_id = ? AND cached = 0",
                            (run_id,)).fetchall()
    finally:
        conn.close()
    return [json.loads(r[0])["messages"] for r in rows]


async def _raw_litellm(spec: Any, requests: list[list[dict[str, Any]]], concurrency: int) -> float:
    """Calls per second of bare `litellm.acompletion` over `requests` from `concurrency` tasks."""
    from copal_tui.llm import provider

    litellm = provider.get_litellm()
    todo = list(reversed(requests))

    async def worker() -> None:
        while todo:
            messages = todo.pop()
            await litellm.acompletion(**provider.request_kwargs(spec, messages, None))

    # One call first: the HTTP client and connection set-up are not the steady state.
    await litellm.acompletion(**provider.request_kwargs(spec, requests[0], None))
    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(requests) / (time.perf_counter() - start)


def throughput(concurrencies: list[int], latency: float = 0.2,
               units_per_slot: int = 8) -> list[dict[str, Any]]:
    from copal_tui.llm import provider
    from copal_tui.llm.models import resolve
    from copal_tui.pipeline.base import Options
    from copal_tui.pipeline.runner import run_stages

    provider.get_litellm()  # its import (seconds) is start-up cost, not throughput
    port = _free_port()
    stub = subprocess.Popen([sys.executable, str(HERE / "stub.py"), str(port), str(latency)])
    rows: list[dict[str, Any]] = []
    try:
        _wait(f"http://127.0.0.1:{port}/count")
        for c in concurrencies:
            ideal = c / latency
            with tempfile.TemporaryDirectory() as tmp:
                db = Path(tmp) / "t.db"
                items = c * units_per_slot
                subprocess.run([sys.executable, str(HERE / "generate.py"), str(db),
                                "--responses", str(items), "--models", "1", "--judges", "0",
                                "--labels", "0"], check=True, capture_output=True)
                models = Path(tmp) / "models.yaml"
                models.write_text("".join(
                    f"{n}:\n  model: openai/{n}\n  api_base: http://127.0.0.1:{port}/v1\n"
                    f"  max_concurrency: {c}\n  timeout: 30\n" for n in ("stub-bot", "stub-judge")),
                    encoding="utf-8")
                opts = Options(models=["stub-bot"], judges=["stub-judge"], concurrency=c,
                               models_file=models)
                rates: dict[str, float] = {}
                runs: dict[str, str] = {}
                for stage in ("respond", "judge"):
                    t = time.perf_counter()
                    [p] = run_stages(db, [stage], opts)
                    wall = time.perf_counter() - t
                    rates[stage], runs[stage] = p.calls / wall, p.run_id
                    note = f"{rates[stage]:.1f} calls/s, {p.calls} calls in {wall:.1f}s"
                    rows.append(row(f"{stage} C={c} L={latency}s", rates[stage] / ideal * 100,
                                    "% of C/L", ">= 90%", rates[stage] >= 0.9 * ideal,
                                    note=note))
                requests = _logged_messages(db, runs["respond"])
                raw = asyncio.run(_raw_litellm(resolve("stub-bot", models), requests, c))
                rows.append(row(f"raw litellm C={c} L={latency}s", raw / ideal * 100, "% of C/L",
                                note=f"{raw:.1f} calls/s, {len(requests)} calls; respond "
                                     f"reaches {rates['respond'] / raw * 100:.0f}% of it"))
                [r2] = run_stages(db, ["respond"], opts)
                [j2] = run_stages(db, ["judge"], opts)
                again = r2.calls + j2.calls
                rows.append(row(f"second run calls C={c}", again, "calls", "0", again == 0))
    finally:
        stub.kill()
        stub.wait()
    return rows


def _mock_ceiling(calls: int) -> float:
    """Calls per second of bare `litellm.completion(mock_response=...)`, one after another."""
    from copal_tui.llm import provider

    litellm = provider.get_litellm()
    start = time.perf_counter()
    for i in range(calls):
        litellm.completion(model="openai/bench-ceiling", api_key="unused", mock_response="ok",
                           messages=[{"role": "user", "content": f"ceiling {i}"}])
    return calls / (time.perf_counter() - start)


async def _client_calls(db: Path, models: Path, calls: int, concurrency: int) -> tuple[float,
                                                                                       float]:
    """(calls/s, CPU seconds per call) of LLMClient.complete over `calls` distinct requests."""
    from copal_tui.llm.client import LLMClient

    async with LLMClient(db, None, concurrency=concurrency, models_file=models) as client:
        spec = client.resolve("stub-bot")
        await client.complete(spec, [{"role": "user", "content": "warm up"}], task="bench",
                              template_version="1")
        todo = list(range(calls))

        async def worker() -> None:
            while todo:
                n = todo.pop()
                await client.complete(spec, [{"role": "user", "content": f"question {n}"}],
                                      task="bench", template_version="1")

        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return calls / wall, cpu / calls


def client_rate(calls: int = 400, concurrency: int = 16) -> list[dict[str, Any]]:
    """One process's calls per second through copal's client against a stub answering at once,
    and litellm's own ceiling (mock_response, one process), side by side."""
    from copal_tui.llm import provider
    from copal_tui.llm.models import resolve

    provider.get_litellm()
    port = _free_port()
    stub = subprocess.Popen([sys.executable, str(HERE / "stub.py"), str(port), "0"])
    try:
        _wait(f"http://127.0.0.1:{port}/count")
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "t.db"
            subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(db), "init"],
                           check=True, capture_output=True)
            models = Path(tmp) / "models.yaml"
            models.write_text(f"stub-bot:\n  model: openai/stub-bot\n  api_base: "
                              f"http://127.0.0.1:{port}/v1\n  max_concurrency: {concurrency}\n"
                              f"  timeout: 30\n", encoding="utf-8")
            rate, cpu = asyncio.run(_client_calls(db, models, calls, concurrency))
            logged = sqlite3.connect(db).execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]
            # The same requests through bare litellm.acompletion to the same stub: the HTTP
            # client's share, which the mock ceiling leaves out.
            requests = [[{"role": "user", "content": f"question {n}"}] for n in range(calls)]
            raw = asyncio.run(_raw_litellm(resolve("stub-bot", models), requests, concurrency))
    finally:
        stub.kill()
        stub.wait()
    ceiling = _mock_ceiling(calls)
    return [
        row(f"client calls/s per process (stub L=0, C={concurrency})", rate, "calls/s",
            note=f"{calls} calls, {cpu * 1000:.1f} ms CPU per call; {logged} rows logged; "
                 f"{rate / ceiling * 100:.0f}% of litellm's mock ceiling"),
        row(f"raw litellm calls/s (stub L=0, C={concurrency})", raw, "calls/s",
            note=f"the same requests, bare litellm.acompletion; copal reaches "
                 f"{rate / raw * 100:.0f}% of it"),
        row("litellm ceiling (completion, mock_response)", ceiling, "calls/s",
            note=f"{calls} calls, one process, no network, no copal"),
    ]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        print(json.dumps(client_rate(*(int(a) for a in sys.argv[2:3])), indent=1))
    else:
        print(json.dumps(throughput([int(a) for a in sys.argv[1:]] or [8]), indent=1))
