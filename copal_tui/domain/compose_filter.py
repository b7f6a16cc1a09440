"""The deterministic composition filter (COPAL section 3.2), before any model is asked.

1. trigger compatibility: the clauses' triggers can be one user scenario (they share a content
   word, or one trigger is generic and the scopes meet);
2. scope compatibility: trigger+scope of each pair share content (same record or workflow);
3. the effect relation picks the pattern (taxonomy.patterns_for_effects).
Candidates are ranked by shared content, so the model confirms the most plausible ones first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from copal_tui.domain.taxonomy import PATTERN_ANCHORS, Effect, Pattern
from copal_tui.domain.text import content_words

GENERIC_TRIGGER_WORDS = 2  # a trigger this short ("any request") fits any scenario


@dataclass(frozen=True)
class Candidate:
    clause_ids: tuple[str, ...]
    pattern: Pattern
    shared: tuple[str, ...]

    @property
    def score(self) -> int:
        return len(self.shared)

    def composition_id(self, world_id: str) -> str:
        key = "|".join((*sorted(self.clause_ids), self.pattern.value))
        return f"{world_id}:K{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def _words(clause: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return content_words(clause["trigger"]), content_words(clause["scope"])


def compatible(a: dict[str, Any], b: dict[str, Any]) -> frozenset[str]:
    """Shared content of two clauses, empty when they cannot meet in one request."""
    ta, sa = _words(a)
    tb, sb = _words(b)
    generic = len(ta) <= GENERIC_TRIGGER_WORDS or len(tb) <= GENERIC_TRIGGER_WORDS
    triggers_meet = bool(ta & tb) or generic
    shared = (ta | sa) & (tb | sb)
    return shared if triggers_meet and shared else frozenset()


def candidates(clauses: list[dict[str, Any]], per_pattern: int = 6) -> list[Candidate]:
    """Ranked candidate pairs per pattern, at most `per_pattern` of each."""
    usable = [c for c in clauses if c.get("effect")]
    found: dict[Pattern, list[Candidate]] = {p: [] for p in Pattern}
    for a, b in combinations(sorted(usable, key=lambda c: c["id"]), 2):
        if set(a.get("policy_ids") or ()) & set(b.get("policy_ids") or ()):
            # Two clauses of one policy ("may share A only after verifying B") are that
            # policy's own structure, not a composition of policies.
            continue
        shared = compatible(a, b)
        if not shared:
            continue
        ea, eb = Effect(a["effect"]), Effect(b["effect"])
        for pattern, (lic, con) in PATTERN_ANCHORS.items():
            if (ea in lic and eb in con) or (eb in lic and ea in con):
                found[pattern].append(
                    Candidate((a["id"], b["id"]), pattern, tuple(sorted(shared)))
                )
    out: list[Candidate] = []
    for pattern in Pattern:
        ranked = sorted(found[pattern], key=lambda c: (-c.score, c.clause_ids))
        # Spread over clauses: prefer candidates whose clauses were not used yet.
        used: set[str] = set()
        picked: list[Candidate] = []
        for cand in ranked:
            if len(picked) >= per_pattern:
                break
            if used.isdisjoint(cand.clause_ids):
                picked.append(cand)
                used.update(cand.clause_ids)
        for cand in ranked:
            if len(picked) >= per_pattern:
                break
            if cand not in picked:
                picked.append(cand)
        out.extend(picked)
    return out
