"""Offline projection screening: is a single-policy projection valid? NOT a language model.

The three checks of the method's projection screening, by word overlap:

- another clause still in play: a neutralised clause whose trigger and scope both still show in
  the projection. Only words the kept clause does not also carry count, because composed clauses
  share their topic by construction (that is why they compose) and the projection must keep it;
  a trigger made only of shared words counts as present when those words are in the query;
- the target clause changed: the kept clause's trigger or scope no longer shows in the
  projection, or the projection shares no topic word with the composed query it came from;
- unnatural as a standalone request: too short or too long, template artefacts, or talk about
  clauses, prompts or tests.
"""

from __future__ import annotations

import re
from typing import Any

from copal_tui.offline.clause_info import Clause
from copal_tui.offline.text import clean, term_set, topic_words

_I = re.IGNORECASE
_ARTEFACT = re.compile(r"\$\{?[A-Za-z_]\w*|\{[a-z_]+\}|<[a-z_ ]+>|\bNone\b|\bnull\b|COPAL-TASK|"
                       r"\?\?|\s[,.?]|\b(\w+) \1\b", _I)
# A customer may well name a "policy" ("the 24-hour cancellation policy"); these words only
# appear when a writer leaks the construction into the message.
_META = re.compile(r"\b(?:clauses?|(?:system )?prompts?|test items?|this test|"
                   r"(?:your|the) instructions|neutrali[sz]e\w*|projection)\b", _I)
MIN_WORDS, MAX_WORDS = 6, 70


_HANDLING = re.compile(r",?\s*\b(?:gated on|handed to)\b", _I)


def _topic(text: str) -> frozenset[str]:
    return topic_words(clean(text))


def governed(c: Clause) -> frozenset[str]:
    """Topic words of what a customer asks for under a clause: the scope before its gate or
    handoff (a customer names the gated content, not the check; nobody names the team a ROUTE
    hands over to, so a route's trigger alone brings it into play)."""
    return frozenset() if c.effect == "ROUTE" else _topic(_HANDLING.split(c.scope)[0])


def still_in_play(other: Clause, keep: Clause, q_terms: frozenset[str]) -> list[str]:
    """The query words that keep `other` in play (trigger and scope both present), or []."""
    kept = _topic(f"{keep.trigger} {keep.scope}")
    trigger, scope = _topic(other.trigger), governed(other)
    own_trigger, own_scope = trigger - kept, scope - kept
    trigger_hits = (own_trigger or trigger) & q_terms
    if not trigger_hits:
        return []
    if own_scope:
        scope_hits = own_scope & q_terms
        return sorted(trigger_hits | scope_hits) if scope_hits else []
    # Nothing of the scope tells the two clauses apart (or it is a handoff): the trigger
    # decides, by words of its own only, since the projection must keep the shared topic.
    return sorted(own_trigger & q_terms)


def keeps_target(keep: Clause, q_terms: frozenset[str], query: str,
                 composed: str) -> tuple[bool, str]:
    trigger, scope = _topic(keep.trigger), governed(keep)
    if trigger and not trigger & q_terms:
        return False, f"the trigger of {keep.id} is gone"
    if scope and not scope & q_terms:
        return False, f"the scope of {keep.id} is no longer asked about"
    if not term_set(clean(query)) & term_set(clean(composed)):
        return False, "no topic word in common with the composed query"
    return True, f"{keep.id} still applies"


def naturalness(query: str) -> tuple[bool, float, list[str]]:
    words = len(query.split())
    problems = [m.group(0).strip() for m in _ARTEFACT.finditer(query)]
    problems += [m.group(0) for m in _META.finditer(query)]
    score = 1.0
    score -= 0.5 if not MIN_WORDS <= words <= MAX_WORDS else 0.0
    score -= 0.3 if problems else 0.0
    score -= 0.1 if not re.search(r"[?.!]\s*$", query) else 0.0
    natural = MIN_WORDS <= words <= MAX_WORDS and not problems
    return natural, round(max(0.0, score), 2), problems


def projection_screening(inp: dict[str, Any]) -> dict[str, Any]:
    keep_raw = inp.get("keep")
    if not isinstance(keep_raw, dict):
        raise ValueError("projection_screening input: 'keep' must be a clause object")
    keep = Clause.of(keep_raw)
    query = clean(str(inp.get("query") or ""))
    composed = clean(str(inp.get("composed_query") or ""))
    q_terms = topic_words(query)
    active: list[str] = []
    notes: list[str] = []
    for raw in inp.get("neutralise") or []:
        if not isinstance(raw, dict):
            continue
        other = Clause.of(raw)
        hits = still_in_play(other, keep, q_terms)
        if hits:
            active.append(other.id)
            notes.append(f"{other.id} still in play ({', '.join(hits[:4])})")
    kept, why = keeps_target(keep, q_terms, query, composed)
    natural, score, problems = naturalness(query)
    if not kept:
        notes.append(why)
    if not natural:
        notes.append("not natural as a standalone request"
                     + (f" ({', '.join(problems[:3])})" if problems else
                        f" ({len(query.split())} words)"))
    return {
        "still_active": active,
        "keeps_target": kept,
        "natural": natural,
        "naturalness": score,
        "reason": "offline heuristic: " + ("; ".join(notes) if notes else
                                           f"other clauses neutralised; {why}"),
    }
