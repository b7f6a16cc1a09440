"""Structured outputs the pipeline asks of a model, one pydantic model per task: the COPAL and
COMPASS tasks' models here (the COMPASS answers shaped as the public COMPASS code's in
`copal_tui.domain.compass_outputs`), the dialogue tasks' in `copal_tui.domain.dialogue_outputs`,
the traffic labeller's in `copal_tui.domain.traffic_outputs`, and every task's model in one
registry (`TASK_OUTPUTS`).

Real models and the offline engine both answer with JSON matching these models; the pipeline
validates with them (one repair round, then the item is recorded as failed with the raw text).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from copal_tui.domain.compass import REWRITE_CLAIMS, FailureMode
from copal_tui.domain.compass_outputs import (
    CompassDeniedEdgeOut,
    CompassDenylistMatchOut,
    CompassMatchOut,
    CompassOrgQueriesOut,
)
from copal_tui.domain.dialogue_outputs import (
    DialogueBinaryJudgeOut,
    DialogueComplianceJudgeOut,
    DialogueContentJudgeOut,
    DialogueJudgeOut,
    DialogueRegenerateOut,
    DialogueVariantOut,
)
from copal_tui.domain.facets import parse_facet
from copal_tui.domain.output_base import ModelOutput
from copal_tui.domain.quotes import check_quotes
from copal_tui.domain.taxonomy import ContractKind, Effect, Facet, Pattern
from copal_tui.domain.traffic_outputs import TrafficJudgeOut


class ClauseSource(ModelOutput):
    policy_id: str = Field(min_length=1)
    source_span: str = Field(min_length=1, description="verbatim substring of that policy")


class GroundedClause(ModelOutput):
    policy_id: str = Field(min_length=1, description="the policy the clause belongs to")
    trigger: str = Field(min_length=1, description="when the rule applies")
    scope: str = Field(min_length=1, description="what part of the answer it governs")
    effect: Effect | Literal["OTHER"]
    source_span: str = Field(min_length=1, description="verbatim substring of the policy text")
    confidence: float = Field(ge=0, le=1)
    audit_note: str | None = Field(default=None, description="why the effect is OTHER")
    # The other policies that state the same rule (merged repeated rules), each with its span.
    also_from: list[ClauseSource] = Field(default_factory=list)


class GroundingOut(ModelOutput):
    """The grounded clauses of one policy inventory (checked by `domain.grounding`)."""

    clauses: list[GroundedClause] = Field(min_length=1)


class CompositionOut(ModelOutput):
    accept: bool
    pattern: Pattern | None = None
    reason: str


class ContractItemOut(ModelOutput):
    id: str = Field(pattern=r"^[RF][0-9]+$")
    text: str = Field(min_length=1)
    kind: ContractKind = ContractKind.CONTENT
    clause_id: str | None = None


class QueryVariant(ModelOutput):
    query: str = Field(min_length=1)
    trap: str = ""
    required: list[ContractItemOut]
    forbidden: list[ContractItemOut]
    gate: str | None = None
    route: str | None = None


class GenerationOut(ModelOutput):
    variants: list[QueryVariant] = Field(min_length=1)


class ScreeningOut(ModelOutput):
    activates_clauses: bool
    fits_facet: bool
    natural: bool
    naturalness: float = Field(ge=0, le=1)
    confidence: float = Field(ge=0, le=1)
    blanket_refusal_passes: bool
    full_compliance_passes: bool
    reason: str = ""


class ProjectionOut(ModelOutput):
    query: str = Field(min_length=1)
    required: list[ContractItemOut]
    forbidden: list[ContractItemOut]


class ProjectionScreeningOut(ModelOutput):
    """The check of one single-policy projection before it is answered; the pipeline decides
    acceptance from these fields (no clause in `still_active`, `keeps_target`, `natural`)."""

    still_active: list[str] = Field(default_factory=list,
                                    description="ids of neutralised clauses still in play")
    keeps_target: bool
    natural: bool
    naturalness: float = Field(ge=0, le=1)
    reason: str = ""


class PlannedItem(ModelOutput):
    query: str = Field(min_length=1)
    clause_ids: list[str] = Field(default_factory=list)
    policy_ids: list[str] = Field(default_factory=list)
    required: list[ContractItemOut]
    forbidden: list[ContractItemOut]


class PlannerOut(ModelOutput):
    items: list[PlannedItem] = Field(min_length=1)


class MappingOut(ModelOutput):
    pattern: Pattern | None
    facet: Facet | None
    reason: str = ""


class Mark(ModelOutput):
    id: str
    present: bool
    evidence: str | None = None
    # With `present`: the reply handles this required item by a scope-resolving clarification
    # (it asks the question that settles which active clause governs the item) instead of doing
    # it outright. The rubric accepts that handling, so the item is in the observed set like
    # any present one; the flag only records how it was handled.
    clarification: bool = False


class _ObservedFacet(ModelOutput):
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


class CompassQuery(ModelOutput):
    slot: int = Field(ge=1, description="the slot number from the input this query fills")
    query: str = Field(min_length=1)


class CompassQueriesOut(ModelOutput):
    """Base and edge writers: one query per requested slot (pairing is by slot number)."""

    queries: list[CompassQuery] = Field(min_length=1)


class CompassVerifyOut(ModelOutput):
    matched_policy_ids: list[str] = Field(default_factory=list)
    reason: str = ""


class CompassEdgeRewriteOut(ModelOutput):
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


class CompassEdgePolicyEvaluation(ModelOutput):
    denylist_check: str = ""
    allowlist_check: str = ""
    edge_cases: str = ""


class CompassEdgeClaimVerification(ModelOutput):
    accurate_claims: str = ""
    inaccurate_claims: str = ""
    missed_aspects: str = ""


class CompassEdgeVerifyOut(ModelOutput):
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


class CompassReferenceOut(ModelOutput):
    answer: str = Field(min_length=1)


class CompassPrefilterOut(ModelOutput):
    decision: Literal["ALLOW", "DENY"]
    confidence: float = Field(default=1.0, ge=0, le=1)
    matched_policy: str | None = None
    reason: str = ""


class CompassJudgeOut(ModelOutput):
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


TASK_OUTPUTS: dict[str, type[ModelOutput]] = {
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
    "compass_generate_org": CompassOrgQueriesOut,
    "compass_generate_base": CompassQueriesOut,
    "compass_generate_denied_short": CompassDeniedEdgeOut,
    "compass_generate_denied_long": CompassDeniedEdgeOut,
    "compass_generate_edge": CompassQueriesOut,
    "compass_verify_reference": CompassMatchOut,
    "compass_verify_denylist": CompassDenylistMatchOut,
    "compass_verify": CompassVerifyOut,
    "compass_rewrite_edge": CompassEdgeRewriteOut,
    "compass_verify_edge": CompassEdgeVerifyOut,
    "compass_reference": CompassReferenceOut,
    "compass_prefilter": CompassPrefilterOut,
    "compass_judge": CompassJudgeOut,
    "compass_judge_with_query": CompassJudgeOut,
    "dialogue_judge": DialogueJudgeOut,
    "dialogue_judge_copal": DialogueJudgeOut,
    "dialogue_judge_binary": DialogueBinaryJudgeOut,
    "dialogue_variant": DialogueVariantOut,
    "dialogue_regenerate": DialogueRegenerateOut,
    "dialogue_content_judge": DialogueContentJudgeOut,
    "dialogue_compliance_judge": DialogueComplianceJudgeOut,
    "dialogue_refine": DialogueVariantOut,
    "traffic_judge": TrafficJudgeOut,
}
