"""Offline grounding (policy inventory -> clauses) and the composition filter (confirm/reject).

Heuristic, NOT a language model. Grounding reads each policy's cue phrases with `policy_parse`;
a policy with no cue phrase that is a bare imperative ("Describe product nutrition when asked")
is read as a licence. The inventory's clauses then go through the same grounding rule as a real
model's answer (`domain.grounding`), which merges a rule repeated across policies into one
clause listing every source.

The composition filter judges a proposed set of two or three clauses by cues: the effects
satisfy the proposed pattern's anchor (taxonomy.PATTERN_ANCHORS), any two clauses of one
policy form an anchor themselves (a gate or a boundary written inside one policy composes; two
licences of one policy are that policy's own list), some anchor pair is coherent, and every
clause is linked to the others.
Two clauses are coherent when they share topic words (content-word overlap of trigger + scope),
or when one restricts advice in a topic field (health, money, law: FIELDS) that the other's
topic belongs to, the paper's running example: "don't give personal medical advice" x
"describe product nutrition when asked" (a diabetic shopper asking which lunch suits them).
"""

from __future__ import annotations

import re
from typing import Any

from copal_tui.domain.compose_filter import forms_anchor
from copal_tui.domain.grounding import canonicalise
from copal_tui.domain.outputs import GroundedClause
from copal_tui.domain.taxonomy import PATTERN_ANCHORS, Effect, Pattern, patterns_for_effects
from copal_tui.offline.policy_parse import parse_policy
from copal_tui.offline.text import cap_words, clean, squash, term_set, topic_words

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


# A bare imperative ("Describe product nutrition when asked") instructs the assistant to give
# something: a licence. Only read so when no cue phrase was found, and never on a deny entry.
_IMPERATIVE = re.compile(
    r"^\s*(?:please\s+)?(?P<verb>describe|explain|share|tell|give|provide|list|answer|offer|"
    r"state|quote|show|disclose|reveal|outline|summari[sz]e)\s+(?P<obj>.+?)"
    r"(?:,?\s+(?P<cond>(?:when|whenever|if|once)\s+.+?|on request|upon request))?\s*[.!]?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_GENERIC_COND = re.compile(r"^(?:(?:when|whenever|if|once)\s+(?:asked|requested|they ask|"
                           r"someone asks|the user asks|a customer asks)|on request|upon request)"
                           r"$", re.IGNORECASE)


def imperative(policy_text: str) -> dict[str, Any] | None:
    """The licence a bare imperative grants, as a clause, or None."""
    text = clean(policy_text)
    m = _IMPERATIVE.match(squash(text))
    if m is None:
        return None
    obj = squash(m.group("obj")).strip(" ,.;")
    cond = squash(m.group("cond") or "")
    verb = m.group("verb").lower()
    effect = Effect.DISCLOSE if verb in ("disclose", "reveal", "share") else Effect.PERMIT
    trigger = cond if cond and not _GENERIC_COND.match(cond) else \
        f"a request that involves {cap_words(obj, 12)}"
    return {"trigger": trigger, "scope": obj, "effect": effect.value,
            "source_span": text.strip().rstrip("."), "confidence": 0.7,
            "audit_note": f"offline heuristic: imperative '{verb} ...' read as {effect.value}"}


# A COMPASS allowlist or denylist entry describes a topic ("Information about ...") rather than
# stating a rule with a cue phrase; which list it is on is its effect.
LIST_EFFECT = {"allow": Effect.PERMIT, "deny": Effect.PROHIBIT}


def policy_clauses(policy: dict[str, Any]) -> list[dict[str, Any]]:
    """The clauses one policy of the inventory proposes, each naming the policy."""
    pid, text = str(policy.get("id") or "P?"), str(policy.get("text", ""))
    clauses = ground(text)
    listed = LIST_EFFECT.get(str(policy.get("kind", "")))
    if listed is not Effect.PROHIBIT and all(c["effect"] in (None, "OTHER") for c in clauses):
        found = imperative(text)
        if found is not None and found["source_span"] in text:
            return [{"policy_id": pid, **found}]
    if listed is not None and all(c["effect"] in (None, "OTHER") for c in clauses):
        for c in clauses:
            c["effect"] = listed.value
            c["audit_note"] = (f"no cue phrase: effect {listed.value} from the policy's kind "
                               f"({policy.get('kind')}list entry)")
    return [{"policy_id": pid, **c} for c in clauses]


def _inventory(inp: dict[str, Any]) -> list[dict[str, Any]]:
    """The policies of the input: `policies`, or `policy` alone as an inventory of one."""
    listed = inp.get("policies")
    policies = listed if isinstance(listed, list) else [inp.get("policy") or {}]
    policies = [p for p in policies if isinstance(p, dict)]
    # One policy without text does not sink the inventory; an inventory without any does.
    with_text = [p for p in policies if clean(str(p.get("text", ""))).strip()]
    return with_text or policies[:1] or [{}]


def grounding(inp: dict[str, Any]) -> dict[str, Any]:
    """The grounded clauses of a policy inventory: each policy's cue-phrase clauses, checked
    and with repeated rules merged by the grounding rule (`domain.grounding.canonicalise`:
    the same normalised effect, trigger and scope in several policies is one clause that
    lists every source)."""
    policies = _inventory(inp)
    proposed = [GroundedClause.model_validate(c) for p in policies for c in policy_clauses(p)]
    texts = {str(p.get("id") or "P?"): str(p.get("text", "")) for p in policies}
    canon = canonicalise(proposed, texts)
    return {"clauses": [
        {"policy_id": c.primary.policy_id, "trigger": c.trigger, "scope": c.scope,
         "effect": c.effect, "source_span": c.primary.span, "confidence": c.confidence,
         "audit_note": c.audit_note,
         "also_from": [{"policy_id": s.policy_id, "source_span": s.span}
                       for s in c.sources[1:]]}
        for c in canon.clauses]}


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


# Topic fields in which a request about licensed content can seek restricted advice: a
# shopper's nutrition question framed by their diabetes touches "personal medical advice".
# Only advice-like restrictions link through a field (ADVICE), so a bank world, where every
# clause is about money, does not become one big scenario.
FIELDS: dict[str, frozenset[str]] = {
    name: term_set(words) for name, words in {
        "health": "medical medicine medication health healthy diet dietary nutrition "
                  "nutritional nutrient calorie sugar allergen allergy allergic ingredient "
                  "diabetes diabetic symptom doctor clinical diagnosis diagnose treatment "
                  "vitamin supplement pregnant pregnancy fitness wellbeing",
        "money": "invest investment investing financial finance tax pension retirement "
                 "savings portfolio stock crypto",
        "law": "legal law lawyer solicitor liability lawsuit court rights",
    }.items()
}
ADVICE = term_set("advice advise recommend recommendation opinion diagnose diagnosis suitable "
                  "suitability safe assurance guarantee predict prediction")
RESTRICTING = frozenset({Effect.PROHIBIT, Effect.WITHHOLD})


def fields_of(clause: dict[str, Any]) -> set[str]:
    words = clause_topic(clause)
    return {name for name, stems in FIELDS.items() if words & stems}


def field_link(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    """Fields through which an advice restriction of one clause meets the other's topic."""
    out: set[str] = set()
    for r, o in ((a, b), (b, a)):
        advice = term_set(str(r.get("scope", ""))) & ADVICE
        if _effect(r) in RESTRICTING and advice:
            out |= fields_of(r) & fields_of(o)
    return out


def coherent(a: dict[str, Any], b: dict[str, Any]) -> bool:
    shared, in_triggers = shared_topic(a, b)
    return (len(shared) >= MIN_SHARED or (len(shared) >= 1 and in_triggers)
            or bool(field_link(a, b)))


def _why(a: dict[str, Any], b: dict[str, Any]) -> str:
    shared, in_triggers = shared_topic(a, b)
    if len(shared) >= MIN_SHARED or (shared and in_triggers):
        where = " (named by a trigger)" if in_triggers else ""
        return f"shared topic words: {', '.join(sorted(shared))}{where}"
    fields = ", ".join(sorted(field_link(a, b)))
    return (f"no shared topic word, but an advice restriction meets the other clause's topic "
            f"in the {fields} field (cue table)")


def linked(anchor: tuple[dict[str, Any], dict[str, Any]],
           others: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The clauses of `others` that no chain of coherent clauses joins to the anchor pair."""
    joined, todo = list(anchor), list(others)
    grew = True
    while todo and grew:
        grew = False
        for t in list(todo):
            if any(coherent(t, j) for j in joined):
                joined.append(t)
                todo.remove(t)
                grew = True
    return todo


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


def one_policy_without_anchor(
    clauses: list[dict[str, Any]],
) -> tuple[tuple[dict[str, Any], dict[str, Any]], str] | None:
    """Two clauses of one policy whose effects form no anchor (with that policy), if any."""
    for i, a in enumerate(clauses):
        for b in clauses[i + 1:]:
            shared = sorted({str(p) for p in a.get("policy_ids") or []}
                            & {str(p) for p in b.get("policy_ids") or []})
            if shared and not forms_anchor(_effect(a), _effect(b)):
                return (a, b), shared[0]
    return None


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
    unanchored = one_policy_without_anchor(clauses)
    if unanchored is not None:
        (a, b), policy = unanchored
        return {"accept": False, "pattern": None,
                "reason": f"offline heuristic: {a.get('effect')} ({a.get('id', '?')}) and "
                f"{b.get('effect')} ({b.get('id', '?')}) both come from {policy} and their "
                "effects form no anchor, so together they are that policy's own list, not "
                "an interaction"}
    good = [p for p in pairs if coherent(*p)]
    lic, con = (good or pairs)[0]
    pair_desc = f"{lic.get('effect')} ({lic.get('id', '?')}) vs {con.get('effect')} " \
                f"({con.get('id', '?')})"
    if not good:
        shared, _ = shared_topic(lic, con)
        words = ", ".join(sorted(shared)) or "none"
        return {
            "accept": False,
            "pattern": None,
            "reason": (
                f"offline heuristic: {pair_desc} satisfy the {pattern.value} anchor but share "
                f"too few topic words (shared: {words}) and no advice field, so one request is "
                "unlikely to activate both"
            ),
        }
    others = [c for c in clauses if c is not lic and c is not con]
    loose = linked((lic, con), others)
    if loose:
        ids = ", ".join(str(c.get("id", "?")) for c in loose)
        return {
            "accept": False,
            "pattern": None,
            "reason": (
                f"offline heuristic: {pair_desc} satisfy the {pattern.value} anchor, but {ids} "
                "shares no topic word or advice field with the other clauses, so one request "
                "is unlikely to activate all of them"
            ),
        }
    extra = ""
    for c in others:
        partner = next(j for j in (lic, con, *others) if j is not c and coherent(c, j))
        extra += f"; {c.get('effect')} ({c.get('id', '?')}) joins by {_why(c, partner)}"
    return {
        "accept": True,
        "pattern": pattern.value,
        "reason": (
            f"offline heuristic: {pair_desc} satisfy the {pattern.value} anchor; "
            f"{_why(lic, con)}{extra}"
        ),
    }
