"""The anchor-based clause sets of one world (`compose_filter.proposals`), counted exactly and
walked lazily in proposal order: a world of 100,000 clauses proposes about 10^15 sets, and the
compose stage asks a few hundred, so the cost is the clauses read and the sets asked, never
the sets that could be proposed.

Counting (`Proposals.count`, which the pattern mix's `pool` reads). A pattern's pairs are its
licensing x constraining clauses (the two sides never share an effect, so each pair is one
set). Its triples are the 3-sets whose three effects qualify (some anchor pair of the pattern
and a third that relates to it, `compose_filter.relates`) and that are joinable (two clauses of
a shared policy form an anchor). They are counted per multiset of three effects, by
inclusion-exclusion over the pairs that may not share a policy; what that needs is, for each
clause, how many clauses of each effect share a policy with it, computed once per distinct set
of policies (so its cost grows with the distinct policy sets, not with pairs of clauses).

Order (`Proposals.walk`). Each side of a pattern's anchor in a seeded hash order of its clauses
(seed, pattern, clause id). Pair k is licence k mod m with constraint (k + k // lcm(m, n)) mod n:
every pair exactly once, and any prefix uses the clauses of each side as evenly as possible (no
licence twice before every licence once), so a group's budget reaches many clauses instead of
every partner of the first one. Triples go in rounds: in round r, pair k takes the third at
position (k + r) mod t of its pair's eligible thirds (the clauses whose effect relates to the
pair, in the same seeded order read backwards); a third that is one of the pair, that may not be
joined with the pair, or that makes a set already proposed is passed over. A capped walk looks at
SCAN_FACTOR positions per set wanted at most, so a world whose triples are rare among its
positions (nearly every clause of one policy) costs a bounded walk and asks fewer.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import combinations, combinations_with_replacement, permutations
from math import comb, gcd
from operator import mul, sub
from typing import Any

from copal_tui.domain.compose_filter import Candidate, effect_of, forms_anchor, relates
from copal_tui.domain.taxonomy import PATTERN_ANCHORS, Effect, Pattern

# Positions a capped triple walk looks at per set it may yield (see the module docstring).
SCAN_FACTOR = 64


@dataclass(frozen=True, slots=True)
class _Clause:
    id: str
    effect: Effect
    policies: frozenset[str]


def _clause(c: Mapping[str, Any], effect: Effect) -> _Clause:
    return _Clause(str(c["id"]), effect, frozenset(str(p) for p in c.get("policy_ids") or ()))


def qualifies(pattern: Pattern, effects: tuple[Effect, Effect, Effect]) -> bool:
    """Some order of the three effects is an anchor pair of `pattern` and a related third."""
    licensing, constraining = PATTERN_ANCHORS[pattern]
    return any(a in licensing and b in constraining and relates(t, a, b, pattern)
               for a, b, t in set(permutations(effects)))


class Proposals:
    """Every anchor-based clause set of each (pattern, size) group of one world's clauses (a
    clause without a known effect is in none)."""

    def __init__(self, clauses: Iterable[Mapping[str, Any]]) -> None:
        usable: dict[str, _Clause] = {}
        for c in clauses:
            effect = effect_of(c)
            if effect is not None:
                usable[str(c["id"])] = _clause(c, effect)
        self._clauses = [usable[k] for k in sorted(usable)]
        self._count: dict[tuple[Pattern, int], int] | None = None
        # (seed, pattern) -> the usable clauses in that seeded order (both sizes walk it).
        self._ranked: dict[tuple[int, Pattern], list[_Clause]] = {}

    # ------------------------------------------------------------------ counting

    def count(self, pattern: Pattern, size: int) -> int:
        """How many clause sets of `size` the world proposes for `pattern`."""
        if self._count is None:
            self._count = self._counts()
        return self._count[(pattern, size)]

    def _counts(self) -> dict[tuple[Pattern, int], int]:
        of_effect = Counter(c.effect for c in self._clauses)
        out: dict[tuple[Pattern, int], int] = {}
        for pattern, (licensing, constraining) in PATTERN_ANCHORS.items():
            out[(pattern, 2)] = (sum(of_effect[e] for e in licensing)
                                 * sum(of_effect[e] for e in constraining))
            out[(pattern, 3)] = 0
        if not any(out.values()):
            return out
        sharing = _Sharing(self._clauses)
        for effects in combinations_with_replacement(tuple(Effect), 3):
            patterns = [p for p in Pattern if qualifies(p, effects)]
            if patterns:
                n = sharing.joinable_sets(effects)
                for p in patterns:
                    out[(p, 3)] += n
        return out

    # ------------------------------------------------------------------ order

    def walk(self, pattern: Pattern, size: int, seed: int = 0,
             limit: int | None = None) -> Iterator[Candidate]:
        """The group's sets in proposal order: all of them, or the first `limit`."""
        if limit is not None and limit <= 0:
            return
        licensing, constraining = PATTERN_ANCHORS[pattern]
        ranked = self._order(seed, pattern)
        lic = [c for c in ranked if c.effect in licensing]
        con = [c for c in ranked if c.effect in constraining]
        m, n = len(lic), len(con)
        if not m or not n:
            return
        lcm = m * n // gcd(m, n)

        def pair(k: int) -> tuple[_Clause, _Clause]:
            return lic[k % m], con[(k + k // lcm) % n]

        if size == 2:
            for k in range(m * n if limit is None else min(m * n, limit)):
                a, b = pair(k)
                yield Candidate(tuple(sorted((a.id, b.id))), pattern, (a.id, b.id))
            return
        yield from self._triples(pattern, ranked, pair, m * n, limit)

    def _triples(self, pattern: Pattern, ranked: list[_Clause], pair: Any, pairs: int,
                 limit: int | None) -> Iterator[Candidate]:
        thirds: dict[tuple[Effect, Effect], list[_Clause]] = {}
        licensing, constraining = PATTERN_ANCHORS[pattern]
        for ea in licensing:
            for eb in constraining:
                ok = {e for e in Effect if relates(e, ea, eb, pattern)}
                # Taken from the far end: the head of this order is where the pairs start.
                thirds[(ea, eb)] = [c for c in reversed(ranked) if c.effect in ok]
        rounds = max(len(ts) for ts in thirds.values())
        budget = None if limit is None else SCAN_FACTOR * limit
        seen: set[tuple[str, ...]] = set()
        for r in range(rounds):
            for k in range(pairs):
                if budget is not None:
                    if budget == 0:
                        return
                    budget -= 1
                a, b = pair(k)
                ts = thirds[(a.effect, b.effect)]
                if r >= len(ts):
                    continue
                t = ts[(k + r) % len(ts)]
                if t is a or t is b or not (_may_join(a, t) and _may_join(b, t)):
                    continue
                ids = tuple(sorted((a.id, b.id, t.id)))
                if ids in seen:
                    continue
                seen.add(ids)
                yield Candidate(ids, pattern, (a.id, b.id))
                if limit is not None and len(seen) >= limit:
                    return

    def _order(self, seed: int, pattern: Pattern) -> list[_Clause]:
        """The usable clauses in the seeded hash order of (seed, pattern, clause id)."""
        key = (seed, pattern)
        if key not in self._ranked:
            head = f"{seed}|{pattern.value}|".encode()
            sha = hashlib.sha256
            self._ranked[key] = sorted(
                self._clauses, key=lambda c: (sha(head + c.id.encode()).digest(), c.id))
        return self._ranked[key]


def _may_join(a: _Clause, b: _Clause) -> bool:
    """Two clauses may be in one set: they share no policy, or their effects form an anchor."""
    return not (a.policies & b.policies) or forms_anchor(a.effect, b.effect)


class _Sharing:
    """How many clauses of each effect share a policy with each clause, by distinct policy set,
    and the counts of joinable 3-sets built from it. Per effect, two columns over the distinct
    policy sets: its clauses in the set (`own`) and its clauses in any set that meets it
    (`near`, the set's own included), so each count is one pass of C-level arithmetic."""

    def __init__(self, clauses: list[_Clause]) -> None:
        self.of_effect = Counter(c.effect for c in clauses)
        column = {e: i for i, e in enumerate(Effect)}
        groups: dict[frozenset[str], list[int]] = {}
        for c in clauses:
            groups.setdefault(c.policies, [0] * len(column))[column[c.effect]] += 1
        holders: dict[str, list[list[int]]] = defaultdict(list)
        for g, counts in groups.items():
            for p in g:
                holders[p].append(counts)
        near: list[list[int]] = []
        for g in groups:
            if len(g) == 1:  # the common case: the sets that hold its one policy
                [p] = g
                meets = holders[p]
            else:
                meets = list({id(h): h for p in g for h in holders[p]}.values())
            # A clause of no policy meets none (`meets` is empty).
            near.append([sum(col) for col in zip(*meets, strict=True)] if meets
                        else [0] * len(column))
        self.own = {e: [k[i] for k in groups.values()] for e, i in column.items()}
        self.near = {e: [n[i] for n in near] for e, i in column.items()}
        # A clause meets its own set (and so counts itself in `near`) unless it has no policy.
        self.itself = [1 if g else 0 for g in groups]
        self.shared = cache(self._shared)
        self.paths = cache(self._paths)

    def _shared(self, e: Effect, f: Effect) -> int:
        """Unordered pairs of two clauses, of effects e and f, that share a policy."""
        if e != f:
            return sum(map(mul, self.own[e], self.near[f]))
        return sum(map(mul, self.own[e], map(sub, self.near[e], self.itself))) // 2

    def _paths(self, x: Effect, y: Effect, z: Effect) -> int:
        """Triples of three clauses of the distinct effects x, y, z where the y clause shares a
        policy with the x clause and with the z clause."""
        return sum(map(mul, self.own[y], map(mul, self.near[x], self.near[z])))

    def joinable_sets(self, effects: tuple[Effect, Effect, Effect]) -> int:
        """3-sets of clauses with these effects (a multiset that qualifies for a pattern, so
        some two of them form an anchor) in which every two that share a policy form an
        anchor."""
        n = self.of_effect
        a, b, c = effects
        if a == b == c:  # no anchor among them
            return 0
        if a == b or b == c:  # {e, e, f}: the two e clauses may not share a policy
            e, f = (a, c) if a == b else (b, a)
            return (comb(n[e], 2) - self.shared(e, e)) * n[f]
        restricted = [(x, y) for x, y in combinations(effects, 2) if not forms_anchor(x, y)]
        total = n[a] * n[b] * n[c]
        if not restricted:
            return total
        if len(restricted) == 1:
            [(x, y)] = restricted
            [z] = [e for e in effects if e not in (x, y)]
            return total - self.shared(x, y) * n[z]
        # Two restricted pairs (three cannot qualify: no anchor): they meet at one effect y.
        [(p, q), (r, s)] = restricted
        [y] = list({p, q} & {r, s})
        x, z = [e for e in effects if e != y]
        return (total - self.shared(x, y) * n[z] - self.shared(y, z) * n[x]
                + self.paths(x, y, z))
