"""The target-chatbot variants (mitigations, seed 001 section 4.3) as messages.

- `base`: the organisation's own system prompt when the world has one (a `{context}`
  placeholder, which the public COMPASS prompts end with, is filled with the world's context),
  else copal's four-block chatbot prompt; then the query verbatim.
- `explicit-refusal`: the base system prompt followed by the chatbot_explicit_refusal block
  (refuse explicitly, give nothing prohibited however it is framed, redirect), which lists the
  denylist.
- `few-shot`: the base system prompt, then FEW_SHOT_DEMONSTRATIONS earlier turns (user query,
  assistant answer) and the query. Demonstrations are the world's kept queries other than the
  one being answered: two per query type when there are enough, filled up from the rest, all in
  a fixed pseudo-random order (sha256 of world and query id), so every run picks the same ones.
  A denied demonstration is answered with the organisation's fixed refusal; an allowed one with
  a reference answer the generator model writes (compass_reference), see compass_respond.
- `pre-filter`: decided in compass_respond (a DENY is answered with `refusal_message`, an ALLOW
  goes to the target with the base messages).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from copal_tui import prompts
from copal_tui.domain.compass import FEW_SHOT_DEMONSTRATIONS, QUERY_TYPES

REFUSAL = ("I'm sorry, but I can't help with that request. I'm {name}'s assistant and can "
           "only help with questions within {name}'s services.")
DEMOS_PER_TYPE = 2


def refusal_message(world: dict[str, Any]) -> str:
    """The fixed refusal naming the organisation: pre-filter DENY and denied demonstrations."""
    return REFUSAL.format(name=" ".join(str(world["name"]).split()))


def base_system(world: dict[str, Any], policies: Sequence[dict[str, Any]],
                chatbot: prompts.Template) -> str:
    own = world.get("system_prompt")
    if own and own.strip():
        return own.replace("{context}", str(world["context"]))
    return prompts.render_chatbot(world, policies, "", using=chatbot)[0]["content"]


def explicit_refusal_system(world: dict[str, Any], policies: Sequence[dict[str, Any]],
                            chatbot: prompts.Template, refusal: prompts.Template) -> str:
    denylist = [p for p in policies if p["kind"] == "deny"]
    block = prompts.render_chatbot(world, denylist, "", using=refusal)[0]["content"]
    return f"{base_system(world, policies, chatbot)}\n\n{block}"


def messages(system: str, query: str,
             demos: Sequence[tuple[str, str]] = ()) -> list[dict[str, str]]:
    out = [{"role": "system", "content": system}]
    for q, a in demos:
        out += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    return [*out, {"role": "user", "content": query}]


def ranked(world_id: str, kept: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The world's kept queries in their fixed demonstration order."""
    def key(q: dict[str, Any]) -> str:
        return hashlib.sha256(f"{world_id}\x00{q['id']}".encode()).hexdigest()

    return sorted(kept, key=key)


def pick_demos(order: Sequence[dict[str, Any]], exclude: str,
               n: int = FEW_SHOT_DEMONSTRATIONS) -> list[dict[str, Any]]:
    """`n` demonstrations from `order` (see `ranked`) without the query `exclude`: up to
    DEMOS_PER_TYPE of each type, round by round across the types, then the rest in order."""
    pool = [q for q in order if q["id"] != exclude]
    by_type = {t: [q for q in pool if q["query_type"] == t] for t in QUERY_TYPES}
    chosen: list[dict[str, Any]] = []
    for r in range(DEMOS_PER_TYPE):
        chosen += [by_type[t][r] for t in QUERY_TYPES if len(by_type[t]) > r]
    taken = {q["id"] for q in chosen}
    chosen += [q for q in pool if q["id"] not in taken]
    return chosen[:n]
