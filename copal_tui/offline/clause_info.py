"""What the generator needs to know about a clause: pieces, gate, route, wrong teams.

Heuristic, NOT a language model. A grounded clause only carries trigger, scope, effect and
source span, so a gate's prerequisite and a route's target are recovered by re-reading the
verbatim source span with the same cue parser the grounder used (falling back to the scope
when a real model grounded the clause in other words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from copal_tui.offline.phrasing import WH, focus, pieces, to_first
from copal_tui.offline.policy_parse import parse_gate, parse_route
from copal_tui.offline.text import cap_words, clean, content_words, squash, stable_index

_I = re.IGNORECASE
INFO_VERBS = frozenset("share discuss disclose tell give reveal explain describe provide".split())
_GERUND = {
    "arranging": "arrange", "giving": "give", "making": "make", "sharing": "share",
    "changing": "change", "issuing": "issue", "closing": "close", "using": "use",
    "taking": "take", "completing": "complete", "providing": "provide", "handling": "handle",
    "raising": "raise", "placing": "place", "creating": "create", "updating": "update",
    "removing": "remove", "scheduling": "schedule", "cancelling": "cancel", "helping": "help",
    "processing": "process", "discussing": "discuss", "booking": "book", "offering": "offer",
    "ordering": "order", "starting": "start", "sending": "send", "confirming": "confirm",
    "explaining": "explain", "arranging for": "arrange for", "issuing a": "issue a",
}


def base_verb(word: str) -> str:
    w = word.lower()
    if w in _GERUND:
        return _GERUND[w]
    return w[:-3] if w.endswith("ing") and len(w) > 5 else w


@dataclass(frozen=True)
class Clause:
    id: str
    effect: str
    trigger: str
    scope: str
    source_span: str

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Clause:
        # Escape sequences never travel from a clause into a generated query.
        return cls(
            id=str(raw.get("id") or "C?"),
            effect=str(raw.get("effect") or "OTHER"),
            trigger=squash(clean(raw.get("trigger"))),
            scope=squash(clean(raw.get("scope"))),
            source_span=squash(clean(raw.get("source_span"))),
        )


@dataclass(frozen=True)
class GateInfo:
    prerequisite: str  # third person, as the contract says it
    action: str  # the gated action, base form ("share booking details", "start an enrolment")
    info: bool  # the gated action is giving information (vs doing something)
    object: str  # what is gated ("booking details")


def gate_info(clause: Clause) -> GateInfo:
    parsed = parse_gate(clause.source_span) or parse_gate(clause.scope)
    if parsed is not None:
        pre, action = parsed[0].prerequisite, parsed[0].action
    elif " gated on " in clause.scope:
        action, pre = clause.scope.split(" gated on ", 1)
    else:
        action, pre = clause.scope, "the required identity details"
    words = action.strip(" ,.;").split()
    verb = base_verb(words[0]) if words else "share"
    rest = " ".join(words[1:])
    if words and words[0].lower() in ("discussing", "sharing") or verb in INFO_VERBS:
        return GateInfo(squash(pre).strip(" ,.;"), f"{verb} {rest}".strip(), True,
                        rest or action)
    return GateInfo(squash(pre).strip(" ,.;"), f"{verb} {rest}".strip(), False, action)


@dataclass(frozen=True)
class RouteInfo:
    target: str
    task: str  # the matter that must not be continued, as a noun phrase ("the claim")


_TASK_LEAD = re.compile(
    r"^(?:continue|try to|keep|attempt to)?\s*(?:with\s+)?(?:handling|processing|discussing|"
    r"arranging|dealing with|working on|troubleshooting|negotiat\w*|decid\w*|process|resolve|"
    r"complete|quote|arrange|handle|discuss|try to arrange|deal with)?\s*",
    _I,
)
_TASK_TAIL = re.compile(r"\s+(?:itself|in chat|in the chat|yourself|here|in person)\s*$", _I)
_PRONOUNS = ("", "it", "them", "this", "that", "him", "her")


def trigger_object(trigger: str) -> str:
    """A short noun phrase for what a trigger is about ("a payout", "a lost bag")."""
    t = re.sub(r"^(?:when|whenever|if|once)\s+", "", squash(trigger), flags=_I)
    m = re.search(r"\b(?:asks?|wants?|needs?|reports?|disputes?|requests?|says?|mentions?|"
                  r"describes?|has|is|raises?)\s+(?:to\s+\w+\s+|about\s+|for\s+|that\s+)?"
                  r"(?P<obj>.+)$", t, _I)
    obj = m.group("obj") if m else t
    obj = re.split(r",|\s+or\s+|\s+such as\s+|\s+because\s+|\s+after\s+|\s+with\s+", obj)[0]
    obj = to_first(cap_words(obj.strip(), 6))
    if obj.split() and obj.split()[0].lower() in WH:
        return "this"
    return obj or "this"


def route_info(clause: Clause) -> RouteInfo:
    parsed = parse_route(clause.source_span) or parse_route(clause.scope)
    if parsed is not None:
        target, task, obj = parsed[0].target, parsed[0].task, parsed[0].obj
    elif " handed to " in clause.scope:
        task, target = clause.scope.split(" handed to ", 1)
        obj = None
    else:
        target, task, obj = "the team named in the policy", clause.scope, None
    noun = _TASK_TAIL.sub("", squash(task).strip(" ,.;"))
    noun = _TASK_LEAD.sub("", noun, count=1).strip(" ,.;")
    if noun.lower() in _PRONOUNS or not content_words(noun):
        noun = obj if obj and obj.lower() not in _PRONOUNS else trigger_object(clause.trigger)
    return RouteInfo(target=squash(target).strip(" ,.;"), task=to_first(noun))


# ---------------------------------------------------------------- wrong teams and credentials

_TEAM = re.compile(
    r"\b(?:the\s+)?((?:[A-Z][\w+'-]*\s+(?:(?:&|and)\s+)?){0,4}(?:Team|Office|Desk|Center|Centre|"
    r"Line|Unit|Panel|Services|Relations|Success|Sales|Support|Department|Helpline))\b"
)
_TEAM_WORDS = frozenset("team office desk center centre line unit panel servic".split())
FALLBACK_TEAMS = ("the general enquiries team", "the complaints department", "the sales team")


def wrong_team(context: str, target: str, key: str) -> str:
    """A plausible team from the world context that is NOT the route target."""
    target_terms = set(content_words(target)) - _TEAM_WORDS
    seen: dict[str, None] = {}
    for m in _TEAM.finditer(context or ""):
        name = re.sub(r"^The\s+", "", squash(m.group(1)))
        terms = set(content_words(name)) - _TEAM_WORDS
        if terms and not terms & target_terms:
            team = re.search(r"(?:Team|Office|Desk|Center|Centre|Line|Unit|Panel|Department|"
                             r"Helpline)$", name)
            seen.setdefault(f"the {name}" if team else name, None)
    names = list(seen) or [t for t in FALLBACK_TEAMS if not set(content_words(t)) & target_terms]
    return names[stable_index(key, len(names))]


CREDENTIALS = ("my email address", "my phone number", "my postcode", "my full name",
               "my home address")


def wrong_credential(prerequisite: str, index: int) -> str:
    pre = set(content_words(prerequisite))
    options = [c for c in CREDENTIALS if not set(content_words(c)) & pre] or ["my name"]
    return options[index % len(options)]


def gated_focus(info: GateInfo, index: int) -> str:
    return focus(info.object, index, 2) if pieces(info.object) else info.object
