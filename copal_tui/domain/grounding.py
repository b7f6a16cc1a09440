"""The grounding rule: the clauses proposed for one policy inventory -> the clauses kept.

Two checks of the paper's canonicalisation pass (Appendix A.3, prompt P1), the same for a real
model's answer and the offline engine's:

- Licensed by the text: every source a clause names (its policy and any `also_from` policy)
  must be a policy of the inventory whose text contains the clause's source span, compared
  after whitespace normalisation; the span kept is the policy's own stretch of text. A source
  that fails is dropped; a clause left with no source is rejected (reported, never kept with
  a stand-in span).
- Repeated rules merged: clauses with the same normalised (effect, trigger, scope), the clause
  tuple itself, are one clause whatever policies state it. The first keeps its fields and its
  policy is the primary one; the policies of the others join its sources in order.

Where a clause comes from, by policy kind (`source_kind`), is the paper's Table 8 "grounded
clause source": prohibited (deny), allowed (allow), procedure, or mixed when the sources have
more than one kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only the answer's attributes are read: the store uses `source_kind` without loading the
    # output models.
    from copal_tui.domain.outputs import GroundedClause

_WORD = re.compile(r"[^\W_]+")
# Left out of the merge key: "the assistant may explain the fees" and "assistant may explain
# fees" state one rule.
_ARTICLES = frozenset({"a", "an", "the"})


@dataclass(frozen=True)
class Source:
    policy_id: str
    span: str  # a verbatim stretch of the policy's text


@dataclass(frozen=True)
class Clause:
    trigger: str
    scope: str
    effect: str  # an Effect value or "OTHER"
    confidence: float
    audit_note: str | None
    sources: tuple[Source, ...]  # the primary policy first

    @property
    def primary(self) -> Source:
        return self.sources[0]

    @property
    def policy_ids(self) -> list[str]:
        return [s.policy_id for s in self.sources]


@dataclass(frozen=True)
class Rejected:
    policy_id: str
    span: str
    reason: str


@dataclass(frozen=True)
class Canonical:
    clauses: tuple[Clause, ...]
    rejected: tuple[Rejected, ...]  # clauses none of whose sources holds its span
    dropped_sources: int  # unlicensed sources removed from clauses that were kept
    merged: int  # proposed clauses folded into an earlier one
    uncovered: tuple[str, ...]  # inventory policies no kept clause comes from


def locate(span: str, text: str) -> str | None:
    """The stretch of `text` equal to `span` up to whitespace (runs of it, and at the ends),
    verbatim; None when the text has no such stretch."""
    words = span.split()
    if not words:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return m.group(0) if m else None


def rule_key(text: str) -> str:
    """A text's words, case-folded, without punctuation or articles: near-identical wordings
    of one rule get one key."""
    return " ".join(w for w in _WORD.findall(text.casefold()) if w not in _ARTICLES)


def _key(c: GroundedClause) -> tuple[str, str, str]:
    return str(c.effect), rule_key(c.trigger), rule_key(c.scope)


def _sources(c: GroundedClause, policies: Mapping[str, str]
             ) -> tuple[list[Source], list[str]]:
    """The clause's licensed sources, and why each other one is not."""
    kept: list[Source] = []
    why: list[str] = []
    claimed = [(c.policy_id, c.source_span)] + [(s.policy_id, s.source_span)
                                                for s in c.also_from]
    for pid, span in claimed:
        text = policies.get(pid)
        if text is None:
            why.append(f"{pid}: not a policy of this inventory")
            continue
        found = locate(span, text)
        if found is None:
            why.append(f"{pid}: source span not verbatim in the policy text")
        elif all(s.policy_id != pid for s in kept):
            kept.append(Source(pid, found))
    return kept, why


def canonicalise(proposed: Sequence[GroundedClause],
                 policies: Mapping[str, str]) -> Canonical:
    """Check and merge the clauses proposed for one inventory (`policies`: id -> text, in
    inventory order). Deterministic: the same answer always gives the same clauses."""
    groups: dict[tuple[str, str, str], tuple[GroundedClause, list[Source]]] = {}
    rejected: list[Rejected] = []
    dropped = merged = 0
    for c in proposed:
        sources, why = _sources(c, policies)
        if not sources:
            rejected.append(Rejected(c.policy_id, c.source_span, "; ".join(why)))
            continue
        dropped += len(why)
        key = _key(c)
        if key in groups:
            merged += 1
            have = groups[key][1]
            have += [s for s in sources if all(h.policy_id != s.policy_id for h in have)]
        else:
            groups[key] = (c, sources)
    clauses = tuple(
        Clause(trigger=c.trigger, scope=c.scope, effect=str(c.effect), confidence=c.confidence,
               audit_note=c.audit_note, sources=tuple(sources))
        for c, sources in groups.values())
    covered = {s.policy_id for c in clauses for s in c.sources}
    return Canonical(clauses, tuple(rejected), dropped, merged,
                     tuple(p for p in policies if p not in covered))


# Table 8's names for where a clause comes from, by the kind of its source policies.
SOURCE_KINDS = {"deny": "prohibited", "allow": "allowed", "procedure": "procedure"}
SOURCES = ("prohibited", "allowed", "procedure", "mixed")


def source_kind(kinds: Iterable[str]) -> str:
    """"prohibited", "allowed" or "procedure" when every source policy has that kind, "mixed"
    when they have more than one ("unknown" for none)."""
    names = {SOURCE_KINDS.get(k, k) for k in kinds}
    if len(names) > 1:
        return "mixed"
    return next(iter(names), "unknown")


# The paper's generated-company corpus (Table 7, Table 8): 882 policy rules in 30 worlds,
# grounded into 480 clause records, by source 260 prohibited, 214 allowed and 6 mixed.
PAPER_POLICY_RULES = 882
PAPER_CLAUSES = 480
PAPER_SOURCES = {"prohibited": 260, "allowed": 214, "mixed": 6}


def per_rule(clauses: int, rules: int) -> float | None:
    """Clauses per policy rule, to four places (None without rules)."""
    return round(clauses / rules, 4) if rules else None


def paper_counts() -> dict[str, int | float | None]:
    """The paper's figures under the keys `copal stats` gives the store's, prefixed `paper_`."""
    return {"paper_policy_rules": PAPER_POLICY_RULES, "paper_clauses": PAPER_CLAUSES,
            "paper_clauses_per_rule": per_rule(PAPER_CLAUSES, PAPER_POLICY_RULES),
            **{f"paper_clauses_{k}_source": n for k, n in PAPER_SOURCES.items()}}
