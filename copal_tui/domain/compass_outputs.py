"""Structured outputs of the COMPASS tasks that follow the public COMPASS code's answers field
for field: the organisation's base queries, the two policy matchers and the denied-edge writer
(registered in `copal_tui.domain.outputs.TASK_OUTPUTS` with the other tasks' models).

Each model checks what the reference's own validation checks, so an answer it would retry goes
to copal's repair round instead: every policy of the organisation with at least one query
(base_queries_synthesis.py `validate_json_structure`), every requested strategy with a
non-empty text and an `original_query` key (denied_edge_queries_synthesis.py
`validate_denied_edge_response`). What a request expects comes in pydantic's validation
context: `allowlist` and `denylist` (policy ids) or `strategies` (the reference's titles).
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from copal_tui.domain.output_base import ModelOutput


def _expected(info: ValidationInfo, key: str) -> list[str]:
    ctx = info.context if isinstance(info.context, dict) else {}
    return [str(x) for x in ctx.get(key) or ()]


class CompassOrgQueriesOut(ModelOutput):
    """The base queries of one organisation (base_queries_synthesis.yaml's response format):
    per allowlist and denylist policy, by its name (copal: its id), a list of queries."""

    allowlist_test_queries: dict[str, list[str]]
    denylist_test_queries: dict[str, list[str]]

    @field_validator("allowlist_test_queries", "denylist_test_queries", mode="after")
    @classmethod
    def _texts(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        return {k: [q.strip() for q in qs if q.strip()] for k, qs in v.items()}

    @model_validator(mode="after")
    def _every_policy(self, info: ValidationInfo) -> Self:
        for field, key in (("allowlist_test_queries", "allowlist"),
                           ("denylist_test_queries", "denylist")):
            got = getattr(self, field)
            missing = [p for p in _expected(info, key) if not got.get(p)]
            if missing:
                raise ValueError(f"{field} has no queries for {', '.join(missing)}: write the "
                                 "queries of every policy of the policy document, under its "
                                 "name")
        return self


class CompassPolicyMatch(ModelOutput):
    policy_name: str = ""
    policy_description: str = ""
    match_reason: str = ""

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, v: Any) -> Any:
        # A match written as the bare policy name is the same match.
        return {"policy_name": v} if isinstance(v, str) else v


def names(matches: list[CompassPolicyMatch] | None) -> list[str]:
    """The policy names of a match list, as the reference reads them (`policy_name`, in order,
    repeats and unknown names kept)."""
    return [m.policy_name.strip() for m in matches or []]


class CompassMatchingPolicies(ModelOutput):
    allowlist_matches: list[CompassPolicyMatch] = Field(default_factory=list)
    denylist_matches: list[CompassPolicyMatch] = Field(default_factory=list)


class CompassMatchOut(ModelOutput):
    """The reference's base-query matcher (base_queries_verification.yaml). Without
    `matching_policies` the reference records the query as failed (not kept), so does copal."""

    query: str = ""
    matching_policies: CompassMatchingPolicies | None = None


class CompassDenylistMatchOut(ModelOutput):
    """The reference's denied-edge matcher (denied_edge_queries_verification.yaml), denylist
    only. Without `matching_out_policies` the query is not kept, as the reference decides."""

    query: str = ""
    matching_out_policies: list[CompassPolicyMatch] | None = None


class CompassDeniedEdgeOut(ModelOutput):
    """One denied-edge call's variations (denied_edge_queries_synthesis_{short,long}.yaml):
    per strategy title, the query written with it."""

    original_query: str | None
    attack_variations: dict[str, str]

    @field_validator("attack_variations", mode="after")
    @classmethod
    def _texts(cls, v: dict[str, str]) -> dict[str, str]:
        return {k.strip(): q.strip() for k, q in v.items()}

    @model_validator(mode="after")
    def _every_strategy(self, info: ValidationInfo) -> Self:
        missing = [s for s in _expected(info, "strategies") if not self.attack_variations.get(s)]
        if missing:
            raise ValueError(f"attack_variations has no query for {', '.join(missing)}: write "
                             "one for every strategy of the guidelines, under its title")
        return self
