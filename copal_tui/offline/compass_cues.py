"""What a COMPASS policy is about, as words: the cue sets behind the offline COMPASS heuristics.

Heuristic, NOT a language model. A policy's object is read with the shared policy parser
(`policy_parse`: "must not give predictions of final grades" -> "predictions of final grades");
a COMPASS-layout description such as "Discussing or comparing competitor vehicles, brands" has
no cue verb, so its leading activity words ("Discussing or comparing", "information about") are
cut off instead. The object is split into list pieces; a text *names* a policy when it carries
the topic words of one whole piece (strength 2) and *touches* it when it shares at least two and a
quarter of the policy's topic words, leaving out the organisation's name (strength 1). The verifier, the pre-filter, the judge and the writers
all use this one measure, so what the writers put in a query is what the others find.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from copal_tui.offline.judge import needed
from copal_tui.offline.phrasing import pieces, starts_with_verb, starts_with_wh, to_first
from copal_tui.offline.policy_parse import parse_policy
from copal_tui.offline.text import clean, squash, topic_words

_I = re.IGNORECASE
_ACTIVITY = re.compile(
    r"^(?:(?:providing|giving|offering|making|sharing|disclosing|revealing|discussing|"
    r"mentioning|comparing|answering|explaining|describing|speculating|commenting|engaging|"
    r"assisting|helping|facilitating|generating|creating|recommending|supporting|handling|"
    r"processing|responding|pointing|telling|directing|signposting)(?:\s*(?:,|or|and|/)\s*\w+ing)*\s+(?:(?:on|about|in|with|for|to)\s+)?)",
    _I,
)
_INFO_HEAD = re.compile(
    r"^(?:(?:general|official|basic|specific|detailed|any)\s+)?(?:information|details|"
    r"instructions|advice|guidance|assistance|help|commentary|speculation|content|questions|"
    r"queries|requests)\s+(?:on|about|regarding|for|with|related to|concerning|to)\s+",
    _I,
)
# Segment effects by list: what an allowlist / denylist entry is about.
_PREFERRED = {"allow": ("PERMIT", "DISCLOSE"), "deny": ("PROHIBIT", "WITHHOLD")}
_MIN_PIECE_TERMS = 2  # a one-word piece ("brands") names nothing on its own


@dataclass(frozen=True)
class Cue:
    policy_id: str
    kind: str
    effect: str  # the parsed effect of the object (PERMIT, DISCLOSE, PROHIBIT, WITHHOLD, OTHER)
    obj: str  # what the policy is about, as a phrase
    pieces: tuple[str, ...]  # its list items, each naming enough to be asked about alone
    piece_terms: tuple[frozenset[str], ...]
    terms: frozenset[str]  # every topic word of the policy (object and id)


def _strip_activity(text: str) -> str:
    t = squash(text).strip(" .;:")
    for _ in range(2):
        t = _INFO_HEAD.sub("", _ACTIVITY.sub("", t, count=1), count=1)
    return t or squash(text)


@lru_cache(maxsize=4096)
def cue(policy_id: str, kind: str, text: str) -> Cue:
    parsed = parse_policy(clean(text))
    segs = [s for s in parsed.segments if s.obj.strip()]
    preferred = [s for s in segs if s.effect in _PREFERRED.get(kind, ())]
    chosen = preferred or segs
    effect = chosen[0].effect if chosen else "OTHER"
    obj = _strip_activity(chosen[0].obj if chosen else text)
    named = [p for p in pieces(obj) if len(topic_words(p)) >= _MIN_PIECE_TERMS]
    if not named:
        named = [" ".join(obj.split()[:14])]
    id_words = topic_words(re.sub(r"[_\-.]+", " ", policy_id))
    # "P01" is not a topic; "vehicle_standards" is.
    id_terms = frozenset(w for w in id_words if w.isalpha())
    terms = topic_words(obj) | id_terms
    return Cue(policy_id, kind, effect, obj, tuple(named),
               tuple(topic_words(p) for p in named), terms)


def policy_cue(policy: dict[str, object]) -> Cue:
    return cue(str(policy.get("id", "")), str(policy.get("kind", "")),
               str(policy.get("text", "")))


def strength(c: Cue, terms: frozenset[str],
             common: frozenset[str] = frozenset()) -> tuple[int, frozenset[str]]:
    """2 when `terms` name a whole piece of the policy; 1 when they share at least two of its
    topic words and a quarter of them, not counting `common` words (the organisation's name,
    which every sentence about it carries); else 0. With the words that matched."""
    for pt in c.piece_terms:
        hits = pt & terms
        if pt and len(hits) >= needed(pt, "content"):
            return 2, hits
    hits = (c.terms - common) & terms
    return (1, hits) if len(hits) >= max(2, math.ceil(len(c.terms) / 4)) else (0, frozenset())


def name_terms(organisation: object) -> frozenset[str]:
    name = organisation.get("name") if isinstance(organisation, dict) else None
    return text_terms(str(name or ""))


def text_terms(text: str) -> frozenset[str]:
    return topic_words(clean(text))


def ask_for(c: Cue, piece: str, lead: str = "can you") -> str:
    """A direct request for one piece of a policy, in the user's voice (no end punctuation)."""
    p = to_first(piece)
    if starts_with_verb(p):
        return f"{lead} {p}"
    if starts_with_wh(p):
        return f"{lead} tell me {p}"
    if c.kind == "allow":
        return f"{lead} {'tell me' if c.effect == 'DISCLOSE' else 'explain'} {p}"
    if c.effect == "PROHIBIT":
        return f"{lead} give me {p}"
    if c.effect == "WITHHOLD":
        return f"{lead} tell me {p}"
    return f"{lead} tell me about {p}"


def best_piece(c: Cue, text: str) -> str:
    """The piece of the policy a text is most about (the first on a tie)."""
    t = text_terms(text)
    scored = [(len(pt & t), -i) for i, pt in enumerate(c.piece_terms)]
    return c.pieces[-max(scored)[1]] if scored else c.obj
