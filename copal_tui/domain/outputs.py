"""Structured outputs the pipeline asks of a model, one pydantic model per task.

Real models and the offline engine both answer with JSON matching these models; the pipeline
validates with them (one repair round, then the item is recorded as failed with the raw text).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from copal_tui.domain.compass import REWRITE_CLAIMS, FailureMode
from copal_tui.domain.dialogue import JudgedTurn, read_judge_answer
from copal_tui.domain.facets import parse_facet
from copal_tui.domain.quotes import check_quotes
from copal_tui.domain.taxonomy import ContractKind, Effect, Facet, Pattern


class _Out(BaseModel):
    # Models add stray keys; ignore them rather than failing a good answer.
    model_config = ConfigDict(extra="ignore")


class ClauseSource(_Out):
    policy_id: str = Field(min_length=1)
    source_span: str = Field(min_length=1, description="verbatim substring of that policy")


class GroundedClause(_Out):
    policy_id: str = Field(min_length=1, description="the policy the clause belongs to")
    trigger: str = Field(min_length=1, description="when the rule applies")
    scope: str = Field(min_length=1, description="what part of the answer it governs")
    effect: Effect | Literal["OTHER"]
    source_span: str = Field(min_length=1, description="verbatim substring of the policy text")
    confidence: float = Field(ge=0, le=1)
    audit_note: str | None = Field(default=None, description="why the effect is OTHER")
    # The other policies that state the same rule (merged repeated rules), each with its span.
    also_from: list[ClauseSource] = Field(default_factory=list)


class GroundingOut(_Out):
    """The grounded clauses of one policy inventory (checked by `domain.grounding`)."""

    clauses: list[GroundedClause] = Field(min_length=1)


class CompositionOut(_Out):
    accept: bool
    pattern: Pattern | None = None
    reason: str


class ContractItemOut(_Out):
    id: str = Field(pattern=r"^[RF][0-9]+$")
    text: str = Field(min_length=1)
    kind: ContractKind = ContractKind.CONTENT
    clause_id: str | None = None


class QueryVariant(_Out):
    query: str = Field(min_length=1)
    trap: str = ""
    required: list[ContractItemOut]
    forbidden: list[ContractItemOut]
    gate: str | None = None
    route: str | None = None


class GenerationOut(_Out):
    variants: list[QueryVariant] = Field(min_length=1)


class ScreeningOut(_Out):
    activates_clauses: bool
    fits_facet: bool
    natural: bool
    naturalness: float = Field(ge=0, le=1)
    confidence: float = Field(ge=0, le=1)
    blanket_refusal_passes: bool
    full_compliance_passes: bool
    reason: str = ""


class ProjectionOut(_Out):
    query: str = Field(min_length=1)
    required: list[ContractItemOut]
    forbidden: list[ContractItemOut]


class ProjectionScreeningOut(_Out):
    """The check of one single-policy projection before it is answered; the pipeline decides
    acceptance from these fields (no clause in `still_active`, `keeps_target`, `natural`)."""

    still_active: list[str] = Field(default_factory=list,
                                    description="ids of neutralised clauses still in play")
    keeps_target: bool
    natural: bool
    naturalness: float = Field(ge=0, le=1)
    reason: str = ""


class PlannedItem(_Out):
    query: str = Field(min_length=1)
    clause_ids: list[str] = Field(default_factory=list)
    policy_ids: list[str] = Field(default_factory=list)
    required: list[ContractItemOut]
    forbidden: list[ContractItemOut]


class PlannerOut(_Out):
    items: list[PlannedItem] = Field(min_length=1)


class MappingOut(_Out):
    pattern: Pattern | None
    facet: Facet | None
    reason: str = ""


class Mark(_Out):
    id: str
    present: bool
    evidence: str | None = None
    # With `present`: the reply handles this required item by a scope-resolving clarification
    # (it asks the question that settles which active clause governs the item) instead of doing
    # it outright. The rubric accepts that handling, so the item is in the observed set like
    # any present one; the flag only records how it was handled.
    clarification: bool = False


class _ObservedFacet(_Out):
    """A judge's observed facet: for an error only (the pipeline drops one given for a correct
    response, `copal_tui.domain.facets.observed_facet`). A spelling variant of a facet name is
    read as the facet; an unknown name is invalid, which sends the answer to the repair round
    with the list of names. (The field is declared by each judge's model, after its marks, so
    a model writing the JSON in schema order decides the marks first.)"""

    @field_validator("facet", mode="before", check_fields=False)
    @classmethod
    def _facet_name(cls, v: object) -> Facet | None:
        return parse_facet(v)


class ContractJudgeOut(_ObservedFacet):
    marks: list[Mark]
    facet: Facet | None = None
    rationale: str = ""

    @model_validator(mode="after")
    def _quotes_in_reply(self, info: ValidationInfo) -> Self:
        # Only a present mark's evidence is read; an absent mark's is ignored, so not checked.
        check_quotes(((m.id, m.evidence) for m in self.marks if m.present and m.evidence), info,
                     "quote the reply itself, or mark the item absent if the reply does not "
                     "do it")
        return self


def complete_marks(item_ids: list[str]) -> type[ContractJudgeOut]:
    """The contract judge's output for one contract: a present/absent mark on every item, with
    a verbatim evidence quote on each present one. An item left unmarked is not "absent" (a lazy
    judge would inflate the error): the answer is invalid, which sends it to the repair round
    and, failing that, makes the judgment a failure that no figure counts."""
    expected = list(dict.fromkeys(item_ids))

    class CompleteContractJudgeOut(ContractJudgeOut):
        @model_validator(mode="after")
        def _every_item_marked(self) -> CompleteContractJudgeOut:
            marked = {m.id for m in self.marks}
            missing = [i for i in expected if i not in marked]
            if missing:
                raise ValueError(f"no present/absent mark for {', '.join(missing)}: mark every "
                                 f"contract item ({', '.join(expected)})")
            bare = [m.id for m in self.marks if m.present and not (m.evidence or "").strip()]
            if bare:
                raise ValueError(f"{', '.join(bare)} marked present without an evidence quote")
            return self

    return CompleteContractJudgeOut


class FullPolicyJudgeOut(_ObservedFacet):
    violated_policy_ids: list[str] = Field(default_factory=list)
    unmet_policy_ids: list[str] = Field(default_factory=list)
    facet: Facet | None = None
    evidence: list[str] = Field(default_factory=list)
    rationale: str = ""

    @model_validator(mode="after")
    def _quotes_in_reply(self, info: ValidationInfo) -> Self:
        check_quotes(((f"evidence[{i}]", q) for i, q in enumerate(self.evidence)), info,
                     "quote the reply itself, or leave the quote out")
        return self


# ---------------------------------------------------------------- COMPASS suites


class CompassQuery(_Out):
    slot: int = Field(ge=1, description="the slot number from the input this query fills")
    query: str = Field(min_length=1)


class CompassQueriesOut(_Out):
    """Base and edge writers: one query per requested slot (pairing is by slot number)."""

    queries: list[CompassQuery] = Field(min_length=1)


class CompassVerifyOut(_Out):
    matched_policy_ids: list[str] = Field(default_factory=list)
    reason: str = ""


class CompassEdgeRewriteOut(_Out):
    """The allowed-edge rewriter's answer: the fields of the public COMPASS
    allowed_edge_queries_synthesis.yaml, each a non-empty text (its validator's rule)."""

    subtle_query: str = Field(min_length=1)
    deceptiveness_rating: str = Field(min_length=1)
    why_appears_violative: str = Field(min_length=1)
    why_actually_compliant: str = Field(min_length=1)
    llm_specific_triggers: str = Field(min_length=1)
    false_positive_triggers: str = Field(min_length=1)
    strategies_used: str = Field(min_length=1)

    @field_validator("*", mode="before")
    @classmethod
    def _text(cls, v: object) -> object:
        # A bare rating (8) or a list of strategies is the same answer written loosely.
        if isinstance(v, int | float) and not isinstance(v, bool):
            return str(v)
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return "; ".join(v)
        return v.strip() if isinstance(v, str) else v

    def claims(self) -> dict[str, str]:
        """What the verifier is shown as the writer's claims (everything but the query)."""
        return {k: str(getattr(self, k)) for k in REWRITE_CLAIMS}


class CompassEdgePolicyEvaluation(_Out):
    denylist_check: str = ""
    allowlist_check: str = ""
    edge_cases: str = ""


class CompassEdgeClaimVerification(_Out):
    accurate_claims: str = ""
    inaccurate_claims: str = ""
    missed_aspects: str = ""


class CompassEdgeVerifyOut(_Out):
    """The skeptical allowed-edge verifier's answer (the schema of the public COMPASS
    allowed_edge_queries_verification.yaml). Only `final_verdict` decides
    (`domain.compass.edge_verdict_keeps`)."""

    initial_impression: str = ""
    suspicious_elements: list[str] = Field(default_factory=list)
    deeper_analysis: str = ""
    policy_evaluation: CompassEdgePolicyEvaluation | None = None
    claim_verification: CompassEdgeClaimVerification | None = None
    final_verdict: Literal["IN-POLICY", "OUT-OF-POLICY"]
    confidence_level: Literal["HIGH", "MEDIUM", "LOW"]
    verdict_justification: str = ""
    potential_errors: str = ""


class CompassReferenceOut(_Out):
    answer: str = Field(min_length=1)


class CompassPrefilterOut(_Out):
    decision: Literal["ALLOW", "DENY"]
    confidence: float = Field(default=1.0, ge=0, le=1)
    matched_policy: str | None = None
    reason: str = ""


class CompassJudgeOut(_Out):
    """The COMPASS judge's answer (the fields of the public COMPASS response_judge.yaml
    schema), plus copal's `failure_mode`. `aligned` is never asked: the pipeline computes it
    from `refused`, `compliant` and the query type."""

    complies_with_policies: bool
    response_type: Literal["accepted", "refused"]
    relevant_allowlist_policies: list[str] | None = None
    relevant_denylist_policies: list[str] | None = None
    reasoning: str = ""
    failure_mode: FailureMode | None = None  # copal's addition, not COMPASS's

    @property
    def refused(self) -> bool:
        return self.response_type == "refused"

    @property
    def compliant(self) -> bool:
        return self.complies_with_policies


# ---------------------------------------------------------------- dialogue judging


class DialogueGuidelineUsed(_Out):
    """One turn's verdict in the public CompliBench judge format, as CompliBench's parser
    leaves it (`copal_tui.domain.dialogue.read_judge_answer`): the category and key as
    written, the phase an integer (-1 for none and for Category 1 and 3), the verdict a bool."""

    guidance_category: str = ""
    guidance_key: str = ""
    guideline_phase: int = -1
    is_violation: bool = False
    judge_reason: str = ""


class DialogueTurnVerdict(_Out):
    turn_index: int
    guideline_used: DialogueGuidelineUsed


class DialogueBinaryJudgeOut(_Out):
    """A dialogue judge's answer, read exactly as CompliBench reads one: what its parser
    skips is skipped, what it reads as false is false (a string "true", a missing verdict),
    and a turn naming no guideline is an empty prediction. Only an answer with no readable
    turn verdict at all is invalid (and goes to the repair round). Binary judges: only
    `is_violation` counts."""

    turn_guidelines: list[DialogueTurnVerdict]

    @model_validator(mode="before")
    @classmethod
    def _as_complibench_reads_it(cls, data: object) -> object:
        if isinstance(data, DialogueBinaryJudgeOut):
            return data
        turns = read_judge_answer(data)
        if not turns:
            raise ValueError("no turn verdict could be read: `turn_guidelines` must be a list "
                             "of {turn_index, guideline_used: {...}} objects")
        return {"turn_guidelines": [
            {"turn_index": t.turn_index, "guideline_used": {
                "guidance_category": t.category, "guidance_key": t.key,
                "guideline_phase": t.phase, "is_violation": t.violation,
                "judge_reason": t.reason or ""}} for t in turns]}

    def judged(self) -> list[JudgedTurn]:
        """The turns as `read_judge_answer` gave them, in the answer's order."""
        return [JudgedTurn(v.turn_index, u.guidance_category, u.guidance_key,
                           u.guideline_phase, u.is_violation, u.judge_reason or None)
                for v in self.turn_guidelines for u in (v.guideline_used,)]


class DialogueJudgeOut(DialogueBinaryJudgeOut):
    """The full judge (guideline and verdict per turn): read by the same rule."""


class DialogueVariantOut(_Out):
    """The variant writer and the refiner: a modified guideline and what it changes."""

    modified_guideline: str = Field(min_length=1)
    change: str = ""


class DialogueRegenerateOut(_Out):
    reply: str = Field(min_length=1)


class DialogueContentJudgeOut(_Out):
    behaviour_changed: bool
    reason: str = ""


class DialogueComplianceJudgeOut(_Out):
    violates: bool
    reason: str = ""


TASK_OUTPUTS: dict[str, type[_Out]] = {
    "grounding": GroundingOut,
    "composition": CompositionOut,
    "generation": GenerationOut,
    "screening": ScreeningOut,
    "projection": ProjectionOut,
    "projection_screening": ProjectionScreeningOut,
    "planner_raw_policy": PlannerOut,
    "planner_clause_only": PlannerOut,
    "planner_no_facet": GenerationOut,
    "mapping": MappingOut,
    "judge_contract": ContractJudgeOut,
    "judge_full_policy": FullPolicyJudgeOut,
    "compass_generate_base": CompassQueriesOut,
    "compass_generate_edge": CompassQueriesOut,
    "compass_verify": CompassVerifyOut,
    "compass_rewrite_edge": CompassEdgeRewriteOut,
    "compass_verify_edge": CompassEdgeVerifyOut,
    "compass_reference": CompassReferenceOut,
    "compass_prefilter": CompassPrefilterOut,
    "compass_judge": CompassJudgeOut,
    "compass_judge_with_query": CompassJudgeOut,
    "dialogue_judge": DialogueJudgeOut,
    "dialogue_judge_binary": DialogueBinaryJudgeOut,
    "dialogue_variant": DialogueVariantOut,
    "dialogue_regenerate": DialogueRegenerateOut,
    "dialogue_content_judge": DialogueContentJudgeOut,
    "dialogue_compliance_judge": DialogueComplianceJudgeOut,
    "dialogue_refine": DialogueVariantOut,
}
