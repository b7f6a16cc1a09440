"""One response in full: the disagreements, the response text with the judge's quoted evidence
highlighted, the marks of the selected judge beside the annotators' and the adjudicator's, the
evidence list, the judge's rationale and the annotators' notes and flags.

Highlights are styles on a `Text` built by `safe()`, so a quote can never inject markup. Each
highlight also has a textual counterpart in the evidence list (required vs forbidden, found or
not), so colour never carries the meaning alone.

A long response is shown a part at a time (widgets/long_text.py; `move_part`), its quotes found
and highlighted in the part on screen.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from copal_tui.services.item_views import ItemResponse, ItemRow
from copal_tui.tui.safe import clean, safe
from copal_tui.tui.widgets.long_text import LongText
from copal_tui.tui.widgets.marks_table import disagreements, marks_table, sources

REQUIRED_STYLE = "bold underline"
FORBIDDEN_STYLE = "bold reverse"


def highlight(text: str | None, evidence: dict[str, str] | None, forbidden: set[str]
              ) -> tuple[Text, list[tuple[str, str, bool]]]:
    """The response as safe Text with each evidence quote styled where it occurs.

    Returns the text and (item id, quote, found) per quote. Quotes are matched after the same
    cleaning as the text (exactly, then ignoring case), since both may carry escapes.
    """
    body = safe(text)
    plain = body.plain
    lowered = plain.lower()
    found: list[tuple[str, str, bool]] = []
    for mid, quote in (evidence or {}).items():
        q = clean(quote).strip()
        if not q:
            continue
        start = plain.find(q)
        if start < 0 and len(lowered) == len(plain):
            start = lowered.find(q.lower())
        if start >= 0:
            body.stylize(FORBIDDEN_STYLE if mid in forbidden else REQUIRED_STYLE,
                         start, start + len(q))
        found.append((mid, q, start >= 0))
    return body, found


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold")


def render_response(item: ItemRow, resp: ItemResponse, judge: tuple[str, str] | None,
                    position: str = "", text: LongText | None = None) -> RenderableType:
    """The response with its marks; `text` is its part on screen (default: all of it, in
    parts, the first)."""
    parts: list[RenderableType] = []
    title = Text(position + "  " if position else "", style="bold")
    title.append_text(safe(resp.model, style="bold"))
    title.append(f"  \u00b7  variant {resp.variant}", style="dim")
    parts.append(title)
    marks = sources(item, resp, judge)
    if resp.blinded:
        parts.append(Text("blind: the judge's and other annotators' marks stay hidden until "
                          "you label this response", style="italic"))
    elif judge is None:
        parts.append(Text("no judge has judged this item yet", style="italic"))
    elif judge not in resp.judgments:
        parts.append(Text(f"{judge[0]} ({judge[1]}) has not judged this response",
                          style="italic"))
    for flag in disagreements(item, marks):
        parts.append(Text(f"\u2691 {flag}", style="bold"))
    if resp.failure:
        parts.append(Text("the model call failed: ", style="bold") + safe(resp.failure))

    # The text first (what everyone marked), then the marks side by side.
    judgment = resp.judgments.get(judge) if judge else None
    forbidden = {c.id for c in item.forbidden}
    text = text or LongText.of(resp.text)
    shown = text.part
    body, found = highlight(None if shown is None else shown.text,
                            None if judgment is None else judgment.evidence, forbidden)
    parts.append(_heading("Response"))
    above, below = text.notes()
    body = body if body.plain else Text("(no text)", style="italic")
    parts += [line for line in (above, body, below) if line is not None]
    missing = ", not in this part" if text.parted else ", not found verbatim"
    parts.append(_heading("Marks"))
    parts.append(marks_table(item, marks))
    if found:
        parts.append(_heading("Evidence quoted by the judge"))
        for mid, quote, ok in found:
            side = "forbidden" if mid in forbidden else "required"
            line = Text(f"{mid} ({side}{'' if ok else missing}) ",
                        style="bold")
            line.append_text(safe(f"\u201c{quote}\u201d",
                                  style=(FORBIDDEN_STYLE if mid in forbidden
                                         else REQUIRED_STYLE) if ok else ""))
            parts.append(line)
    if judgment is not None:
        parts.append(_heading(f"Rationale ({judge[0]}, {judge[1]})" if judge else "Rationale"))
        if judgment.failure:
            parts.append(Text("judgment failed: ", style="bold") + safe(judgment.failure))
        parts.append(safe(judgment.rationale or "-"))
    notes = _notes(resp)
    if notes:
        parts.append(_heading("Notes and flags"))
        parts.extend(notes)
    return Group(*parts)


def _notes(resp: ItemResponse) -> list[Text]:
    out = []
    for label in resp.labels:
        if label.get("note"):
            out.append(safe(f"{label.annotator} (label note): ", style="bold")
                       + safe(label.get("note")))
    adj = resp.adjudication
    if adj and adj.get("note"):
        out.append(safe(f"{adj.annotator} (adjudication): ", style="bold")
                   + safe(adj.get("note")))
    for ev in resp.remarks:
        what = ev.get("flag") or ev.get("note") or ""
        out.append(safe(f"{ev.annotator} ({ev.action}): ", style="bold") + safe(what))
    return out


class ResponseView(Static):
    """Shows one response; `show()` re-renders it for another response or judge."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[ItemRow, ItemResponse, tuple[str, str] | None, str] | None = None
        self._text = LongText(None)

    def show(self, item: ItemRow, resp: ItemResponse | None,
             judge: tuple[str, str] | None, position: str = "") -> None:
        if resp is None:
            self._shown = None
            self.update(Text("this item has no responses yet", style="italic"))
            return
        if self._shown is None or self._shown[1] is not resp:
            self._text = LongText.of(resp.text)  # another response (or read again): part 1
        self._shown = (item, resp, judge, position)
        self.update(render_response(item, resp, judge, position, self._text))

    def move_part(self, delta: int) -> bool:
        """Show the response's next (previous) part; False when there is none."""
        if self._shown is None or not self._text.move(delta):
            return False
        self.update(render_response(*self._shown, self._text))
        return True
