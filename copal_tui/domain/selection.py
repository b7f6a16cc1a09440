"""Screening verdicts, the relation-pattern mix of a suite, and deterministic greedy selection
for pattern x facet coverage.

Selection order (COPAL section 3.3): cover the pattern x facet cells evenly (an uncovered cell
first), then spread over compositions, then higher screening confidence, then naturalness, then
the shorter query, then the id, so the same candidates always give the same suite.
Near-duplicate queries are skipped.

"Shorter" is measured per active clause (characters / clauses): a three-clause query needs an
ask for each clause, and comparing raw lengths would hand every tie to the pairs, so a suite
could never reach the paper's mix (55% three-clause). Within one clause count it is the plain
shorter-query rule.

The pattern mix (`PatternMix`) says how many of a world's places each relation pattern gets.
The paper's suite has the patterns in their natural frequency (Table 8: scope restriction
364 of 900, prerequisite gating 179, selective disclosure 175, workflow transfer 182), not in
equal quotas, so the default (`pool`) gives each pattern the share it has among the world's
screened candidates. `paper` uses Table 8's shares, `equal` is no pattern quota at all (the
cell balancing alone, which spreads the budget evenly over the patterns), and
`scope_restriction=0.5,...` states the weights. A budget is split by largest-remainder
(Hamilton) apportionment (`apportion`); the greedy then covers the facet cells within each
pattern's quota, and what the quotas leave unfilled (near-duplicates skipped) is filled by the
cell balancing alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from math import floor
from typing import TypeVar

from copal_tui.domain.taxonomy import Pattern
from copal_tui.domain.text import content_words

K = TypeVar("K", bound=Hashable)

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


# Table 8 of the paper: the relation pattern of its 900 selected composed queries.
PAPER_PATTERN_COUNTS: dict[str, int] = {
    Pattern.SCOPE_RESTRICTION.value: 364,
    Pattern.PREREQUISITE_GATING.value: 179,
    Pattern.SELECTIVE_DISCLOSURE.value: 175,
    Pattern.WORKFLOW_TRANSFER.value: 182,
}
POOL, EQUAL, PAPER = "pool", "equal", "paper"
MIX_RULES = (POOL, EQUAL, PAPER)
DEFAULT_MIX = POOL


@dataclass(frozen=True)
class PatternMix:
    """How a world's budget is shared among relation patterns: `pool` (each pattern's share of
    the world's candidates), `equal` (no pattern quota), `paper` (Table 8) or stated weights."""

    rule: str
    weights: tuple[tuple[str, Fraction], ...] = ()  # the stated weights (rule "weights")

    @classmethod
    def parse(cls, text: str) -> PatternMix:
        """`pool`, `equal`, `paper`, or `pattern=weight,...` (weights >= 0, any scale;
        a pattern not named gets none). Raises ValueError with what is wrong."""
        spec = text.strip().lower()
        if spec in MIX_RULES:
            return cls(spec)
        names = [p.value for p in Pattern]
        found: dict[str, Fraction] = {}
        for part in spec.split(","):
            name, eq, raw = (x.strip() for x in part.partition("="))
            name = name.replace("-", "_")
            if not eq or name not in names:
                raise ValueError(f"{part.strip()!r}: expected pool, equal, paper or "
                                 f"PATTERN=WEIGHT,... with PATTERN one of {', '.join(names)}")
            if name in found:
                raise ValueError(f"{name} is given twice")
            try:
                weight = Fraction(raw)
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"{part.strip()!r}: the weight is not a number") from None
            if weight < 0:
                raise ValueError(f"{part.strip()!r}: a weight cannot be negative")
            found[name] = weight
        if not any(found.values()):
            raise ValueError("at least one pattern needs a positive weight")
        return cls("weights", tuple(sorted(found.items(), key=lambda kv: names.index(kv[0]))))

    def __str__(self) -> str:
        if self.rule != "weights":
            return self.rule
        return ",".join(f"{k}={float(w):g}" for k, w in self.weights)

    def weights_over(self, pool: Mapping[K, int]) -> dict[K, Fraction] | None:
        """Each pool key's weight (None for `equal`: no quota). A key without candidates
        weighs nothing, so its share goes to the patterns the world has."""
        if self.rule == EQUAL:
            return None
        stated: Mapping[str, Fraction | int] = (
            PAPER_PATTERN_COUNTS if self.rule == PAPER else dict(self.weights))

        def weight(key: K, n: int) -> Fraction:
            if n <= 0:
                return Fraction(0)
            return Fraction(n) if self.rule == POOL else Fraction(stated.get(str(key), 0))

        return {k: weight(k, n) for k, n in pool.items()}


def mix_line(selected: Mapping[str, int]) -> str:
    """Selected composed items' pattern shares beside the paper's, in the report's pattern
    order (scope restriction, prerequisite gating, selective disclosure, workflow transfer):
    `40.0/20.0/20.0/20.0% (paper 40.4/19.9/19.4/20.2%)`; `none selected (...)` without any."""
    order = [p.value for p in Pattern]
    paper_total = sum(PAPER_PATTERN_COUNTS.values())
    paper = "/".join(f"{100 * PAPER_PATTERN_COUNTS[p] / paper_total:.1f}" for p in order)
    total = sum(selected.values())
    if not total:
        return f"none selected (paper {paper}%)"
    mine = "/".join(f"{100 * selected.get(p, 0) / total:.1f}" for p in order)
    return f"{mine}% (paper {paper}%)"


def apportion(total: int, weights: Mapping[K, Fraction | int],
              caps: Mapping[K, int] | None = None) -> dict[K, int]:
    """Largest-remainder (Hamilton) apportionment of `total` places by `weights`: each key gets
    the whole part of its exact share, and the places left go one each to the largest
    remainders (ties: the larger weight, then the mapping's order). With `caps`, a key whose
    share exceeds its cap is held at the cap and the rest of `total` is apportioned again among
    the others, so places are never given where there is nothing to fill them."""
    order = list(weights)
    out = {k: 0 for k in order}
    live = [k for k in order if weights[k] > 0]
    limit: Mapping[K, int] = caps or {}
    left = total
    while left > 0 and live:
        whole = sum(Fraction(weights[k]) for k in live)
        exact = {k: Fraction(left) * Fraction(weights[k]) / whole for k in live}
        share = {k: floor(exact[k]) for k in live}
        rank = sorted(live, key=lambda k: (share[k] - exact[k], -weights[k], order.index(k)))
        for k in rank[:left - sum(share.values())]:
            share[k] += 1
        over = [k for k in live if k in limit and share[k] > limit[k]]
        if not over:
            out.update(share)
            break
        for k in over:
            out[k] = limit[k]
            left -= limit[k]
            live.remove(k)
    return out


def selection_quotas(mix: PatternMix, candidates: list[Candidate], budget: int,
                     ) -> dict[str | None, int] | None:
    """Places per pattern among a world's screened candidates (None: no pattern quota), in
    the report's pattern order, capped at the candidates each pattern has."""
    pool: Counter[str | None] = Counter(c.pattern for c in candidates)
    keys = [*(p.value for p in Pattern if pool[p.value]),
            *sorted((k for k in pool if k not in set(Pattern)), key=str)]
    weights = mix.weights_over({k: pool[k] for k in keys})
    return None if weights is None else apportion(budget, weights, {k: pool[k] for k in keys})


def greedy_select(candidates: list[Candidate], budget: int,
                  quotas: Mapping[str | None, int] | None = None) -> list[str]:
    """The selected ids in selection order. With `quotas`, a pattern is picked only while it
    has fewer than its quota; once no candidate of an open pattern is left, the rest of the
    budget is filled by the cell balancing alone."""
    chosen: list[Candidate] = []
    chosen_words: list[frozenset[str]] = []
    cells: Counter[tuple[str | None, str | None]] = Counter()
    per_comp: Counter[str | None] = Counter()
    per_pattern: Counter[str | None] = Counter()
    pool = sorted(candidates, key=lambda c: c.id)
    words = {c.id: content_words(c.query) for c in pool}
    while pool and len(chosen) < budget:
        open_ = pool if quotas is None else \
            [c for c in pool if per_pattern[c.pattern] < quotas.get(c.pattern, 0)]
        if not open_:
            quotas = None
            continue
        best = min(
            open_,
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
        per_pattern[best.pattern] += 1
    return [c.id for c in chosen]
