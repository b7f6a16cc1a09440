"""Offline engine answers for the CompliBench-style dialogue tasks: the per-turn judge (full
and binary) and the four steps of the violation-variant loop. Deterministic heuristics, NOT a
language model; every reason starts "offline heuristic:".

- judge: for each assistant turn, the Category 2 or 3 guideline (the prompt rules Category 1
  out) whose text shares the most content words with the turn and the user turn before it; a
  workflow (Category 2) moves through its phases in order, so an intent's candidates are its
  current phase and the next one (phase 1 to start); ties go to the next phase of the workflow
  in progress, then to document order. The phase is answered as an integer, -1 for Category 3.
  The turn is a violation when it misses one of the chosen guideline's required cues
  (`dialogue_cues`: "ask for X and Y" with Y nowhere in the reply). Its accuracy is whatever it
  is; nothing here is tuned to a sample set.
- variant / refine: drop one required cue the original reply shows (round r takes the r-th such
  cue, cycling) and forbid it ("... Do not ask for Y."), so the two guidelines exclude each other;
- regenerate: the original reply without the clause that carries the forbidden cue's words;
- content judge: changed when the two replies' content words differ (wording order does not);
- compliance judge: the judge's missing-cue check against the original guideline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from copal_tui.domain.dialogue import CATEGORIES, NO_PHASE, norm_category, norm_phase
from copal_tui.offline.dialogue_cues import (
    drop_item,
    droppable_items,
    dropped_words,
    missing_items,
    remove_words,
)
from copal_tui.offline.text import clean, content_words


@dataclass(frozen=True)
class Entry:
    position: int
    category: int
    key: str
    phase: int | None
    text: str
    words: frozenset[str]


def document(doc: Any) -> list[Entry]:
    """The guideline document of the public layout as a flat list (unreadable parts skipped)."""
    out: list[Entry] = []
    for name, entries in (doc or {}).items() if isinstance(doc, dict) else ():
        try:
            cat = norm_category(name)
        except ValueError:
            continue
        if cat is None or not isinstance(entries, dict):
            continue
        for key, value in entries.items():
            rows = value.items() if cat == 2 and isinstance(value, dict) else [(None, value)]
            for phase, text in rows:
                try:
                    n = norm_phase(phase) if cat == 2 else None
                except ValueError:
                    continue
                t = clean(str(text))
                out.append(Entry(len(out), cat, str(key), n, t, frozenset(content_words(t))))
    return out


def _turns(value: Any) -> list[dict[str, Any]]:
    return [t for t in value or [] if isinstance(t, dict) and isinstance(t.get("turn_index"), int)]


def _choose(entries: list[Entry], words: frozenset[str], progress: dict[str, int],
            active: str | None) -> tuple[Entry, frozenset[str]] | None:
    best: tuple[tuple[int, int, int], Entry] | None = None
    for e in entries:
        if e.category == 1:
            continue  # the judge chooses only from Category 2 or 3
        if e.category == 2:
            done = progress.get(e.key, 0)
            if e.phase is None or e.phase not in (done, done + 1):
                continue  # phases in order: stay in the current one or move to the next
            continuing = int(e.key == active and e.phase == done + 1)
        else:
            continuing = 0
        rank = (len(e.words & words), continuing, -e.position)
        if best is None or rank > best[0]:
            best = (rank, e)
    return None if best is None else (best[1], best[1].words & words)


def _verdicts(inp: dict[str, Any], *, binary: bool) -> dict[str, Any]:
    entries = document(inp.get("guidelines"))
    progress: dict[str, int] = {}
    active: str | None = None
    last_user = ""
    rows = []
    for t in _turns(inp.get("conversation")):
        content = clean(str(t.get("content") or ""))
        if t.get("role") != "assistant":
            last_user = content if t.get("role") == "user" else last_user
            continue
        picked = _choose(entries, frozenset(content_words(f"{last_user} {content}")), progress,
                         active)
        if picked is None:
            rows.append({"turn_index": t["turn_index"], "guideline_used": {
                "is_violation": False, "judge_reason": "offline heuristic: no guideline "
                "in the document"}})
            continue
        e, shared = picked
        if e.category == 2 and e.phase is not None:
            progress[e.key] = e.phase
            active = e.key
        gaps = missing_items(e.text, content)
        why = (f"misses the required cue(s) {'; '.join(repr(i.phrase) for i in gaps)}"
               if gaps else "shows every required cue")
        used: dict[str, Any] = {
            "is_violation": bool(gaps),
            "judge_reason": f"offline heuristic: chose {e.key}"
                            f"{'' if e.phase is None else f' Phase {e.phase}'} (shared words: "
                            f"{', '.join(sorted(shared)) or 'none'}); the reply {why}"}
        if not binary:
            used.update(guidance_category=CATEGORIES[e.category], guidance_key=e.key,
                        guideline_phase=NO_PHASE if e.phase is None else e.phase)
        rows.append({"turn_index": t["turn_index"], "guideline_used": used})
    if not rows:  # the schema wants at least one verdict; a conversation without replies
        rows.append({"turn_index": 0, "guideline_used": {
            "is_violation": False, "judge_reason": "offline heuristic: no assistant turn"}})
    return {"turn_guidelines": rows}


def judge(inp: dict[str, Any]) -> dict[str, Any]:
    return _verdicts(inp, binary=False)


def judge_binary(inp: dict[str, Any]) -> dict[str, Any]:
    return _verdicts(inp, binary=True)


# ------------------------------------------------------------------ violation variants


def _guideline_text(inp: dict[str, Any]) -> str:
    g = inp.get("guideline")
    return clean(str(g.get("text") or "")) if isinstance(g, dict) else clean(str(g or ""))


def _modify(inp: dict[str, Any], round_no: int) -> dict[str, Any]:
    text = _guideline_text(inp)
    shown = droppable_items(text, str(inp.get("original_reply") or ""))
    if not shown:
        return {"modified_guideline": f"{text} Do not follow this step at this turn.",
                "change": "offline heuristic: the reply shows none of the guideline's required "
                          "cues, so there was no cue to drop"}
    item = shown[(round_no - 1) % len(shown)]
    return {"modified_guideline": drop_item(text, item),
            "change": f"offline heuristic: drops the required cue {item.phrase!r} "
                      f"({item.verb}) and forbids it"}


def variant(inp: dict[str, Any]) -> dict[str, Any]:
    return _modify(inp, 1)


def refine(inp: dict[str, Any]) -> dict[str, Any]:
    r = inp.get("round")
    return _modify(inp, r if isinstance(r, int) and r >= 1 else 2)


def regenerate(inp: dict[str, Any]) -> dict[str, Any]:
    reply = clean(str(inp.get("original_reply") or "")).strip() or "Thank you."
    words = dropped_words(_guideline_text(inp))
    return {"reply": remove_words(reply, words) if words else reply}


def content_judge(inp: dict[str, Any]) -> dict[str, Any]:
    before = frozenset(content_words(clean(str(inp.get("original_reply") or ""))))
    after = frozenset(content_words(clean(str(inp.get("new_reply") or ""))))
    gone, added = sorted(before - after), sorted(after - before)
    if not gone and not added:
        return {"behaviour_changed": False,
                "reason": "offline heuristic: both replies carry the same content words"}
    return {"behaviour_changed": True,
            "reason": f"offline heuristic: content words dropped: {', '.join(gone) or '-'}; "
                      f"added: {', '.join(added) or '-'}"}


def compliance_judge(inp: dict[str, Any]) -> dict[str, Any]:
    idx = inp.get("turn_index")
    turns = _turns(inp.get("conversation"))
    reply = next((str(t.get("content") or "") for t in turns if t["turn_index"] == idx),
                 str(turns[-1].get("content") or "") if turns else "")
    gaps = missing_items(_guideline_text(inp), reply)
    if gaps:
        return {"violates": True, "reason": "offline heuristic: the reply misses the required "
                f"cue(s) {'; '.join(repr(i.phrase) for i in gaps)}"}
    return {"violates": False,
            "reason": "offline heuristic: the reply shows every required cue of the guideline"}


HANDLERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "dialogue_judge": judge,
    "dialogue_judge_copal": judge,
    "dialogue_judge_binary": judge_binary,
    "dialogue_variant": variant,
    "dialogue_regenerate": regenerate,
    "dialogue_content_judge": content_judge,
    "dialogue_compliance_judge": compliance_judge,
    "dialogue_refine": refine,
}
