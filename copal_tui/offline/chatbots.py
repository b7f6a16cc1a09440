"""The three reference chatbots: refuse-all, comply-all and keyword-guard. NOT language models.

They read the same four-block system prompt a real target gets (`## Role and service
context`, `## Policies` with lines `- P01 (deny): text`, `## Limits`, `## Response actions`)
and answer the user message (the test query). An organisation's own system prompt (a COMPASS
world's) is read loosely: its deny lines, banned bullets or prohibition sentences, the rest as
context. Earlier turns of the conversation (few-shot demonstrations) are ignored. They are calibration instruments:
- refuse-all: a polite refusal that provides nothing and routes nowhere;
- comply-all: answers every part of the query affirmatively, restating what was asked and adding
  world-context sentences that share words with it; never verifies, refuses or routes;
- keyword-guard: like comply-all, except that a part hitting the object words of a deny policy
  gets a short refusal; it never verifies and never routes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from copal_tui.offline.phrasing import pieces, sentence, swap_person
from copal_tui.offline.policy_parse import parse_policy
from copal_tui.offline.text import (
    ROUTE_CUE,
    clean,
    content_words,
    sentences,
    squash,
    stable_index,
    term_set,
)

_I = re.IGNORECASE
CHATBOTS = ("refuse-all", "comply-all", "keyword-guard")
_HEADER = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)
_POLICY_LINE = re.compile(r"^\s*-\s*(?P<id>\S+)\s*\((?P<kind>[\w-]+)\)\s*:\s*(?P<text>.+?)\s*$",
                          re.MULTILINE)
_ROLE_LINE = re.compile(r"^You are the customer assistant of .*$", re.MULTILINE)
# Context sentences that would route or ask (contact details, instructions) are not used by
# the reference bots: comply-all and keyword-guard must never route or verify by accident.
_CONTACT = re.compile(r"@|\bwww\.|\.example\b|\b\d{3,5}[ -]\d{3}[ -]?\d{3,4}\b|\b\d-\d{3}-|"
                      r"\bcall\b|\bcontact\b|\bemail\b", _I)


@dataclass(frozen=True)
class DenyRule:
    policy_id: str
    terms: frozenset[str]  # content words of the governed object
    pieces: tuple[frozenset[str], ...]  # the object's list items, as term sets


@dataclass(frozen=True)
class Persona:
    context: tuple[tuple[str, frozenset[str]], ...]  # usable context sentences + their terms
    deny: tuple[DenyRule, ...]


def _blocks(system: str) -> dict[str, str]:
    heads = list(_HEADER.finditer(system))
    out: dict[str, str] = {}
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(system)
        out[m.group(1).strip().lower()] = system[m.end() : end].strip()
    return out


def _deny_rules(policy_id: str, text: str) -> list[DenyRule]:
    rules = []
    for seg in parse_policy(text).segments:
        if seg.effect in ("PROHIBIT", "WITHHOLD", "OTHER"):
            ps = tuple(frozenset(content_words(p)) for p in pieces(seg.obj))
            rules.append(DenyRule(policy_id, frozenset(content_words(seg.obj)),
                                  tuple(p for p in ps if p)))
    return rules


# An organisation's own prompt (COMPASS layout) has no four blocks: its prohibitions are
# `- id (deny): text` lines (the explicit-refusal block lists them so), bullets under a heading
# that says what is off limits, or sentences with a prohibition cue.
_OFF_LIMITS_HEAD = re.compile(r"\b(?:prohibit\w*|restrict\w*|forbidden|deny|denylist|"
                              r"not allowed|never|must not|do not|don't|avoid|off[- ]limits)\b", _I)
_PROHIBITION = re.compile(r"\b(?:must not|must never|never|do not|don't|may not|"
                          r"should not|prohibited|not allowed to)\b", _I)
# Outside the four blocks, headings, list items and sentences that address the assistant are
# instructions, not service context: the reference bots never quote them as facts.
_HEADING_OR_ITEM = re.compile(r"^\s*(?:#|[-*\u2022]\s|\d+[.)]\s)")
_INSTRUCTION = re.compile(r"\b(?:you|your|yourself)\b|" + _PROHIBITION.pattern, _I)
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+(?P<text>.+?)\s*$")


def _loose_rules(text: str) -> list[DenyRule]:
    lines = [m for m in _POLICY_LINE.finditer(text) if m.group("kind").lower() == "deny"]
    if lines:
        return [r for m in lines for r in _deny_rules(m.group("id"), m.group("text"))]
    rules: list[DenyRule] = []
    under_ban = False
    for n, line in enumerate(text.splitlines()):
        bullet = _BULLET.match(line)
        if bullet is None and line.strip():
            under_ban = bool(_OFF_LIMITS_HEAD.search(line)) and len(line.split()) <= 12
        if bullet is not None and under_ban:
            rules.extend(_deny_rules(f"L{n + 1}", bullet.group("text")))
        elif _PROHIBITION.search(line):
            for s in sentences(line):
                if _PROHIBITION.search(s):
                    rules.extend(r for r in _deny_rules(f"L{n + 1}", s) if r.terms)
    return rules


@lru_cache(maxsize=256)
def persona(system: str) -> Persona:
    """Parse the four-block system prompt (cached: one world's prompt repeats thousands of
    times); any other prompt is read loosely (`_loose_rules`), the whole of it as context."""
    text = clean(system)
    blocks = _blocks(text)
    four_blocks = "policies" in blocks
    role = _ROLE_LINE.sub("", blocks.get("role and service context", "")) if four_blocks \
        else "\n".join(line for line in _POLICY_LINE.sub("", text).splitlines()
                       if not _HEADING_OR_ITEM.match(line))
    # World contexts wrap lines mid-sentence: join them before cutting sentences.
    context = tuple(
        (sentence(s), term_set(s))
        for s in sentences(squash(role))
        if not _CONTACT.search(s) and not ROUTE_CUE.search(s) and term_set(s)
        and (four_blocks or not _INSTRUCTION.search(s))
    )
    if not four_blocks:
        return Persona(context, tuple(_loose_rules(text)))
    rules = []
    for m in _POLICY_LINE.finditer(blocks["policies"]):
        if m.group("kind").lower() == "deny":
            rules.extend(_deny_rules(m.group("id"), m.group("text")))
    return Persona(context, tuple(rules))


# ---------------------------------------------------------------- reading the query

_SPLIT = re.compile(r"(?<=[.?!])\s+|,\s*and\s+(?=(?:meanwhile|in the meantime|also|then)\b)|;\s+",
                    _I)
_LEAD = re.compile(
    r"^(?:and|or|also|oh|so|but|then|first|second|plus|besides|separately|mainly|hi|hello|"
    r"honestly|anyway|"
    r"meanwhile|in the meantime|while you're at it|and while you're at it|the important bit|"
    r"a small extra|if it's easy|two things|quick one|just|okay|ok|well|actually)\b[,:]?\s*",
    _I,
)
_PREAMBLE = re.compile(r"^[^?]*?(?:,\s*but|:|,\s*so)\s+(?=(?:first|just|can|could|would|please|"
                       r"in the meantime|meanwhile|what|tell|give|so)\b)", _I)
_INFO = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+(?:please\s+|also\s+|at least\s+|just\s+)*|please\s+)?"
    r"(?:tell|give|show|send|share|explain|describe|let me know|read|remind|go over|pull up|"
    r"walk me through)"
    r"(?:\s+me)?(?:\s+(?:about|of|on|with))?\s+(?P<x>.+)$",
    _I,
)
_WANT = re.compile(r"^i(?:'d| would)\s+(?:like|love)\s+(?:to\s+(?:know|see|hear)\s+)?(?:about\s+)?"
                   r"(?P<x>.+)$|^i\s+(?:need|want)\s+(?!to\b)(?P<y>.+)$", _I)
_QUESTION = re.compile(r"^(?:what|what's|when|where|which|who|why|how|is|are|do|does|did|has|"
                       r"have|will|would|could|should|can|shall|was|were|may|might)\b", _I)
_ACTION = re.compile(r"^(?:(?:can|could|would|will)\s+you\s+(?:please\s+|also\s+|just\s+)*|"
                     r"please\s+)(?P<x>.+)$", _I)


def parts(query: str) -> list[str]:
    """Request parts of a query: sentences, split again before "and meanwhile"-style joins."""
    out: list[str] = []
    for s in sentences(clean(query)):
        out.extend(p.strip() for p in _SPLIT.split(s) if p and p.strip(" ,.?!"))
    return out


def understand(part: str) -> tuple[str, str]:
    """(mode, phrase in the assistant's voice); mode is info, question, action or statement."""
    p = squash(part).strip(" ,.?!")
    for _ in range(4):
        q = _PREAMBLE.sub("", _LEAD.sub("", p, count=1), count=1)
        if q == p:
            break
        p = q
    for rx, mode in ((_INFO, "info"), (_WANT, "info")):
        m = rx.match(p)
        if m:
            x = m.group("x") or m.groupdict().get("y") or p
            return mode, swap_person(x)
    m = _ACTION.match(p)
    if m:
        return "action", swap_person(m.group("x"))
    if _QUESTION.match(p):
        return "question", swap_person(p)
    return "statement", swap_person(p)


def _context_for(p: Persona, terms: frozenset[str], limit: int) -> list[str]:
    scored = [(len(t & terms), i, s) for i, (s, t) in enumerate(p.context) if t & terms]
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [s for _, _, s in scored[:limit]]


def _comply_part(p: Persona, part: str) -> str:
    mode, x = understand(part)
    if mode == "action":
        return sentence(f"Sure, I'll {x} right away")
    if mode == "statement":
        return sentence(f"Understood: {x}")
    lead = sentence(f"Sure, here is {x}") if mode == "info" else \
        sentence(f"Sure, on {x}: here is what applies")
    extra = _context_for(p, term_set(part), 2)
    return " ".join([lead, *extra])


def hits_deny(p: Persona, part: str) -> DenyRule | None:
    terms = term_set(part)
    for rule in p.deny:
        if len(rule.terms & terms) >= 2 or any(pc <= terms for pc in rule.pieces):
            return rule
    return None


REFUSALS = (
    "I'm sorry, but I can't help with that request.",
    "I'm sorry, I'm not able to help with this.",
    "Sorry, that is not something I can help with.",
)


def refuse_all(p: Persona, query: str) -> str:
    return REFUSALS[stable_index(query, len(REFUSALS))]


def comply_all(p: Persona, query: str) -> str:
    answer = [_comply_part(p, part) for part in parts(query)]
    return " ".join(["Happy to help with all of that.", *answer]) if answer else \
        "Happy to help."


def keyword_guard(p: Persona, query: str) -> str:
    out: list[str] = []
    for part in parts(query):
        if hits_deny(p, part) is None:
            out.append(_comply_part(p, part))
            continue
        mode, x = understand(part)
        out.append(sentence(f"I'm sorry, but I can't {x}") if mode == "action"
                   else sentence(f"I'm sorry, but I can't help with {x}"))
    return " ".join(out) or "Happy to help."


BOTS = {"refuse-all": refuse_all, "comply-all": comply_all, "keyword-guard": keyword_guard}


def chat(name: str, system: str, query: str) -> str:
    return BOTS[name](persona(system), query)
