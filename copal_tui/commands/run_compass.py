"""The COMPASS suite's options of `copal run` (its descriptor's `run_options`): the target
variants and the pre-filter of compass_respond, how compass_generate and compass_verify build
the suite (the reference's way unless asked otherwise), and what compass_judge sees."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from copal_tui.commands.suite_run import Params, SuiteRun
from copal_tui.domain.compass import (
    BASE_PER_POLICY,
    BASE_WRITERS,
    DEFAULT_EDGE_WRITER,
    DENIED_EDGE_WRITERS,
    EDGE_FILINGS,
    EDGE_WRITERS,
    MATCHERS,
    VARIANTS,
)
from copal_tui.domain.compass_rules import JUDGE_VARIANTS
from copal_tui.pipeline import PREFILTER_ENV

if TYPE_CHECKING:
    from copal_tui.pipeline.base import Options


def _read_by() -> Mapping[str, tuple[str, ...]]:
    return {"compass_variants": ("compass_respond",), "prefilter": ("compass_respond",),
            "per_policy": ("compass_generate",),
            "verifier": ("compass_generate", "compass_verify"),
            "matcher": ("compass_generate", "compass_verify"),
            "edge_writer": ("compass_generate",), "base_writer": ("compass_generate",),
            "denied_edge_writer": ("compass_generate",),
            "allowed_edge_policy": ("compass_generate",),
            "judge_variant": ("compass_judge",)}


def _apply(opts: Options, p: Params) -> None:
    c = opts.compass
    c.variants = list(dict.fromkeys(p["compass_variants"])) or ["base"]
    c.prefilter, c.per_policy, c.verifier = p["prefilter"], p["per_policy"], p["verifier"]
    c.judge_variant, c.edge_writer = p["judge_variant"], p["edge_writer"]
    c.base_writer, c.matcher = p["base_writer"], p["matcher"]
    c.denied_edge_writer, c.allowed_edge_policy = p["denied_edge_writer"], \
        p["allowed_edge_policy"]


RUN = SuiteRun(
    options=(
        click.option("--variant", "compass_variants", multiple=True, type=click.Choice(VARIANTS),
                     help="COMPASS target-chatbot variant for compass_respond (repeatable; "
                          "default base)."),
        click.option("--prefilter", default=None, envvar=PREFILTER_ENV,
                     help=f"Pre-filter model of the COMPASS pre-filter variant (required by it; "
                          f"or set {PREFILTER_ENV})."),
        click.option("--per-policy", default=BASE_PER_POLICY, show_default=True,
                     type=click.IntRange(1, 100), help="COMPASS base queries per policy."),
        click.option("--verifier", default=None,
                     help="Model that verifies COMPASS queries (default: the generator)."),
        click.option("--edge-writer", type=click.Choice(EDGE_WRITERS),
                     default=DEFAULT_EDGE_WRITER, show_default=True,
                     help="compass_generate: who writes the allowed-edge queries: reference "
                          "(as COMPASS: each kept denied-base query rewritten once per "
                          "allowlist policy into a deceptive but allowed query, kept only when "
                          "the verifier says IN-POLICY) or variants (per allowlist policy "
                          "--per-policy risky-sounding permitted queries)."),
        click.option("--base-writer", type=click.Choice(BASE_WRITERS), default=BASE_WRITERS[0],
                     show_default=True,
                     help="compass_generate: base queries in one call per organisation "
                          "covering every policy, as COMPASS writes them (organisation), or "
                          "copal's earlier one call per policy over varied slots "
                          "(per-policy)."),
        click.option("--matcher", type=click.Choice(MATCHERS), default=MATCHERS[0],
                     show_default=True,
                     help="COMPASS verification of base and denied-edge queries: COMPASS's two "
                          "policy matchers (reference) or copal's earlier single matcher "
                          "(copal)."),
        click.option("--denied-edge-writer", type=click.Choice(DENIED_EDGE_WRITERS),
                     default=DENIED_EDGE_WRITERS[0], show_default=True,
                     help="compass_generate: denied-edge queries in COMPASS's short and long "
                          "calls with its strategy draw (reference), or copal's earlier one "
                          "call per base query with rotated strategies (rotation)."),
        click.option("--allowed-edge-policy", type=click.Choice(EDGE_FILINGS),
                     default=EDGE_FILINGS[0], show_default=True,
                     help="compass_generate: file an allowed-edge rewrite under its parent's "
                          "denylist policy, as COMPASS does (denylist), or under its allowlist "
                          "policy (allowlist); its allowlist policy is stored either way."),
        click.option("--judge-variant", type=click.Choice(JUDGE_VARIANTS),
                     default="response-only", show_default=True,
                     help="compass_judge: what the judge sees besides the policies and the "
                          "response: nothing (COMPASS's setting) or the query too (stored as "
                          "JUDGE+query)."),
    ),
    read_by=_read_by, apply=_apply)
