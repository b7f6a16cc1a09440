"""Candidate compositions (COPAL section 3.2): clause sets of two and three, proposed by effect
anchors alone, in a bounded and deterministic order. The model judges the rest.

Why effects only: the paper's own running example ("don't give personal medical advice" x
"describe product nutrition when asked") shares no word, so any word-overlap proposal misses it.
Trigger compatibility (one coherent user scenario) and scope compatibility (shared content or
workflow) are meaning, and are judged by the model in the `composition` task.

- A pair is one licensing and one constraining clause of a pattern's anchor
  (taxonomy.PATTERN_ANCHORS), of different policies or of one (a gate written inside one
  policy, "you may share X once the caller is verified", grounds into a PERMIT and a
  REQUIRE_GATE clause of that policy and is composable in the paper: the effects, not the
  policy boundaries, make the interaction).
- A triple is an anchor pair plus a third clause that is a second anchor of either side of the
  same pattern, or that forms another pattern's anchor with one of the pair (a gate or a route
  next to a scope restriction, say).
- Two clauses of one policy are in a set together only when their effects form an anchor
  (`forms_anchor`): two licences of one policy are that policy's own list, not an interaction.
- Order: each side of an anchor in a seeded hash order of its clauses, walked so that every
  clause of a side is proposed once before any is proposed again (`compose_sets`, which also
  counts the sets without listing them: a large world proposes billions). No word is looked
  at; the run seed changes the order, nothing else.
- Budget: 4 x `per_pattern` accepted compositions per world, shared among the patterns by the
  pattern mix (`composition_quotas`: by default each pattern's share of the world's proposed
  clause sets, pairs and triples; `equal` gives every pattern `per_pattern`), half of a
  pattern's quota pairs (rounded up) and half triples; the compose stage asks candidates in
  this order until the quota of a (pattern, size) group is met or ASK_FACTOR x quota
  candidates have been asked.

Non-interacting controls (`control_sets`): sets of licensing clauses only (PERMIT/DISCLOSE from
different policies), where no clause restricts, gates or routes another, drawn from at most
CONTROL_POOL licensing clauses (a world's few controls need a handful).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from copal_tui.domain.selection import EQUAL, PatternMix, apportion
from copal_tui.domain.taxonomy import PATTERN_ANCHORS, Effect, Pattern

if TYPE_CHECKING:
    from copal_tui.domain.compose_sets import Proposals

SIZES = (2, 3)
# Candidates asked per (pattern, size) group at most, as a multiple of its quota: bounds the
# model calls when most proposals are incoherent (effects alone say nothing of the scenario).
ASK_FACTOR = 8
LICENSING = frozenset({Effect.PERMIT, Effect.DISCLOSE})
# Non-interacting control sets per world, split like the compositions: pairs then triples.
CONTROL_SETS = 4
# Licensing clauses the control sets are drawn from at most: a larger world's are taken in a
# seeded order, at most CONTROL_PER_POLICY of any one policy, since every pair and triple of
# all its licences would be billions of sets in a world of 100,000 clauses.
CONTROL_POOL = 24
CONTROL_PER_POLICY = 2


@dataclass(frozen=True)
class Candidate:
    clause_ids: tuple[str, ...]  # sorted
    pattern: Pattern
    anchor: tuple[str, str]  # (licensing clause, constraining clause) that proposed it

    @property
    def size(self) -> int:
        return len(self.clause_ids)

    def composition_id(self, world_id: str) -> str:
        # The proposed pattern is part of the id (a re-tagged row keeps it), so a candidate is
        # decided once whatever the model answered.
        return composition_id(world_id, self.clause_ids, self.pattern.value)


def composition_id(world_id: str, clause_ids: Iterable[str], pattern: str) -> str:
    key = "|".join((*sorted(clause_ids), pattern))
    return f"{world_id}:K{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def control_id(world_id: str, clause_ids: Iterable[str]) -> str:
    key = "|".join((*sorted(clause_ids), "control"))
    return f"{world_id}:X{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def quota(per_pattern: int, size: int) -> int:
    """Accepted compositions wanted per pattern and clause-set size."""
    return (per_pattern + 1) // 2 if size == 2 else per_pattern // 2


_EFFECTS = {e.value: e for e in Effect}


def effect_of(clause: Mapping[str, Any]) -> Effect | None:
    return _EFFECTS.get(str(clause.get("effect")))


def _policies(clause: dict[str, Any]) -> frozenset[str]:
    return frozenset(str(p) for p in clause.get("policy_ids") or ())


def _apart(*clauses: dict[str, Any]) -> bool:
    """No two clauses share a policy (the non-interacting controls: licences of different
    policies)."""
    seen: set[str] = set()
    for c in clauses:
        ps = _policies(c)
        if ps & seen:
            return False
        seen |= ps
    return True


def forms_anchor(x: Effect | None, y: Effect | None) -> bool:
    """The two effects are one licensing and one constraining side of some pattern's anchor."""
    return any((x in lic and y in con) or (y in lic and x in con)
               for lic, con in PATTERN_ANCHORS.values())


def joinable(*clauses: dict[str, Any]) -> bool:
    """The clauses may be composed: any two that share a policy form an anchor (a gate or a
    boundary written inside one policy), so one policy's own list of licences is never a
    composition."""
    return all(forms_anchor(effect_of(a), effect_of(b))
               for a, b in combinations(clauses, 2) if _policies(a) & _policies(b))


def relates(third: Effect, lic: Effect, con: Effect, pattern: Pattern) -> bool:
    """A third clause belongs with the anchor pair: a second anchor of either side of the
    pattern, or another pattern's anchor with one of the pair."""
    licensing, constraining = PATTERN_ANCHORS[pattern]
    if third in licensing or third in constraining:
        return True
    return any((lic in lic2 and third in con2) or (third in lic2 and con in con2)
               for lic2, con2 in PATTERN_ANCHORS.values())


def spread(sets: list[tuple[str, ...]], seed: int, label: str,
           limit: int | None = None) -> list[tuple[str, ...]]:
    """Clause sets (listed in full: the control sets of a bounded pool) in seeded hash order,
    reordered in rounds so a clause is proposed again only once every set of the round before
    used its clauses as often (a few sets then reach many clauses instead of every partner of
    the first one). With `limit`, only the first `limit` of that same order."""

    def digest(ids: tuple[str, ...]) -> str:
        return hashlib.sha256("|".join((str(seed), label, *ids)).encode()).hexdigest()

    todo = sorted(sets, key=lambda ids: (digest(ids), ids))
    uses: Counter[str] = Counter()
    out: list[tuple[str, ...]] = []
    level = 0
    cap = len(sets) if limit is None else limit
    while todo and len(out) < cap:
        rest = []
        for k, ids in enumerate(todo):
            if len(out) >= cap:
                rest += todo[k:]
                break
            if max(uses[i] for i in ids) <= level:
                out.append(ids)
                uses.update(ids)
            else:
                rest.append(ids)
        todo, level = rest, level + 1
    return out


def ask_cap(per_pattern: int, size: int) -> int:
    """Candidates of one (pattern, size) group asked at most (`per_pattern`: the pattern's
    quota of accepted compositions)."""
    return ASK_FACTOR * quota(per_pattern, size)


def proposals(clauses: list[dict[str, Any]]) -> Proposals:
    """Every anchor-based clause set of each (pattern, size) group: counted, and walked in
    proposal order on demand (`compose_sets.Proposals`)."""
    from copal_tui.domain.compose_sets import Proposals  # it builds on the rules above

    return Proposals(clauses)


def pattern_pool(found: Proposals) -> dict[Pattern, int]:
    """Proposed clause sets per pattern (pairs and triples): the world's natural frequency of
    each pattern, which the default mix follows."""
    return {p: sum(found.count(p, size) for size in SIZES) for p in Pattern}


def composition_quotas(mix: PatternMix, per_pattern: int,
                       pool: Mapping[Pattern, int]) -> dict[Pattern, int]:
    """Accepted compositions wanted per pattern: `per_pattern` each under `equal`, else
    4 x `per_pattern` apportioned by the mix's weights over the patterns the world proposes."""
    if mix.rule == EQUAL:
        return {p: per_pattern for p in Pattern}
    weights = mix.weights_over({p: pool.get(p, 0) for p in Pattern}) or {}
    return apportion(per_pattern * len(Pattern), weights)


def ordered(found: Proposals, seed: int = 0,
            per_pattern: int | Mapping[Pattern, int] | None = None,
            ) -> dict[tuple[Pattern, int], list[Candidate]]:
    """Each group's candidates in proposal order: all of them, or with `per_pattern` (one
    quota for every pattern, or each pattern's) the first `ask_cap` (all a run can ask)."""
    groups: dict[tuple[Pattern, int], list[Candidate]] = {}
    for pattern in Pattern:
        wanted = per_pattern.get(pattern, 0) if isinstance(per_pattern, Mapping) else per_pattern
        for size in SIZES:
            cap = None if wanted is None else ask_cap(wanted, size)
            groups[(pattern, size)] = list(found.walk(pattern, size, seed, cap)) \
                if found.count(pattern, size) else []
    return groups


def candidates(clauses: list[dict[str, Any]], seed: int = 0,
               per_pattern: int | Mapping[Pattern, int] | None = None,
               ) -> dict[tuple[Pattern, int], list[Candidate]]:
    """The anchor-based candidates of each (pattern, size) group in proposal order: all of
    them, or with `per_pattern` the first `ask_cap` (all a compose run can ask)."""
    return ordered(proposals(clauses), seed, per_pattern)


def control_sets(clauses: list[dict[str, Any]], seed: int = 0,
                 limit: int = CONTROL_SETS) -> list[tuple[str, ...]]:
    """Up to `limit` non-interacting clause sets (licensing clauses of different policies), half
    pairs (rounded up) then half triples, in seeded spread order."""
    lic = sorted((c for c in clauses if effect_of(c) in LICENSING), key=lambda c: c["id"])
    if len(lic) > CONTROL_POOL:
        lic = _control_pool(lic, seed)
    out: list[tuple[str, ...]] = []
    for size, n in ((2, (limit + 1) // 2), (3, limit // 2)):
        sets = [tuple(c["id"] for c in combo) for combo in combinations(lic, size)
                if _apart(*combo)]
        out += spread(sets, seed, "control", n)
    return out


def _control_pool(lic: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """CONTROL_POOL licensing clauses in seeded order, at most CONTROL_PER_POLICY of any one
    policy (so clauses of different policies are among them), sorted by id."""
    def digest(c: dict[str, Any]) -> bytes:
        return hashlib.sha256(f"{seed}|control-pool|{c['id']}".encode()).digest()

    taken: Counter[str] = Counter()
    pool: list[dict[str, Any]] = []
    for c in sorted(lic, key=lambda c: (digest(c), c["id"])):
        ps = _policies(c)
        if any(taken[p] >= CONTROL_PER_POLICY for p in ps):
            continue
        taken.update(ps)
        pool.append(c)
        if len(pool) == CONTROL_POOL:
            break
    return sorted(pool, key=lambda c: c["id"])
