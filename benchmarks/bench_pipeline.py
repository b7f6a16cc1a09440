"""Pipeline throughput: `respond` and `judge` against the local stub at fixed latency L and
concurrency C, as a fraction of the ideal C/L calls per second; the calls an identical second
run makes (must be 0); and, in the same run, litellm's own ceiling at each C.

The ceiling row sends the same requests `respond` sent (its logged messages, through the same
`litellm.acompletion` arguments) from C tasks in this process, with nothing of copal around
them: no cache, log, retries or SQLite. litellm spends several ms of CPU per call, so on a small
machine the ceiling is well under C/L; `respond`'s note says what fraction of it copal reaches.

    python benchmarks/bench_pipeline.py [C ...]     (default: C=8)
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


if __name__ == "__main__":
    print(json.dumps(throughput([int(a) for a in sys.argv[1:]] or [8]), indent=1))
