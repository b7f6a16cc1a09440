"""Offline generation beyond one anchor pair: the extra clause of a three-clause composition, and
the non-interacting controls. Heuristic, NOT a language model.

A facet template is written from the composition's anchor pair (generator.py); every other
clause adds one short ask to the query and its own contract items, by effect, so that the query
still activates every clause and stays diagnostic both ways:
- PERMIT/DISCLOSE: asks for one licensed piece -> a required content item;
- PROHIBIT/WITHHOLD: asks for one restricted piece -> a forbidden content item;
- REQUIRE_GATE: asks for the gated part -> a required gate item, and the gated part given
  before verification forbidden;
- ROUTE: raises the routed situation -> a required route item, and handling it in the chat
  forbidden.
A control (licensing clauses only) asks for one piece of each clause; its contract requires
each piece and forbids nothing: no clause restricts, gates or routes another.
"""

from __future__ import annotations

import re
from typing import Any

from copal_tui.offline.clause_info import (
    Clause,
    gate_info,
    gated_focus,
    route_info,
    trigger_object,
)
from copal_tui.offline.phrasing import (
    ask_info,
    ask_restricted,
    conjugate,
    finish,
    focus,
    forbids,
    pieces,
    provides,
    scenario,
    third,
    to_first,
)
from copal_tui.offline.text import cap_words, topic_words

# An extra ask names at most this many words of its clause's scope: the query has to stay a
# message a customer would send (screening's naturalness limit grows by 15 words per clause).
EXTRA_WORDS = 10
OPENERS = ("", "Hi, ", "Hello. ", "Quick one: ")
# Each lead carries its own punctuation: "And, can you" reads wrong.
LEADS = ("Also,", "And", "Separately,")


def _item(kind_id: str, text: str, kind: str, clause: Clause) -> dict[str, Any]:
    return {"id": kind_id, "text": " ".join(text.split()), "kind": kind, "clause_id": clause.id}


def piece(clause: Clause, i: int, width: int = 1) -> str:
    """The scope piece an ask names: rotated by `i`, skipping pieces without a topic word
    ("start time", "any details"), which would neither read as a request nor activate the
    clause; with none, the first piece about what the trigger is about."""
    for j in range(max(1, len(pieces(clause.scope)))):
        found = cap_words(focus(clause.scope, i + j, width), EXTRA_WORDS)
        if topic_words(found):
            return found
    return cap_words(f"{focus(clause.scope, i, width)} about {trigger_object(clause.trigger)}",
                     EXTRA_WORDS)


def _ended(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def extra_part(clause: Clause, i: int) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]],
                                                  str | None, str | None]:
    """(text to append, required (text, kind), forbidden (text, kind), gate, route)."""
    lead = LEADS[i % len(LEADS)]
    eff = clause.effect
    if eff in ("PERMIT", "DISCLOSE"):
        phrase = piece(clause, i + 1)
        return (f"{lead} {ask_info(phrase, eff, i + 1)}?", [(provides(phrase), "content")], [],
                None, None)
    if eff in ("PROHIBIT", "WITHHOLD"):
        phrase = piece(clause, i)
        return (f"{lead} {ask_restricted(phrase, eff, 'can you')}?", [],
                [(forbids(phrase, eff, None), "content")], None, None)
    if eff == "REQUIRE_GATE":
        g = gate_info(clause)
        af = cap_words(gated_focus(g, i) if g.info else g.action, EXTRA_WORDS)
        ask = f"can you tell me {to_first(af)}" if g.info else f"can you {to_first(af)} for me"
        pre = third(g.prerequisite)
        check = "confirm that" if re.search(r"\b(?:is|are|has|have|will|holds|was)\b", pre) \
            else "verify"
        gated = f"giving {af}" if g.info else f"going ahead ({af})"
        bad = (f"Provides {af} before verification", "content") if g.info else \
            (f"{conjugate(af)} before verification", "action")
        return (f"{lead} {ask}?", [(f"Asks the user to {check} {pre} before {gated}", "gate")],
                [bad], pre, None)
    r = route_info(clause)
    scen = _ended(cap_words(scenario(clause.trigger), 18))
    return (f"{scen} Can you deal with {r.task} here as well?",
            [(f"Directs the user to {r.target}", "route")],
            [(f"Handles {r.task} in the chat instead of transferring", "action")], None, r.target)


def add_extras(variant: dict[str, Any], extras: list[Clause], i: int) -> dict[str, Any]:
    """The variant with one ask and its contract items per extra clause (ids continue)."""
    if not extras:
        return variant
    query, required, forbidden = variant["query"], list(variant["required"]), \
        list(variant["forbidden"])
    gate, route = variant.get("gate"), variant.get("route")
    for k, clause in enumerate(extras):
        text, req, forb, g, r = extra_part(clause, i + k)
        query = f"{query} {text}"
        required += [_item(f"R{len(required) + 1}", t, kind, clause) for t, kind in req]
        forbidden += [_item(f"F{len(forbidden) + 1}", t, kind, clause) for t, kind in forb]
        gate, route = gate or g, route or r
    trap = variant["trap"] + "; the extra clause adds its own ask" + \
        ("s" if len(extras) > 1 else "")
    return {**variant, "query": finish(query), "required": required, "forbidden": forbidden,
            "gate": gate, "route": route, "trap": trap}


def control(clauses: list[Clause], n: int) -> dict[str, Any]:
    """Non-interacting control variants: one licensed piece of every clause, nothing forbidden."""
    variants = []
    for i in range(n):
        first = clauses[i % len(clauses)]
        parts = [OPENERS[i % len(OPENERS)] + scenario(first.trigger)]
        required = []
        for k, c in enumerate(clauses):
            phrase = piece(c, i + k, 2)
            ask = ask_info(phrase, c.effect, i + k)
            parts.append(f"{ask}?" if k == 0 else f"{LEADS[(i + k) % len(LEADS)]} {ask}?")
            required.append(_item(f"R{k + 1}", provides(phrase), "content", c))
        variants.append({
            "query": finish(" ".join(parts)),
            "trap": "offline template (control): independent licensed parts; no clause "
                    "restricts, gates or routes another, so answering every part is correct",
            "required": required, "forbidden": [], "gate": None, "route": None,
        })
    return {"variants": variants}
