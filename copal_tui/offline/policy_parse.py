"""Cue-phrase parsing of one policy sentence into effect segments, a gate and a route.

Heuristic, NOT a language model. Policies written with the usual cue phrases are read as:
PERMIT "may explain/help/describe", DISCLOSE "may share/disclose/tell", PROHIBIT "must not
give/never provide/do not offer", WITHHOLD "must not reveal/disclose/keep confidential",
REQUIRE_GATE "only after verifying X may ..." / "before ..., must confirm X", ROUTE "must
transfer/hand off/refer ... to <team>". Every span is an index range into the ORIGINAL text,
so a source span is always a verbatim substring. The grounder, the generator (which re-reads a
clause's source span to recover a gate's prerequisite or a route's target), the keyword-guard
bot and the full-policy judge all use this one parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from copal_tui.offline.text import ROLE_WORDS

_I = re.IGNORECASE | re.DOTALL

_COND = re.compile(
    r"^\s*(?P<lead>when|whenever|if|for|once|while|during|where|in case)\b\s*(?P<cond>.*?),\s+"
    r"(?=(?:the assistant|the bot|the chatbot|it|only after|only once|only if|never|do not)\b)",
    _I,
)
_ONLY_AFTER = re.compile(
    r"\bonly (?:after|once|when|if)\s+(?P<pre>.+?),?\s+(?P<lic>(?:may|can|should|will)\s+"
    r"(?:the assistant|it|the bot)\s+(?P<act>.+?))\s*\.?\s*$",
    _I,
)
_LIC_ONLY_AFTER = re.compile(
    r"\b(?P<lic>(?:may|can)\s+(?P<act>.+?))\s+only (?:after|once|when|if)\s+(?P<pre>.+?)\s*\.?\s*$",
    _I,
)
_BEFORE = re.compile(
    r"\bbefore\s+(?P<act>.+?),\s+(?:the assistant|it)\s+must\s+(?:first\s+|always\s+)?"
    r"(?:confirm|verify|check|ensure|establish|make sure)\s+(?:that\s+)?(?P<pre>.+?)\s*\.?\s*$",
    _I,
)
_CONFIRM_BEFORE = re.compile(
    r"\bmust\s+(?:first\s+)?(?:confirm|verify|check)\s+(?:that\s+)?(?P<pre>.+?)\s+before\s+"
    r"(?P<act>.+?)\s*\.?\s*$",
    _I,
)
_PRE_LEAD = re.compile(
    r"^(?:(?:successfully\s+)?(?:verifying|confirming|checking|validating|receiving|"
    r"having verified|obtaining)\s+(?:that\s+)?|(?:the|a|an)\s+[\w-]+\s+(?:provides|gives|"
    r"has provided|has given|confirms|supplies)\s+)",
    _I,
)
_ROUTE = re.compile(
    r"\bmust\s+(?:immediately\s+|always\s+|promptly\s+|instead\s+)?(?P<verb>transfer|refer|"
    r"hand\s+off|hand\s+over|hand|route|direct|escalate|pass|forward|connect|signpost|"
    r"redirect|send)\b\s*(?P<rest>.+?)\s*\.?\s*$",
    _I,
)
_ROUTE_TARGET = re.compile(
    r"^(?:(?P<obj>.+?)\s+)??(?:off\s+|over\s+|on\s+)?to\s+(?P<target>.+?)"
    r"(?=\s+and\s+(?:must\s+)?(?:not|never|do not)\b|\s+by\s+|\s+rather than\b|"
    r"\s+instead of\b|,|$)",
    _I,
)
_ROUTE_TASK = re.compile(r"\band\s+(?:must\s+)?(?:not|never|do not)\s+(?P<task>.+?)\s*\.?\s*$", _I)
_SEG_SPLIT = re.compile(
    r"(?:,\s*|\s+)(?:but|and|while|whereas|although|yet)\s+(?=(?:(?:it|the assistant)\s+)?"
    r"(?:must|may|can|should|never)\b)|;\s*",
    _I,
)
_LICENCE = re.compile(
    r"\b(?:may|can|is allowed to|is permitted to|is free to)\s+(?:also\s+)?(?P<verb>[a-z]+)\b",
    _I,
)
_WITHHOLD = re.compile(
    r"\b(?:(?:must|should|may)\s+(?:never|not)|never|do not|don't)\s+(?:ever\s+)?"
    r"(?P<verb>reveal|disclose|share|divulge|expose|release|leak|read out|pass on|confirm)\b",
    _I,
)
_KEEP = re.compile(
    r"\bmust\s+(?:always\s+)?keep\s+(?:(?P<how>confidential|private|secret)\s+)?", _I
)
_PROHIBIT = re.compile(
    r"\b(?:(?:must|should|may)\s+(?:never|not)|never|do not|don't)\s+(?:ever\s+)?"
    r"(?P<verb>[a-z]+)\b",
    _I,
)
_QUALIFIER = re.compile(
    r",\s+(?:even|including|unless|except|other than|which|whatever|such as|"
    r"only the team name)\b.*$",
    _I,
)
_INNER_VERB = re.compile(
    r"\s+and\s+(?:may\s+)?(?:explain|describe|compare|share|help(?:\s+them)?(?:\s+with)?|"
    r"tell(?:\s+them)?|walk\s+\w+(?:\s+\w+)?\s+through)\s+",
    _I,
)
_PRONOUN_OBJ = re.compile(r"^(?:them|it)(?=\s+(?:using|with|in|by|for|from|to)\b|\s*$)", _I)
_TOPIC = re.compile(r"\b(?:about|regarding|concerning)\s+(?P<topic>.+)$", _I)
_MORE_BANS = re.compile(
    r",?\s+(?:and|or)\s+(?:must\s+)?(?:not|never)\s+(?:give|provide|offer|make|reveal|"
    r"disclose|share)\s+",
    _I,
)
_LEAD_OBJ = re.compile(
    r"^(?:(?:them|him|her|(?:the\s+|a\s+|an\s+)?(?:" + "|".join(sorted(ROLE_WORDS)) + r"))\s+)?"
    r"(?:with|by|through|about|on)?\s*",
    _I,
)
_GERUND_LEAD = re.compile(r"^(?:explaining|describing|sharing|telling|helping|showing)\s+", _I)

DISCLOSE_VERBS = frozenset(
    "share disclose tell give read show confirm provide release state quote".split()
)
PERMIT_VERBS = frozenset(
    """explain describe help compare walk outline list discuss answer summarise summarize
    advise guide assist clarify suggest recommend point explore cover""".split()
)
WITHHOLD_HINT = frozenset("confidential private secret".split())


@dataclass(frozen=True)
class Segment:
    effect: str  # an Effect value or "OTHER"
    start: int
    end: int
    obj: str  # the governed object (scope), already cleaned
    confidence: float
    note: str | None = None


@dataclass(frozen=True)
class Gate:
    prerequisite: str  # what must be verified ("the passenger's last name and ...")
    action: str  # what the gate guards ("share booking details or make changes ...")


@dataclass(frozen=True)
class Route:
    target: str  # "the Baggage Resolution Center at 1-800-555-0177"
    task: str  # what must not be continued ("handling the claim")
    obj: str | None  # what is handed over ("the request"), when named


@dataclass(frozen=True)
class ParsedPolicy:
    text: str
    condition: str | None
    segments: tuple[Segment, ...] = field(default_factory=tuple)
    gate: Gate | None = None
    route: Route | None = None


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) past surrounding whitespace and a final full stop."""
    while start < end and text[start] in " \t\n,;":
        start += 1
    while end > start and text[end - 1] in " \t\n.;,":
        end -= 1
    return start, end


def condition_topic(condition: str | None) -> str | None:
    """What a condition is about: "a patient asks about clinic hours" -> "clinic hours"."""
    if not condition:
        return None
    m = _TOPIC.search(condition)
    return (m.group("topic") if m else condition).strip(" ,.;")


def clean_object(obj: str, topic: str | None = None) -> str:
    """The governed object of a cue verb, without addressee, qualifiers or a second verb."""
    obj = " ".join(obj.split())
    if topic and _PRONOUN_OBJ.match(obj):
        # "may describe them using ..." - "them" is what the condition is about.
        return topic
    obj = _MORE_BANS.sub(", ", obj)
    obj = _QUALIFIER.sub("", obj)
    obj = _LEAD_OBJ.sub("", obj, count=1)
    obj = re.sub(r"^(?:and|or)\s+[a-z]+\s+", "", obj, flags=_I)
    obj = _INNER_VERB.sub(" and ", obj)
    obj = _GERUND_LEAD.sub("", obj)
    return " ".join(obj.split()).strip(" ,.;:")


def _strip_pre(pre: str) -> str:
    return " ".join(_PRE_LEAD.sub("", pre.strip()).split()).strip(" ,.;")


def parse_gate(text: str) -> tuple[Gate, int, int, tuple[int, int] | None] | None:
    """(gate, span start, span end, licence span or None) when the text states a gate."""
    for rx in (_ONLY_AFTER, _LIC_ONLY_AFTER, _BEFORE, _CONFIRM_BEFORE):
        m = rx.search(text)
        if m is None:
            continue
        pre = _strip_pre(m.group("pre"))
        act = " ".join(m.group("act").split()).strip(" ,.;")
        if not pre or not act:
            continue
        start, end = _trim(text, m.start(), m.end())
        lic = None
        if "lic" in m.groupdict() and m.group("lic"):
            lic = _trim(text, m.start("lic"), m.end("lic"))
        return Gate(prerequisite=pre, action=act), start, end, lic
    return None


def parse_route(text: str) -> tuple[Route, int, int] | None:
    m = _ROUTE.search(text)
    if m is None:
        return None
    rest = m.group("rest")
    t = _ROUTE_TARGET.search(rest)
    if t is None:
        return None
    target = " ".join(t.group("target").split()).strip(" ,.;")
    obj = t.group("obj")
    obj = " ".join(obj.split()) if obj and obj.lower() not in ("them", "him", "her") else None
    task_m = _ROUTE_TASK.search(rest)
    task = " ".join(task_m.group("task").split()) if task_m else f"handling {obj or 'it'}"
    if not target:
        return None
    start, end = _trim(text, m.start(), m.end())
    return Route(target=target, task=task, obj=obj), start, end


def _classify(text: str, start: int, end: int, topic: str | None = None) -> Segment:
    seg = text[start:end]
    s, e = _trim(text, start, end)
    m = _KEEP.search(seg)
    if m is not None:
        obj = seg[m.end() :]
        if not m.group("how"):
            obj = re.sub(r"\s+(?:confidential|private|secret)\b.*$", "", obj, flags=_I)
        return Segment("WITHHOLD", s, e, clean_object(obj), 0.9)
    m = _WITHHOLD.search(seg)
    if m is not None:
        return Segment("WITHHOLD", s, e, clean_object(seg[m.end() :]), 0.9)
    m = _PROHIBIT.search(seg)
    if m is not None:
        verb = m.group("verb").lower()
        known = verb in ("give", "provide", "offer", "make", "promise", "predict", "guess",
                         "speculate", "recommend", "tell", "advise", "suggest", "estimate")
        obj = seg[m.end() :] if verb in ("give", "provide", "offer", "make") else seg[m.start(
            "verb") :]
        return Segment("PROHIBIT", s, e, clean_object(obj), 0.88 if known else 0.72)
    m = _LICENCE.search(seg)
    if m is not None:
        verb = m.group("verb").lower()
        effect = ("DISCLOSE" if verb in DISCLOSE_VERBS else
                  "PERMIT" if verb in PERMIT_VERBS else None)
        if effect is not None:
            return Segment(effect, s, e, clean_object(seg[m.end() :], topic), 0.9)
        return Segment("PERMIT", s, e, clean_object(seg[m.start("verb") :]), 0.6)
    return Segment("OTHER", s, e, " ".join(seg.split()).strip(" .,;"), 0.3,
                   "offline heuristic: no permit, disclose, prohibit, withhold, gate or route "
                   "cue phrase found")


def _licence_effect(action: str) -> str | None:
    verb = action.split()[0].lower() if action.split() else ""
    if verb in DISCLOSE_VERBS or verb == "discuss":
        return "DISCLOSE"
    if verb in PERMIT_VERBS:
        return "PERMIT"
    return None


def _strip_verb(action: str) -> str:
    parts = action.split(None, 1)
    return clean_object(parts[1]) if len(parts) == 2 else action


@lru_cache(maxsize=4096)
def parse_policy(text: str) -> ParsedPolicy:
    """Read one policy text. Never raises: no cue at all gives a single OTHER segment."""
    cond_m = _COND.match(text)
    condition = " ".join(cond_m.group("cond").split()) if cond_m else None
    main = cond_m.end() if cond_m else 0

    gate = parse_gate(text)
    if gate is not None:
        g, gs, ge, lic = gate
        segs = [Segment("REQUIRE_GATE", gs, ge, f"{g.action}, gated on {g.prerequisite}", 0.9)]
        effect = _licence_effect(g.action)
        if lic is not None and effect is not None:
            # "Only after verifying B may the assistant share A" also licenses A (once gated).
            segs.append(Segment(effect, lic[0], lic[1], _strip_verb(g.action), 0.6))
        return ParsedPolicy(text, condition, tuple(segs), gate=g)

    route = parse_route(text)
    if route is not None:
        r, rs, re_ = route
        scope = f"{r.task}, handed to {r.target}"
        return ParsedPolicy(text, condition, (Segment("ROUTE", rs, re_, scope, 0.9),), route=r)

    bounds = [main]
    for m in _SEG_SPLIT.finditer(text, main):
        bounds.append(m.start())
        bounds.append(m.end())
    bounds.append(len(text))
    topic = condition_topic(condition)
    raw = [_classify(text, bounds[i], bounds[i + 1], topic) for i in range(0, len(bounds), 2)]
    raw = [s for s in raw if s.end > s.start]
    merged: list[Segment] = []
    for seg in raw:
        if merged and merged[-1].effect == seg.effect:
            prev = merged[-1]
            obj = f"{prev.obj} and {seg.obj}" if seg.obj else prev.obj
            merged[-1] = Segment(prev.effect, prev.start, seg.end, obj,
                                 max(prev.confidence, seg.confidence), prev.note)
        else:
            merged.append(seg)
    if len(merged) > 1:
        merged = [s for s in merged if s.effect != "OTHER"] or merged[:1]
    if not merged:
        s, e = _trim(text, 0, len(text))
        merged = [_classify(text, s, max(e, s))]
    return ParsedPolicy(text, condition, tuple(merged))
