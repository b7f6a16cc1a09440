"""Stage `compass_verify`: verify every COMPASS query still pending or failed (the
COMPASS paper, Sections 3.1.2 and 3.1.4: query verification).

Base, denied-edge and `variants` allowed-edge queries: the verifier model names every policy
a query falls under; `domain.compass.verification_keeps` decides: an allowed query is kept when
it matches its intended allowlist policy and no denylist policy, a denied query when it matches
its intended denylist policy. Allowed-edge rewrites of denied-base queries (the `reference`
edge writer's, as the public COMPASS code makes them): a skeptical verifier sees the query,
every policy and the rewriter's claims and says IN-POLICY or OUT-OF-POLICY;
`domain.compass.edge_verdict_keeps` keeps only IN-POLICY. The status becomes kept or rejected
with the reason; a failed call leaves `failed`, retried by a re-run. `compass_generate` already
verifies base queries (edges are written from kept ones); this stage verifies the edge queries
and retries failures, so `copal run compass_generate compass_verify` builds a verified suite
in one call. A base query this stage keeps gets its edges at the next `compass_generate`.
"""

from __future__ import annotations

from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import to_verify, verify


async def execute(run: StageRun) -> None:
    await verify(run, to_verify(run))
