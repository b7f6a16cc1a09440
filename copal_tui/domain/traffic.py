"""The real-traffic audit as data (the COPAL paper's appendix B.3 and Table 11): a deployed
chatbot's query-response pairs, each labelled with its policy category and whether the response
is erroneous. Pure: no SQL, UI or models.

A pair's policy category says how many of the organisation's policies its request engages:
`none` (no clear policy), `single` (one policy) or `multi` (two or more must be honoured in one
answer, the composed case the rest of copal tests). `erroneous` says whether the response
mishandles them. An annotator may also name which of the linked world's policies apply, flag
the pair as still holding sensitive content after de-identification, and write a note.
"""

from __future__ import annotations

from pydantic import model_validator

from copal_tui.domain.annotation.payloads import LabelPayload

NONE, SINGLE, MULTI = "none", "single", "multi"
CATEGORIES: tuple[str, ...] = (NONE, SINGLE, MULTI)
# How the paper's Table 11 names them.
CATEGORY_TITLES = {NONE: "No clear policy", SINGLE: "Single-policy", MULTI: "Multi-policy"}


class TrafficLabel(LabelPayload):
    """One annotator's label on one pair. A pair flagged `sensitive` may carry no category or
    verdict (the annotator stops reading it); otherwise both are given. A category of `none`
    names no policy, `single` at most one."""

    category: str | None = None
    erroneous: bool | None = None
    policies: list[str] | None = None
    sensitive: bool = False
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> TrafficLabel:
        if self.category is not None and self.category not in CATEGORIES:
            raise ValueError(f"unknown policy category {self.category!r} "
                             f"(one of {', '.join(CATEGORIES)})")
        if not self.sensitive and (self.category is None or self.erroneous is None):
            raise ValueError("a label gives the policy category and the error verdict "
                             "(or flags the pair as sensitive)")
        named = len(self.policies or [])
        if self.category == NONE and named:
            raise ValueError("a pair with no clear policy names no policy")
        if self.category == SINGLE and named > 1:
            raise ValueError("a single-policy pair names at most one policy")
        return self
