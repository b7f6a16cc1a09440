"""Offline grounding (policy -> clauses) and the composition filter (confirm/reject).

Heuristic, NOT a language model. Grounding reads cue phrases with `policy_parse`; the
composition filter accepts a proposed pattern when the clause effects satisfy its anchor
(taxonomy.PATTERN_ANCHORS), the clauses come from more than one policy, and the licensing and
constraining clauses share topic words (content-word overlap of trigger + scope).
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.taxonomy import PATTERN_ANCHORS, Effect, Pattern, patterns_for_effects
from copal_tui.offline.policy_parse import parse_policy
from copal_tui.offline.text import cap_words, clean, squash, topic_words

# Two shared topic words make one coherent scenario likely; one is enough when a trigger
# names it (the situation that activates one rule is about the other rule's object).
MIN_SHARED = 2


def _trigger(condition: str | None, obj: str, gate_action: str | None) -> str:
    if condition:
        return condition
    if gate_action:
        first = gate_action.split()[0].lower() if gate_action.split() else ""
        return gate_action if first.endswith("ing") else f"a request to {gate_action}"
    return f"a request that involves {cap_words(obj, 12)}"


def ground(policy_text: str) -> list[dict[str, Any]]:
    """Clauses of one policy text (at least one; OTHER with an audit note when no cue)."""
    text = policy_text
    if not clean(text).strip():
        raise ValueError("grounding input: the policy text is empty")
    parsed = parse_policy(text)
    clauses = []
    for seg in parsed.segments:
        span = text[seg.start : seg.end] or text.strip()
        # The span stays verbatim (escape sequences included); trigger and scope are ours to
        # write, so they are cleaned.
        scope = squash(clean(seg.obj)) or cap_words(squash(clean(text)), 20) or "the whole policy"
        trigger = _trigger(parsed.condition, scope, parsed.gate.action if parsed.gate else None)
        clauses.append(
            {
                "trigger": squash(clean(trigger)) or "any request",
                "scope": scope,
                "effect": seg.effect,
                "source_span": span,
                "confidence": round(seg.confidence + (0.04 if parsed.condition else 0.0), 2),
                "audit_note": seg.note,
            }
        )
    return clauses


# A COMPASS allowlist or denylist entry describes a topic ("Information about ...") rather than
# stating a rule with a cue phrase; which list it is on is its effect.
LIST_EFFECT = {"allow": Effect.PERMIT, "deny": Effect.PROHIBIT}


def grounding(inp: dict[str, Any]) -> dict[str, Any]:
    policy = inp.get("policy") or {}
    clauses = ground(str(policy.get("text", "")))
    listed = LIST_EFFECT.get(str(policy.get("kind", "")))
    if listed is not None and all(c["effect"] in (None, "OTHER") for c in clauses):
        for c in clauses:
            c["effect"] = listed.value
            c["audit_note"] = (f"no cue phrase: effect {listed.value} from the policy's kind "
                               f"({policy.get('kind')}list entry)")
    return {"clauses": clauses}


# ---------------------------------------------------------------- composition filter


def _effect(clause: dict[str, Any]) -> Effect | None:
    try:
        return Effect(str(clause.get("effect")))
    except ValueError:
        return None


def clause_topic(clause: dict[str, Any]) -> frozenset[str]:
    return topic_words(f"{clause.get('trigger', '')} {clause.get('scope', '')}")


def shared_topic(a: dict[str, Any], b: dict[str, Any]) -> tuple[frozenset[str], bool]:
    """Shared topic words of two clauses, and whether one of them is shared by the triggers."""
    shared = clause_topic(a) & clause_topic(b)
    in_triggers = bool(
        (topic_words(str(a.get("trigger", ""))) | topic_words(str(b.get("trigger", "")))) & shared
    )
    return shared, in_triggers


def coherent(a: dict[str, Any], b: dict[str, Any]) -> bool:
    shared, in_triggers = shared_topic(a, b)
    return len(shared) >= MIN_SHARED or (len(shared) >= 1 and in_triggers)


def anchor_pairs(
    pattern: Pattern, clauses: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(licensing, constraining) clause pairs for a pattern, best topic overlap first."""
    licensing, constraining = PATTERN_ANCHORS[pattern]
    pairs = [
        (a, b)
        for a in clauses
        for b in clauses
        if a is not b and _effect(a) in licensing and _effect(b) in constraining
    ]
    # Stable sort: ties keep input order, so the answer never depends on dict/hash order.
    return sorted(pairs, key=lambda p: -len(shared_topic(*p)[0]))


def composition(inp: dict[str, Any]) -> dict[str, Any]:
    clauses = [c for c in inp.get("clauses") or [] if isinstance(c, dict)]
    effects = {e for e in (_effect(c) for c in clauses) if e is not None}
    effect_list = ", ".join(sorted(effects)) or "none"
    try:
        pattern = Pattern(str(inp.get("pattern")))
    except ValueError:
        return {"accept": False, "pattern": None,
                "reason": f"offline heuristic: unknown pattern {inp.get('pattern')!r}"}
    pairs = anchor_pairs(pattern, clauses)
    if not pairs:
        licensing, constraining = PATTERN_ANCHORS[pattern]
        alt = [p.value for p in patterns_for_effects(effects) if p != pattern]
        hint = f"; the effects fit {', '.join(alt)}" if alt else ""
        return {
            "accept": False,
            "pattern": None,
            "reason": (
                f"offline heuristic: effects {effect_list} do not satisfy the {pattern.value} "
                f"anchor (one of {'/'.join(sorted(licensing))} and one of "
                f"{'/'.join(sorted(constraining))}){hint}"
            ),
        }
    policies = {str(p) for c in clauses for p in (c.get("policy_ids") or [])}
    if len(policies) == 1 and len(clauses) > 1:
        return {"accept": False, "pattern": None,
                "reason": "offline heuristic: every clause comes from one policy "
                f"({next(iter(policies))}), so this is not a composition of policies"}
    lic, con = pairs[0]
    shared, in_triggers = shared_topic(lic, con)
    words = ", ".join(sorted(shared)) or "none"
    pair_desc = f"{lic.get('effect')} ({lic.get('id', '?')}) vs {con.get('effect')} " \
                f"({con.get('id', '?')})"
    if not coherent(lic, con):
        return {
            "accept": False,
            "pattern": None,
            "reason": (
                f"offline heuristic: {pair_desc} satisfy the {pattern.value} anchor but share "
                f"too few topic words (shared: {words}), so one request is unlikely to "
                "activate both"
            ),
        }
    where = " (named by a trigger)" if in_triggers else ""
    return {
        "accept": True,
        "pattern": pattern.value,
        "reason": (
            f"offline heuristic: {pair_desc} satisfy the {pattern.value} anchor; shared topic "
            f"words: {words}{where}"
        ),
    }
