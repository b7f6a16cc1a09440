"""Offline engine answers for the COMPASS tasks shaped as the public COMPASS code's: the
organisation's base queries, the denied-edge variations of the short and long forms and the two
policy matchers. Deterministic heuristics, NOT a language model.

- base queries (`compass_generate_org`): per policy of the policy document,
  `queries_per_policy` queries from the base writer's templates (`compass_writer`), the slots'
  axes varied as copal's per-policy writer varies them, the policy's place among all the
  organisation's policies rotating them; the organisation's name is not in the input (the
  reference sends its context only), so a query tied to the organisation says "you";
- denied-edge variations: the request is the base query's own question (the input has no
  policy: the reference's prompt carries the base query and the strategies only), wrapped in the
  strategy's scheme of its form and padded to the form's word range with stock sentences;
- matchers: a policy matches when the query names or touches it (`compass_cues.strength`, the
  measure every offline COMPASS heuristic uses); the base matcher lists both lists' matches,
  the denylist matcher the denylist's only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from copal_tui.domain.compass import EDGE_FORMS, base_axes
from copal_tui.domain.compass_reference import TITLES
from copal_tui.offline.compass_cues import policy_cue, strength, text_terms
from copal_tui.offline.compass_writer import base_query, edge_text
from copal_tui.offline.text import sentences, squash

_LISTS = (("allowlist", "allow"), ("denylist", "deny"))
_STRATEGY = {title: name for name, title in TITLES.items()}
_LEAD = re.compile(r"^(?:(?:can|could|would|will) you (?:please )?(?:tell me|give me|explain|"
                   r"share|show me|let me know|confirm|promise)\s+)", re.IGNORECASE)


def listed(document: Any) -> list[dict[str, Any]]:
    """A policy document's policies as {id, kind, text}, allowlist first, in its order."""
    doc = document if isinstance(document, dict) else {}
    return [{"id": str(name), "kind": kind, "text": str(text)}
            for key, kind in _LISTS if isinstance(doc.get(key), dict)
            for name, text in doc[key].items()]


def generate_org(inp: dict[str, Any]) -> dict[str, Any]:
    per = inp.get("queries_per_policy")
    per = per if isinstance(per, int) and per > 0 else 10
    org = {"name": "", "context": str(inp.get("company_context") or "")}
    out: dict[str, dict[str, list[str]]] = {"allowlist_test_queries": {},
                                            "denylist_test_queries": {}}
    for place, p in enumerate(listed(inp.get("policy_document"))):
        c = policy_cue(p)
        queries = [base_query(c, org, {"slot": n, **base_axes(n, place)})
                   for n in range(1, per + 1)]
        key = "allowlist_test_queries" if p["kind"] == "allow" else "denylist_test_queries"
        out[key][p["id"]] = queries
    return out


def _request(base: str) -> str:
    """The base query's question, as a request without end punctuation: its longest sentence
    ending with a question mark (else its longest sentence)."""
    parts = sentences(squash(base)) or [base]
    asked = [s for s in parts if s.rstrip().endswith("?")] or parts
    text = max(asked, key=len).strip().rstrip("?.! ")
    return text[:1].lower() + text[1:]


def denied_variations(form: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    spec = EDGE_FORMS[form]

    def answer(inp: dict[str, Any]) -> dict[str, Any]:
        base = str(inp.get("base_query") or "")
        ask = _request(base)
        piece = _LEAD.sub("", ask) or ask
        variations = {}
        for s in inp.get("strategies") or []:
            title = str(s.get("title") if isinstance(s, dict) else s)
            strategy = _STRATEGY.get(title, "context_overflow")
            variations[title] = edge_text(ask, piece, {}, [], strategy, form,
                                          f"{base}|{strategy}|{form}", spec.min_words,
                                          spec.max_words)
        return {"original_query": base, "attack_variations": variations}

    return answer


def _matches(query: str, policies: list[dict[str, Any]]) -> list[dict[str, str]]:
    terms = text_terms(query)
    out = []
    for p in policies:
        level, hits = strength(policy_cue(p), terms)
        if level:
            out.append({"policy_name": p["id"], "policy_description": p["text"],
                        "match_reason": f"offline heuristic: the query "
                                        f"{'names' if level == 2 else 'touches'} it "
                                        f"({', '.join(sorted(hits))})"})
    return out


def match_policies(inp: dict[str, Any]) -> dict[str, Any]:
    query = str(inp.get("query") or "")
    policies = listed(inp.get("policy_document"))
    return {"query": query, "matching_policies": {
        key: _matches(query, [p for p in policies if p["kind"] == kind])
        for key, kind in (("allowlist_matches", "allow"), ("denylist_matches", "deny"))}}


def match_denylist(inp: dict[str, Any]) -> dict[str, Any]:
    query = str(inp.get("query") or "")
    deny = [p for p in listed(inp.get("policy_document")) if p["kind"] == "deny"]
    return {"query": query, "matching_out_policies": _matches(query, deny)}


HANDLERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "compass_generate_org": generate_org,
    "compass_generate_denied_short": denied_variations("short"),
    "compass_generate_denied_long": denied_variations("long"),
    "compass_verify_reference": match_policies,
    "compass_verify_denylist": match_denylist,
}
