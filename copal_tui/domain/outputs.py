"""Structured outputs the pipeline asks of a model, one pydantic model per task.

Real models and the offline engine both answer with JSON matching these models; the pipeline
validates with them (one repair round, then the item is recorded as failed with the raw text).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from copal_tui.domain.compass import FailureMode
from copal_tui.domain.dialogue import norm_category, norm_phase
from copal_tui.domain.facets import parse_facet
from copal_tui.domain.taxonomy import ContractKind, Effect, Facet, Pattern


class _Out(BaseModel):
    # Models add stray keys; ignore them rather than failing a good answer.
    model_config = ConfigDict(extra="ignore")


class GroundedClause(_Out):
    trigger: str = Field(min_length=1, description="when the rule applies")
    scope: str = Field(min_length=1, description="what part of the answer it governs")
    effect: Effect | Literal["OTHER"]
    source_span: str = Field(min_length=1, description="verbatim substring of the policy text")
    confidence: float = Field(ge=0, le=1)
    audit_note: str | None = Field(default=None, description="why the effect is OTHER")


class GroundingOut(_Out):
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
    """One turn's verdict in the public CompliBench judge format. Category and phase are
    checked here (so a malformed one gets the repair round) but kept as the model wrote them;
    the stage normalises them. A key not in the document is allowed: it is simply wrong."""

    guidance_category: int | str | None = None
    guidance_key: str | None = None
    guideline_phase: int | str | None = None
    is_violation: bool
    judge_reason: str = ""

    @field_validator("guidance_category")
    @classmethod
    def _category(cls, v: int | str | None) -> int | str | None:
        norm_category(v)
        return v

    @field_validator("guideline_phase")
    @classmethod
    def _phase(cls, v: int | str | None) -> int | str | None:
        norm_phase(v)
        return v


class DialogueTurnVerdict(_Out):
    turn_index: int = Field(ge=0)
    guideline_used: DialogueGuidelineUsed


class DialogueBinaryJudgeOut(_Out):
    """Binary judges: only `is_violation` per turn counts (any guideline named is ignored)."""

    turn_guidelines: list[DialogueTurnVerdict] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_turns(self) -> DialogueBinaryJudgeOut:
        seen = [t.turn_index for t in self.turn_guidelines]
        dup = sorted({i for i in seen if seen.count(i) > 1})
        if dup:
            raise ValueError(f"turn_index {dup} given more than once")
        return self


class DialogueJudgeOut(DialogueBinaryJudgeOut):
    @model_validator(mode="after")
    def _named(self) -> DialogueJudgeOut:
        unnamed = [t.turn_index for t in self.turn_guidelines
                   if not t.guideline_used.guidance_category
                   or not (t.guideline_used.guidance_key or "").strip()]
        if unnamed:
            raise ValueError(f"turns {unnamed} name no guidance_category and guidance_key")
        return self


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
