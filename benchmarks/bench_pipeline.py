"""Pipeline throughput: `respond` and `judge` against the local stub at fixed latency L and
concurrency C, as a fraction of the ideal C/L calls per second; and the calls an identical
second run makes (must be 0).
"""

from __future__ import annotations

import json
import socket
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


def throughput(concurrencies: list[int], latency: float = 0.2,
               units_per_slot: int = 8) -> list[dict[str, Any]]:
    from copal_tui.llm import provider
    from copal_tui.pipeline.base import Options
    from copal_tui.pipeline.runner import run_stages

    provider.get_litellm()  # its import (seconds) is start-up cost, not throughput
    port = _free_port()
    stub = subprocess.Popen([sys.executable, str(HERE / "stub.py"), str(port), str(latency)])
    rows: list[dict[str, Any]] = []
    try:
        _wait(f"http://127.0.0.1:{port}/count")
        for c in concurrencies:
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
                for stage in ("respond", "judge"):
                    t = time.perf_counter()
                    [p] = run_stages(db, [stage], opts)
                    wall = time.perf_counter() - t
                    rate = p.calls / wall
                    frac = rate / (c / latency)
                    rows.append(row(f"{stage} C={c} L={latency}s", frac * 100, "% of C/L",
                                    ">= 90%", frac >= 0.9,
                                    note=f"{rate:.1f} calls/s, {p.calls} calls in {wall:.1f}s"))
                [r2] = run_stages(db, ["respond"], opts)
                [j2] = run_stages(db, ["judge"], opts)
                again = r2.calls + j2.calls
                rows.append(row(f"second run calls C={c}", again, "calls", "0", again == 0))
    finally:
        stub.kill()
        stub.wait()
    return rows


if __name__ == "__main__":
    print(json.dumps(throughput([8]), indent=1))
