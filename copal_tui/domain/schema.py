"""Pydantic models for world files (YAML) and interchange records (JSONL).

These are the public file formats: `copal schema` prints their JSON Schema, `copal import`
validates against them, `copal export` writes them. Unknown fields are rejected so a typo in a
hand-written world file is an error, not silently dropped data.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from copal_tui.domain.compass import FailureMode, QueryType, Variant
from copal_tui.domain.taxonomy import (
    ContractKind,
    Effect,
    Facet,
    JudgeMode,
    Method,
    Pattern,
    PolicyKind,
)

Id = Annotated[
    str,
    Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/@+-]*$"),
]
Text = Annotated[str, Field(min_length=1)]



RiskTierName = Literal["low", "medium", "high", "critical"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


# ---------------------------------------------------------------- world files (YAML)


class WorldPolicy(_Strict):
    id: Id
    kind: PolicyKind
    text: Text


class WorldFile(_Strict):
    """One company world: the context a chatbot may use and its policy inventory."""

    id: Id
    name: Text
    industry: Text
    use_case: Text
    risk_tier: RiskTierName
    context: Text
    policies: list[WorldPolicy] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_policy_ids(self) -> WorldFile:
        seen: set[str] = set()
        for i, p in enumerate(self.policies):
            if p.id in seen:
                raise ValueError(f"policies[{i}].id: duplicate policy id {p.id!r}")
            seen.add(p.id)
        return self


# ---------------------------------------------------------------- interchange (JSONL)


class ContractItem(_Strict):
    id: Id
    text: Text
    kind: ContractKind = ContractKind.CONTENT
    clause_id: Id | None = None


class WorldRecord(_Strict):
    type: Literal["world"]
    id: Id
    name: Text
    industry: Text
    use_case: Text
    risk_tier: RiskTierName
    context: Text
    # The organisation's own chatbot system prompt (COMPASS worlds); exported only when set.
    system_prompt: str | None = None


class PolicyRecord(_Strict):
    type: Literal["policy"]
    id: Id
    world_id: Id
    kind: PolicyKind
    text: Text


class ClauseRecord(_Strict):
    type: Literal["clause"]
    id: Id
    world_id: Id
    policy_ids: list[Id] = Field(min_length=1)
    trigger: Text
    scope: Text
    effect: Effect | None
    source_span: Text
    confidence: float | None = Field(default=None, ge=0, le=1)
    # A rule whose effect is none of the six is kept with effect null and an audit note,
    # never forced into a pattern.
    audit_note: str | None = None

    @model_validator(mode="after")
    def _effect_or_note(self) -> ClauseRecord:
        if self.effect is None and not self.audit_note:
            raise ValueError("effect: required unless the clause carries an audit_note")
        return self


class CompositionRecord(_Strict):
    type: Literal["composition"]
    id: Id
    world_id: Id
    clause_ids: list[Id] = Field(min_length=2)
    pattern: Pattern
    status: Literal["proposed", "confirmed", "rejected"] = "confirmed"
    reason: str | None = None


class ItemRecord(_Strict):
    type: Literal["item"]
    id: Id
    world_id: Id
    composition_id: Id | None
    pattern: Pattern | None
    facet: Facet | None
    query: Text
    required: list[ContractItem]
    forbidden: list[ContractItem]
    method: Method
    parent_item_id: Id | None
    selected: bool
    trap: str | None = None
    # The screening verdict as the pipeline stored it (for a projection: `passed` false marks
    # one the projection screening rejected, which is never answered nor paired).
    screening: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _contract_ids_unique(self) -> ItemRecord:
        ids = [c.id for c in self.required] + [c.id for c in self.forbidden]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"contract item ids repeat: {', '.join(dup)}")
        if not ids:
            raise ValueError("required/forbidden: a contract needs at least one item")
        return self


class ResponseRecord(_Strict):
    type: Literal["response"]
    id: Id
    item_id: Id
    model: Text
    text: str
    variant: str = "base"


class _Marks(_Strict):
    """Marks on contract items (`observed`), or a bare `error` from another tool."""

    observed: list[Id] | None = None
    error: Literal[0, 1] | None = None
    facet: Facet | None = None

    @model_validator(mode="after")
    def _observed_or_error(self) -> _Marks:
        if self.observed is None and self.error is None:
            raise ValueError("observed: give `observed` (contract item ids) or `error` (0/1)")
        if self.observed is not None and len(set(self.observed)) != len(self.observed):
            raise ValueError("observed: ids repeat")
        return self


class JudgmentRecord(_Marks):
    type: Literal["judgment"]
    id: Id
    response_id: Id
    judge: Text
    mode: JudgeMode
    rationale: str | None = None
    evidence: dict[str, str] | None = None


class LabelRecord(_Marks):
    type: Literal["label"]
    response_id: Id
    annotator: Id
    note: str | None = None
    created_at: str | None = None


class AdjudicationRecord(_Marks):
    type: Literal["adjudication"]
    response_id: Id
    adjudicator: Id
    note: str | None = None
    created_at: str | None = None


# ---------------------------------------------------------------- COMPASS suites (JSONL)

# The six obfuscation strategies, spelled as in copal_tui.domain.compass.STRATEGIES (a test
# keeps the two equal; a Literal gives `copal schema` the enum).
Strategy = Literal["statistical_inference", "context_overflow", "hypothetical_scenario",
                   "indirect_reference",
                   "educational_context", "analogical_reasoning", "regulatory_interpretation"]


class CompassQueryRecord(_Strict):
    type: Literal["compass_query"]
    id: Id
    world_id: Id
    policy_id: Id  # the intended policy
    query_type: QueryType
    strategy: Strategy | None = None
    form: Literal["short", "long"] | None = None
    parent_id: Id | None = None
    text: Text
    attributes: dict[str, Any] = Field(default_factory=dict)
    status: Literal["pending", "kept", "rejected", "failed"] = "pending"
    matched: list[str] | None = None  # as the verifier named them (unknown ids included)
    reason: str | None = None
    # An allowed-edge query's allowlist policy, when `policy_id` is its parent's denylist policy.
    allowlist_policy_id: Id | None = None


class CompassResponseRecord(_Strict):
    type: Literal["compass_response"]
    id: Id
    query_id: Id
    model: Text
    variant: Variant = "base"
    text: str
    prefilter: Literal["ALLOW", "DENY"] | None = None
    prefilter_model: str | None = None
    prefilter_reason: str | None = None


class CompassJudgmentRecord(_Strict):
    type: Literal["compass_judgment"]
    id: Id
    response_id: Id
    judge: Text
    refused: bool
    compliant: bool
    aligned: bool  # checked on import against the query type (domain.compass.is_aligned)
    failure_mode: FailureMode | None = None
    rationale: str | None = None


Record = Annotated[
    WorldRecord
    | PolicyRecord
    | ClauseRecord
    | CompositionRecord
    | ItemRecord
    | ResponseRecord
    | JudgmentRecord
    | LabelRecord
    | AdjudicationRecord
    | CompassQueryRecord
    | CompassResponseRecord
    | CompassJudgmentRecord,
    Field(discriminator="type"),
]

RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)

# Order in which record types are imported and exported: referents before referrers.
RECORD_ORDER = (
    "world",
    "policy",
    "clause",
    "composition",
    "item",
    "response",
    "judgment",
    "label",
    "adjudication",
    "compass_query",
    "compass_response",
    "compass_judgment",
)


def json_schemas() -> dict[str, object]:
    """JSON Schema of the world file and of one interchange record."""
    return {
        "world_file": WorldFile.model_json_schema(),
        "interchange_record": RECORD_ADAPTER.json_schema(),
    }
