"""What a run is asked to do: the options every stage shares (scope, models, concurrency) and
each suite's own (`CopalOptions`, `CompassOptions`, `DialogueOptions`). A stage reads the shared
ones and its suite's; the run manifest records them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from copal_tui.domain.compass import BASE_PER_POLICY


@dataclass
class CopalOptions:
    """What the composed-suite stages read: judge modes, the selected items per world, query
    variants per composition x facet, and accepted compositions aimed for per pattern."""
    modes: list[str] = field(default_factory=lambda: ["contract"])
    budget: int = 30
    variants: int = 2
    per_pattern: int = 6


@dataclass
class CompassOptions:
    """`copal run compass`: target-chatbot variants answered by compass_respond, the
    pre-filter model of the `pre-filter` variant, base queries per policy, the verifier model
    (None: the generator), and what the judge sees besides the policies and the response:
    nothing (COMPASS's default, "response-only") or the query too ("with-query", stored as
    JUDGE+query)."""
    variants: list[str] = field(default_factory=lambda: ["base"])
    prefilter: str | None = None
    per_policy: int = BASE_PER_POLICY
    verifier: str | None = None
    judge_variant: str = "response-only"


@dataclass
class DialogueOptions:
    """Dialogue judging (dialogue_judge, dialogue_variants): which stored dialogues (None:
    all), judge attempts per dialogue, verdict-only judging, and variant turns per dialogue."""
    domains: list[str] | None = None
    dialogues: list[str] | None = None
    attempts: int = 1
    binary: bool = False
    per_dialogue: int = 2


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
