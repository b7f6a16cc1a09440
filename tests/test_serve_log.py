"""`copal serve`'s log never shows a token, however the request spells its name, and shows
request text only through the terminal sanitiser.

The command runs as a user starts it (a subprocess on a free loopback port); requests go over a
raw socket, so their bytes are exactly those written here; the assertions read what the
process printed. Each request carries a marker in its User-Agent; the test waits (a bounded
poll) until every marker is in the log.
"""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

from tests.test_serve_auth import token_of
from tests.test_serve_browser import DEADLINE_S, Served, copal_serve, until


def get(port: int, target: str, *headers: str) -> int:
    """The status of `GET target` with these extra header lines (UTF-8 on the wire)."""
    head = [f"GET {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def printed(served: Served) -> str:
    """What the server printed, but the URL lines it was started with, with no whitespace (the
    log wraps long lines)."""
    text = served.output(tail=10**7)
    return re.sub(r"\s", "", "\n".join(line for line in text.splitlines()
                                        if not line.startswith("ana\t")))


def test_no_spelling_of_the_token_reaches_the_log(initialised: Path, tmp_path: Path):
    end = time.monotonic() + DEADLINE_S
    with copal_serve(initialised, tmp_path, end) as (served, url):
        port, token = urlsplit(url).port, token_of(url)
        assert port is not None
        probes = [
            # Spellings the server takes as the token (a 303 to the app's page) ...
            (f"/?tok%65n={token}", (), 303),
            (f"/?%74%6F%6B%65%6E={token}&fontsize=9", (), 303),
            # ... and spellings it refuses, whose value is as secret.
            (f"/?TOKEN={token}", (), 401),
            (f"/?fontsize=9&Token={token}", (), 401),
            (f"/%3Ftoken={token}", (), 401),
            (f"/?t%256Fken={token}", (), 401),
            (f"/?token%3D{token}", (), 401),
            ("/static/js/textual.js", (f"Referer: http://127.0.0.1:{port}/?token={token}",),
             401),
        ]
        for n, (target, headers, status) in enumerate(probes):
            assert get(port, target, *headers, f"User-Agent: probe-{n}") == status, target
        # Header text a terminal would act on: a bidi override and an 8-bit CSI.
        assert get(port, "/", "User-Agent: probe-evil \u202e2J \u009b2J") == 401

        markers = [f"probe-{n}" for n in range(len(probes))] + ["probe-evil"]
        until("every request in the log", lambda: all(m in printed(served) for m in markers),
              end, alive=served, pause=lambda: time.sleep(0.1), detail=served.output)
        log = printed(served)
        assert token not in log
        assert log.count("<redacted>") >= len(probes)
        assert "\u202e" not in log and "\u009b" not in log
        assert "\u27e6U+202E\u27e7" in log and "\u27e6U+009B\u27e7" in log
