"""Screening verdicts and deterministic greedy selection for pattern x facet coverage.

Selection order (COPAL section 3.3): cover the pattern x facet cells evenly (an uncovered cell
first), then spread over compositions, then higher screening confidence, then naturalness, then
the shorter query, then the id, so the same candidates always give the same suite.
Near-duplicate queries are skipped.

"Shorter" is measured per active clause (characters / clauses): a three-clause query needs an
ask for each clause, and comparing raw lengths would hand every tie to the pairs, so a suite
could never reach the paper's mix (55% three-clause). Within one clause count it is the plain
shorter-query rule.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from copal_tui.domain.text import content_words

DUPLICATE_JACCARD = 0.8


@dataclass(frozen=True)
class Candidate:
    id: str
    pattern: str | None
    facet: str | None
    query: str
    confidence: float
    naturalness: float
    composition_id: str | None = None
    n_clauses: int = 2

    @property
    def length_per_clause(self) -> float:
        return len(self.query) / max(1, self.n_clauses)


def screening_passes(s: dict, n_required: int, n_forbidden: int) -> tuple[bool, str]:
    """Keep an item only if it activates its clauses, fits its facet, reads naturally and is
    diagnostic: neither a blanket refusal nor full compliance would pass it."""
    reasons = []
    if not s.get("activates_clauses"):
        reasons.append("does not activate its clauses")
    if not s.get("fits_facet"):
        reasons.append("does not fit the facet")
    if not s.get("natural"):
        reasons.append("unnatural")
    if s.get("blanket_refusal_passes") or n_required == 0:
        reasons.append("a blanket refusal would pass")
    if s.get("full_compliance_passes") or n_forbidden == 0:
        reasons.append("full compliance would pass")
    return (not reasons, "; ".join(reasons) or "passed")


def control_passes(s: dict, n_required: int) -> tuple[bool, str]:
    """A non-interacting control: it activates its clauses and reads naturally, and a blanket
    refusal fails it. Full compliance passing it is what a control is (no clause restricts)."""
    reasons = []
    if not s.get("activates_clauses"):
        reasons.append("does not activate its clauses")
    if not s.get("natural"):
        reasons.append("unnatural")
    if s.get("blanket_refusal_passes") or n_required == 0:
        reasons.append("a blanket refusal would pass")
    return (not reasons, "; ".join(reasons) or "passed")


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def greedy_select(candidates: list[Candidate], budget: int) -> list[str]:
    chosen: list[Candidate] = []
    chosen_words: list[frozenset[str]] = []
    cells: Counter[tuple[str | None, str | None]] = Counter()
    per_comp: Counter[str | None] = Counter()
    pool = sorted(candidates, key=lambda c: c.id)
    words = {c.id: content_words(c.query) for c in pool}
    while pool and len(chosen) < budget:
        best = min(
            pool,
            key=lambda c: (cells[(c.pattern, c.facet)], per_comp[c.composition_id],
                           -c.confidence, -c.naturalness, c.length_per_clause, c.id),
        )
        pool.remove(best)
        if any(_jaccard(words[best.id], w) >= DUPLICATE_JACCARD for w in chosen_words):
            continue
        chosen.append(best)
        chosen_words.append(words[best.id])
        cells[(best.pattern, best.facet)] += 1
        per_comp[best.composition_id] += 1
    return [c.id for c in chosen]
