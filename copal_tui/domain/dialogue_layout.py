"""The dialogue judge's input as CompliBench's judge sends it: the guideline document and the
conversation as text blocks (`convjudge/common/formatting.py` `format_guidelines` and
`format_conversation`, restated), and those blocks read back into data for the offline engine.

The document travels as `assistant_guidelines` does in the public layout: a mapping from the
category title to {key: text} (Categories 1 and 3) or {intent: {"Phase N": text}} (Category 2),
in document order. `document_of` builds it from stored entries with each workflow's phases in
their numeric order (a string order would put Phase 10 before Phase 2).

`read_guideline_block` and `read_conversation_block` invert the two formatters for the
offline heuristics: exactly, for any text that does not itself hold a line laid out like a
block's own lines ("- Key: ", "  Phase 3 — ", "12 | ASSISTANT: "); such a line in a guideline
or a reply is read as a new entry or turn. Pure functions: no SQL, UI or models.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The category titles the reference falls back on when a document names none.
DEFAULT_TITLES = {"cat1": "Category 1: Universal Compliance",
                  "cat2": "Category 2: Intent Triggered Guidelines",
                  "cat3": "Category 3: Condition Triggered Guidelines"}
_TITLE_OF = {1: "cat1", 2: "cat2", 3: "cat3"}
_DIGITS = re.compile(r"(\d+)")

Document = dict[str, dict[str, Any]]


def category_titles(doc: Mapping[str, Any]) -> dict[str, str]:
    """The reference's `infer_category_titles`: the document's own title of each category."""
    titles = dict(DEFAULT_TITLES)
    for key in doc:
        low = key.lower()
        for n in (1, 2, 3):
            if low.startswith(f"category {n}"):
                titles[_TITLE_OF[n]] = key
    return titles


def _step(value: object) -> str:
    return "; ".join(str(x) for x in value) if isinstance(value, list) else str(value)


def guideline_block(doc: Mapping[str, Any]) -> str:
    """The reference's `format_guidelines` of a document with its own category titles."""
    titles = category_titles(doc)
    cat1, cat2, cat3 = (doc.get(titles[c], {}) or {} for c in ("cat1", "cat2", "cat3"))
    lines = [f"{titles['cat1'].upper()} (Keys must match exactly)"]
    lines += [f"- Key: {key}\n  Text: {value}" for key, value in cat1.items()]
    lines += ["", f"{titles['cat2'].upper()} (Keys are intents; include Phase number)"]
    if isinstance(cat2, dict):
        for intent, phases in cat2.items():
            lines.append(f"- Intent Key: {intent}")
            if isinstance(phases, dict):
                for idx, (phase_key, step) in enumerate(phases.items(), 1):
                    match = _DIGITS.search(str(phase_key))
                    lines.append(f"  Phase {int(match.group(1)) if match else idx} — "
                                 f"{_step(step)}")
            elif isinstance(phases, list):
                lines += [f"  Phase {idx} — {_step(step)}" for idx, step in enumerate(phases, 1)]
    lines += ["", f"{titles['cat3'].upper()} (Keys must match exactly)"]
    lines += [f"- Key: {key}\n  Text: {value}" for key, value in cat3.items()]
    return "\n".join(lines)


def conversation_block(turns: Iterable[Mapping[str, Any]]) -> str:
    """The reference's `format_conversation`: one `index | ROLE: content` line per message."""
    return "\n".join(f"{t.get('turn_index')} | {str(t.get('role', '')).upper()}: "
                     f"{t.get('content', '')}" for t in turns)


def document_of(entries: Iterable[tuple[int, str, int | None, str]]) -> Document:
    """A stored guideline document, entries as (category, key, phase, text) in document order,
    as the public layout writes it; each intent's phases in numeric order (stable, so entries
    with the same or no number keep their document order)."""
    doc: Document = {}
    phased: dict[str, list[tuple[int, str, str]]] = {}
    for category, key, phase, text in entries:
        section = doc.setdefault(DEFAULT_TITLES[_TITLE_OF[category]], {})
        if category == 2:
            steps = phased.setdefault(key, [])
            steps.append((phase if phase is not None else 0,
                          f"Phase {phase}" if phase is not None else "Phase ?", text))
            section[key] = steps
        else:
            section[key] = text
    for section in doc.values():
        for key, value in section.items():
            if isinstance(value, list):
                section[key] = {name: text for _n, name, text in sorted(value,
                                                                         key=lambda s: s[0])}
    return doc


# ------------------------------------------------------------------ reading the blocks back

_HEADER = re.compile(r"^CATEGORY ([123])\b.* \((?:Keys must match exactly|Keys are intents; "
                     r"include Phase number)\)$")
_KEY = re.compile(r"^- Key: (.*)$")
_INTENT = re.compile(r"^- Intent Key: (.*)$")
_PHASE = re.compile(r"^  Phase (\d+) — (.*)$")
_TURN = re.compile(r"^(-?\d+|None) \| ([A-Z_]+): (.*)$")


def read_guideline_block(text: str) -> Document:
    """A `guideline_block` read back: {title: {key: text or {"Phase N": text}}}, the titles
    as the reference's defaults (the block prints them upper-cased)."""
    doc: Document = {}
    section: dict[str, Any] | None = None
    number = 0
    target: tuple[dict[str, Any], str] | None = None  # where continuation lines go
    key: str | None = None
    for line in text.split("\n"):
        if m := _HEADER.match(line):
            if target is not None:  # the blank line before a header separates, it is no text
                where, name = target
                where[name] = where[name].removesuffix("\n")
            number = int(m.group(1))
            section = doc.setdefault(DEFAULT_TITLES[_TITLE_OF[number]], {})
            target = key = None
        elif section is None:
            continue
        elif number != 2 and (m := _KEY.match(line)):
            key = m.group(1)
            section[key] = ""
            target = None
        elif number != 2 and key is not None and target is None and line.startswith("  Text: "):
            section[key] = line[len("  Text: "):]
            target = (section, key)
        elif number == 2 and (m := _INTENT.match(line)):
            key = m.group(1)
            section[key] = {}
            target = None
        elif number == 2 and key is not None and (m := _PHASE.match(line)):
            phases = section[key]
            name = f"Phase {m.group(1)}"
            phases[name] = m.group(2)
            target = (phases, name)
        elif target is not None:
            where, name = target
            where[name] += "\n" + line
    return doc


def read_conversation_block(text: str) -> list[dict[str, Any]]:
    """A `conversation_block` read back: [{turn_index, role, content}], a line that does not
    start a message continuing the one before it."""
    turns: list[dict[str, Any]] = []
    for line in text.split("\n"):
        m = _TURN.match(line)
        if m:
            index = m.group(1)
            turns.append({"turn_index": None if index == "None" else int(index),
                          "role": m.group(2).lower(), "content": m.group(3)})
        elif turns:
            turns[-1]["content"] += "\n" + line
    return turns



@dataclass(frozen=True)
class JudgeLayout:
    """The judge's user message as text blocks (a prompt layout, see `copal_tui.prompts`):
    the task input {guidelines: document, conversation: [turn], conversation_id} as the
    template's placeholder values, and back. The reference's message ends with a newline."""

    fields: tuple[str, ...] = ("guidelines", "conversation", "conversation_id")
    end: str = "\n"

    def values(self, input: Mapping[str, Any]) -> dict[str, str]:
        return {"guidelines": guideline_block(input["guidelines"]),
                "conversation": conversation_block(input["conversation"]),
                "conversation_id": str(input["conversation_id"])}

    def read(self, values: Mapping[str, str]) -> dict[str, Any]:
        return {"guidelines": read_guideline_block(values["guidelines"]),
                "conversation": read_conversation_block(values["conversation"]),
                "conversation_id": values["conversation_id"]}


JUDGE_LAYOUT = JudgeLayout()
