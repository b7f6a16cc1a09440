"""What a run is asked to do: the options every stage shares (scope, models, concurrency) and
each suite's own (`CopalOptions`, `CompassOptions`, `DialogueOptions`, `TrafficOptions`). A
stage reads the shared ones and its suite's; the run manifest records them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from copal_tui.domain.compass import (
    BASE_PER_POLICY,
    BASE_WRITERS,
    DEFAULT_EDGE_WRITER,
    DENIED_EDGE_WRITERS,
    EDGE_FILINGS,
    MATCHERS,
)
from copal_tui.domain.selection import DEFAULT_MIX

# Judge attempts per dialogue: the CompliBench paper prompts each model four times per
# conversation and averages the four runs.
JUDGE_ATTEMPTS = 4
# The dialogue judge's prompt: CompliBench's own (its code's system and user messages), or
# copal's, which adds two rules and a prompt-injection paragraph to it.
JUDGE_PROMPTS = ("reference", "copal")


@dataclass
class CopalOptions:
    """What the composed-suite stages read: judge modes, the selected items per world, query
    variants per composition x facet, accepted compositions aimed for per pattern on average
    (a world aims for 4 x per_pattern), and the relation-pattern mix that shares the
    compositions and the selected items among patterns (`domain.selection.PatternMix`: pool,
    equal, paper or PATTERN=WEIGHT,...)."""
    modes: list[str] = field(default_factory=lambda: ["contract"])
    budget: int = 30
    variants: int = 2
    per_pattern: int = 6
    pattern_mix: str = DEFAULT_MIX


@dataclass
class CompassOptions:
    """`copal run compass`: target-chatbot variants answered by compass_respond, the
    pre-filter model of the `pre-filter` variant, base queries per policy, the verifier model
    (None: the generator), what the judge sees besides the policies and the response:
    nothing (COMPASS's default, "response-only") or the query too ("with-query", stored as
    JUDGE+query), and who writes the allowed-edge queries (`domain.compass.EDGE_WRITERS`:
    "reference" rewrites each kept denied-base query per allowlist policy, as COMPASS does;
    "variants" writes per_policy risky-sounding queries per allowlist policy). How the suite is
    built follows the public COMPASS code unless asked otherwise (`domain.compass`): base queries
    one call per organisation ("organisation", or "per-policy"), the reference's matchers
    ("reference", or "copal"), denied-edge strategies drawn as the reference draws them
    ("reference", or "rotation"), allowed-edge rewrites filed under their parent's denylist
    policy ("denylist", or "allowlist")."""
    variants: list[str] = field(default_factory=lambda: ["base"])
    prefilter: str | None = None
    per_policy: int = BASE_PER_POLICY
    verifier: str | None = None
    judge_variant: str = "response-only"
    edge_writer: str = DEFAULT_EDGE_WRITER
    base_writer: str = BASE_WRITERS[0]
    matcher: str = MATCHERS[0]
    denied_edge_writer: str = DENIED_EDGE_WRITERS[0]
    allowed_edge_policy: str = EDGE_FILINGS[0]


@dataclass
class DialogueOptions:
    """Dialogue judging (dialogue_judge, dialogue_variants): which stored dialogues (None:
    all), judge attempts per dialogue, verdict-only judging, the judge prompt (JUDGE_PROMPTS:
    CompliBench's own, or with copal's additions), and variant turns per dialogue."""
    domains: list[str] | None = None
    dialogues: list[str] | None = None
    attempts: int = JUDGE_ATTEMPTS
    binary: bool = False
    judge_prompt: str = "reference"
    per_dialogue: int = 2


@dataclass
class TrafficOptions:
    """The automatic labeller of the real-traffic audit (traffic_judge): the sources whose pairs
    it labels (None: every source), and whether it labels only pairs drawn into some campaign
    (`sampled`) rather than the whole log (the corrected estimate of the log's mix needs the
    whole log; a quick agreement check needs only the sample)."""
    sources: list[str] | None = None
    sampled: bool = False


@dataclass
class Options:
    """What every stage shares (scope, models, concurrency), and each suite's own options."""
    worlds: list[str] | None = None
    models: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    generator: str | None = None  # no default: see copal_tui.pipeline.missing_model
    concurrency: int = 8
    models_file: Path | None = None
    seed: int = 0
    # First retry delay in seconds (doubling, with jitter); tests and local stubs shorten it.
    backoff_base: float = 1.0
    # Answer the model calls through the providers' batch APIs first (copal_tui/llm/batch.py).
    batch: bool = False
    copal: CopalOptions = field(default_factory=CopalOptions)
    compass: CompassOptions = field(default_factory=CompassOptions)
    dialogue: DialogueOptions = field(default_factory=DialogueOptions)
    traffic: TrafficOptions = field(default_factory=TrafficOptions)
