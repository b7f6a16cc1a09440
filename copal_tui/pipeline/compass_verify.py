"""Stage `compass_verify`: verify every COMPASS query still pending or failed (the
COMPASS paper, Sections 3.1.2 and 3.1.4: query verification).

The verifier model names every policy a query falls under; `domain.compass.verification_keeps`
decides: an allowed query is kept when it matches its intended allowlist policy and no
denylist policy, a denied query when it matches its intended denylist policy. The status
becomes kept or rejected with the reason; a failed call leaves `failed`, retried by a re-run.
`compass_generate` already verifies base queries (edges are written from kept ones); this
stage verifies the edge queries and retries failures.
"""

from __future__ import annotations

from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import to_verify, verify


async def execute(run: StageRun) -> None:
    await verify(run, to_verify(run))
