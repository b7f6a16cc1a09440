"""Renderables for judged dialogues: a turn with its truth (governing guideline, violation with
the modified guideline and evidence) and a judge's prediction with a mark saying whether and how
it is wrong; the guideline document; guideline labels and the document lookup.

Pure functions from store rows to Rich renderables, shared by the dialogue screen and the
review queue. Every stored string (turns, guideline texts, evidence, judge reasons, keys, even
judge names) is untrusted and goes through `safe`; nothing is parsed as markup. A mark is
spelled out in words (MISSED VIOLATION, FALSE ALARM, ...), so colour never carries the meaning
alone.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from copal_tui.domain.dialogue import Guideline, norm_key
from copal_tui.tui.safe import one_line, safe

CAT_SHORT = {1: "C1 universal", 2: "C2 workflow", 3: "C3 condition"}
CAT_TITLES = {1: "Category 1: universal compliance",
              2: "Category 2: intent-triggered workflows",
              3: "Category 3: condition-triggered guidelines"}
# How a prediction stands against the truth (store.browse.dialogue_browse_sql KIND values).
KIND_WORDS = {
    "right": "\u2713 right",
    "flagged_elsewhere": "~ flagged, under another guideline (counts against strict "
                         "detection only)",
    "wrong_guideline": "\u2717 WRONG GUIDELINE",
    "false_alarm": "\u2717 FALSE ALARM (flagged a compliant turn)",
    "missed_violation": "\u2717 MISSED VIOLATION",
    "no_prediction": "\u2717 NO PREDICTION (counts as wrong)",
}
WRONG = frozenset(("wrong_guideline", "false_alarm", "missed_violation", "no_prediction"))


def heading(text: str) -> Text:
    return Text(text, style="bold underline")


def guideline_label(category: Any, key: Any, phase: Any) -> Text:
    """`C2 workflow cancel_line · Phase 2`; `(no guideline)` when nothing is named."""
    if category is None and key is None:
        return Text("(no guideline)", style="italic")
    out = Text(CAT_SHORT.get(category, f"C{category}" if category is not None else "C?") + " ")
    out.append_text(safe(one_line(key or "?", 60), style="bold"))
    if category == 2 and phase is not None:
        out.append(f" \u00b7 Phase {phase}")
    return out


def document_text(guidelines: list[dict[str, Any]], category: Any, key: Any,
                  phase: Any) -> str | None:
    """The document's text of one guideline (keys compared as the metrics compare them)."""
    want = norm_key(key)
    for g in guidelines:
        if g["category"] == category and norm_key(g["key"]) == want and (
                category != 2 or g["phase"] == phase):
            return str(g["text"])
    return None


def _doc_line(guidelines: list[dict[str, Any]], category: Any, key: Any, phase: Any) -> Text:
    text = document_text(guidelines, category, key, phase)
    out = Text("  document: ", style="dim")
    if text is None:
        return out.append("(not in this dialogue's document)", style="italic")
    return out.append_text(safe(text))


def truth_lines(turn: dict[str, Any], guidelines: list[dict[str, Any]],
                show_text: bool) -> list[RenderableType]:
    """The governing guideline, and for a violation the modified text followed and the
    evidence."""
    line = Text("truth  ", style="bold")
    line.append_text(guideline_label(turn["category"], turn["key"], turn["phase"]))
    line.append("  \u00b7  ")
    if turn["violation"]:
        line.append("VIOLATION", style="bold reverse")
    else:
        line.append("compliant")
    out: list[RenderableType] = [line]
    if show_text:
        out.append(_doc_line(guidelines, turn["category"], turn["key"], turn["phase"]))
    if turn["violation"]:
        if turn.get("guideline_text"):
            out.append(Text("  followed instead: ", style="bold") + safe(turn["guideline_text"]))
        if turn.get("evidence"):
            out.append(Text("  evidence: ", style="bold") + safe(turn["evidence"]))
    return out


def _same_guideline(a: dict[str, Any], b: dict[str, Any]) -> bool:
    try:
        return Guideline.of(a["category"], a["key"], a["phase"]) == \
            Guideline.of(b["category"], b["key"], b["phase"])
    except ValueError:  # a stored value the domain would not accept: not the same
        return False


def prediction_lines(pred: dict[str, Any] | None, kind: str | None, who: str,
                     guidelines: list[dict[str, Any]], show_text: bool, *,
                     binary: bool = False, mark: bool = True,
                     truth: dict[str, Any] | None = None) -> list[RenderableType]:
    """The judge's guideline, verdict and reason on one turn, with the mark (unless the caller
    shows it elsewhere). `pred` holds category, key, phase, violation, reason (or None: no
    prediction); `kind` is None for a turn the metrics do not score. With `show_text`, the
    predicted guideline's document text when it is not the truth's (`truth`)."""
    line = safe(one_line(who, 50), style="bold")
    line.append("  ")
    if pred is None:
        line.append("no prediction", style="italic")
    else:
        if binary or (pred.get("category") is None and pred.get("key") is None):
            line.append("(verdict only)", style="italic")
        else:
            line.append_text(guideline_label(pred["category"], pred["key"], pred["phase"]))
        line.append("  \u00b7  ")
        line.append("violation" if pred["violation"] else "compliant",
                    style="bold" if pred["violation"] else "")
    out: list[RenderableType] = [line]
    if kind is None:
        out.append(Text("  not scored (an untagged turn, or a failed attempt)", style="dim"))
    elif mark:
        out.append(Text("  " + KIND_WORDS.get(kind, kind),
                        style="bold reverse" if kind in WRONG else "dim"))
    if pred is not None and show_text and pred.get("key") is not None and not binary and (
            truth is None or not _same_guideline(pred, truth)):
        out.append(_doc_line(guidelines, pred["category"], pred["key"], pred["phase"]))
    if pred is not None and pred.get("reason"):
        out.append(Text("  reason: ", style="dim") + safe(pred["reason"]))
    return out


def turn_header(turn: dict[str, Any], current: bool = False) -> Text:
    out = Text("\u25b6 " if current else "", style="bold")
    out.append(f"turn {turn['turn_index']} \u00b7 {turn['role']}", style="bold")
    return out


def turn_renderable(turn: dict[str, Any], guidelines: list[dict[str, Any]], *,
                    judge_lines: list[RenderableType] | None = None, show_text: bool = False,
                    current: bool = False, with_truth: bool = True) -> RenderableType:
    """One turn: header, content, and for an assistant turn the truth and the judge's lines."""
    parts: list[RenderableType] = [turn_header(turn, current), safe(turn["content"])]
    if turn["role"] == "assistant" and with_truth:
        parts.extend(truth_lines(turn, guidelines, show_text))
        if judge_lines:
            parts.extend(judge_lines)
    return Group(*parts)


def document_renderable(guidelines: list[dict[str, Any]], turns: list[dict[str, Any]],
                        highlight: tuple[Any, Any, Any] | None = None) -> RenderableType:
    """The guideline document by category (the oracle text), with `highlight` (category, key,
    phase) marked, then the modified guidelines the assistant followed on violation turns."""
    parts: list[RenderableType] = []
    want = None if highlight is None else (highlight[0], norm_key(highlight[1]),
                                           highlight[2] if highlight[0] == 2 else None)
    for cat in (1, 2, 3):
        rows = [g for g in guidelines if g["category"] == cat]
        if not rows:
            continue
        parts.append(heading(CAT_TITLES[cat]))
        for g in rows:
            mine = want == (cat, norm_key(g["key"]), g["phase"] if cat == 2 else None)
            line = Text("\u25b6 " if mine else "  ", style="bold")
            line.append_text(safe(one_line(g["key"], 60), style="bold"))
            if cat == 2 and g["phase"] is not None:
                line.append(f" \u00b7 Phase {g['phase']}")
            line.append(": ")
            line.append_text(safe(g["text"]))
            if mine:
                line.append("  \u2190 this turn's guideline", style="bold")
            parts.append(line)
        parts.append(Text(""))
    modified = [t for t in turns if t.get("violation") and t.get("guideline_text")]
    if modified:
        parts.append(heading("Modified guidelines followed in this dialogue (violations)"))
        for t in modified:
            line = Text(f"  turn {t['turn_index']}  ", style="bold")
            line.append_text(guideline_label(t["category"], t["key"], t["phase"]))
            line.append(": ")
            line.append_text(safe(t["guideline_text"]))
            parts.append(line)
    return Group(*parts) if parts else Text("(this dialogue has no guideline document)",
                                            style="italic")
