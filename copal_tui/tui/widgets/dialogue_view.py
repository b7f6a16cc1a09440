"""Renderables for judged dialogues: a turn with its truth (governing guideline, violation with
the modified guideline and evidence) and a judge's prediction with a mark saying whether and how
it is wrong; the guideline document; guideline labels and the document lookup.

Pure functions from the typed rows of copal_tui/services/dialogues.py (a `TurnRow`, the
`GuidelineRow`s of the document, or a judge mistake read as a `Truth`) to Rich renderables, shared by the dialogue screen and the
review queue; and `ConversationView`, the widget that shows a long conversation as blocks
(`TurnBlock`), renders each block once per key and paints only the lines in view. Every stored
string (turns, guideline texts, evidence, judge reasons, keys, even judge names) is untrusted
and goes through `safe`; nothing is parsed as markup. A mark is spelled out in words (MISSED
VIOLATION, FALSE ALARM, ...), so colour never carries the meaning alone.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from copal_tui.domain.dialogue import Guideline, norm_key
from copal_tui.services.dialogues import MISTAKES, GuidelineRow, TurnRow
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.dialogue_protocols import Prediction, Truth
from copal_tui.tui.widgets.scroll_pane import ScrollPane

CAT_SHORT = {1: "C1 universal", 2: "C2 workflow", 3: "C3 condition"}
CAT_TITLES = {1: "Category 1: universal compliance",
              2: "Category 2: intent-triggered workflows",
              3: "Category 3: condition-triggered guidelines"}
# How a prediction stands against the truth (the kinds copal_tui.services.dialogues returns).
KIND_WORDS = {
    "right": "\u2713 right",
    "flagged_elsewhere": "~ flagged, under another guideline (counts against strict "
                         "detection only)",
    "wrong_guideline": "\u2717 WRONG GUIDELINE",
    "false_alarm": "\u2717 FALSE ALARM (flagged a compliant turn)",
    "missed_violation": "\u2717 MISSED VIOLATION",
    "no_prediction": "\u2717 NO PREDICTION (counts as wrong)",
}
WRONG = MISTAKES


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


def document_text(guidelines: Sequence[GuidelineRow], category: Any, key: Any,
                  phase: Any) -> str | None:
    """The document's text of one guideline (keys compared as the metrics compare them)."""
    want = norm_key(key)
    for g in guidelines:
        if g.category == category and norm_key(g.key) == want and (
                category != 2 or g.phase == phase):
            return g.text
    return None


def _doc_line(guidelines: Sequence[GuidelineRow], category: Any, key: Any, phase: Any) -> Text:
    text = document_text(guidelines, category, key, phase)
    out = Text("  document: ", style="dim")
    if text is None:
        return out.append("(not in this dialogue's document)", style="italic")
    return out.append_text(safe(text))


def truth_lines(turn: Truth, guidelines: Sequence[GuidelineRow],
                show_text: bool) -> list[RenderableType]:
    """The governing guideline, and for a violation the modified text followed and the
    evidence."""
    line = Text("truth  ", style="bold")
    line.append_text(guideline_label(turn.category, turn.key, turn.phase))
    line.append("  \u00b7  ")
    if turn.violation:
        line.append("VIOLATION", style="bold reverse")
    else:
        line.append("compliant")
    out: list[RenderableType] = [line]
    if show_text:
        out.append(_doc_line(guidelines, turn.category, turn.key, turn.phase))
    if turn.violation:
        if turn.guideline_text:
            out.append(Text("  followed instead: ", style="bold") + safe(turn.guideline_text))
        if turn.evidence:
            out.append(Text("  evidence: ", style="bold") + safe(turn.evidence))
    return out


def _same_guideline(a: Prediction, b: Truth) -> bool:
    try:
        return Guideline.of(a.category, a.key, a.phase) == Guideline.of(b.category, b.key, b.phase)
    except ValueError:  # a stored value the domain would not accept: not the same
        return False


def prediction_lines(pred: Prediction | None, kind: str | None, who: str,
                     guidelines: Sequence[GuidelineRow], show_text: bool, *,
                     binary: bool = False, mark: bool = True,
                     truth: Truth | None = None) -> list[RenderableType]:
    """The judge's guideline, verdict and reason on one turn, with the mark (unless the caller
    shows it elsewhere). `pred` is None when there is no prediction; `kind` is None for a turn
    the metrics do not score. With `show_text`, the predicted guideline's document text when it
    is not the truth's (`truth`)."""
    line = safe(one_line(who, 50), style="bold")
    line.append("  ")
    if pred is None:
        line.append("no prediction", style="italic")
    else:
        if binary or (pred.category is None and pred.key is None):
            line.append("(verdict only)", style="italic")
        else:
            line.append_text(guideline_label(pred.category, pred.key, pred.phase))
        line.append("  \u00b7  ")
        line.append("violation" if pred.violation else "compliant",
                    style="bold" if pred.violation else "")
    out: list[RenderableType] = [line]
    if kind is None:
        out.append(Text("  not scored (an untagged turn, or a failed attempt)", style="dim"))
    elif mark:
        out.append(Text("  " + KIND_WORDS.get(kind, kind),
                        style="bold reverse" if kind in WRONG else "dim"))
    if pred is not None and show_text and pred.key is not None and not binary and (
            truth is None or not _same_guideline(pred, truth)):
        out.append(_doc_line(guidelines, pred.category, pred.key, pred.phase))
    if pred is not None and pred.reason:
        out.append(Text("  reason: ", style="dim") + safe(pred.reason))
    return out


def turn_header(turn: TurnRow, current: bool = False) -> Text:
    out = Text("\u25b6 " if current else "", style="bold")
    out.append(f"turn {turn.turn_index} \u00b7 {turn.role}", style="bold")
    return out


def turn_renderable(turn: TurnRow, guidelines: Sequence[GuidelineRow], *,
                    judge_lines: list[RenderableType] | None = None, show_text: bool = False,
                    current: bool = False, with_truth: bool = True) -> RenderableType:
    """One turn: header, content, and for an assistant turn the truth and the judge's lines."""
    parts: list[RenderableType] = [turn_header(turn, current), safe(turn.content)]
    if turn.role == "assistant" and with_truth:
        parts.extend(truth_lines(turn, guidelines, show_text))
        if judge_lines:
            parts.extend(judge_lines)
    return Group(*parts)


def document_renderable(guidelines: Sequence[GuidelineRow], turns: Sequence[TurnRow],
                        highlight: tuple[Any, Any, Any] | None = None) -> RenderableType:
    """The guideline document by category (the oracle text), with `highlight` (category, key,
    phase) marked, then the modified guidelines the assistant followed on violation turns."""
    parts: list[RenderableType] = []
    want = None if highlight is None else (highlight[0], norm_key(highlight[1]),
                                           highlight[2] if highlight[0] == 2 else None)
    for cat in (1, 2, 3):
        rows = [g for g in guidelines if g.category == cat]
        if not rows:
            continue
        parts.append(heading(CAT_TITLES[cat]))
        for g in rows:
            mine = want == (cat, norm_key(g.key), g.phase if cat == 2 else None)
            line = Text("\u25b6 " if mine else "  ", style="bold")
            line.append_text(safe(one_line(g.key, 60), style="bold"))
            if cat == 2 and g.phase is not None:
                line.append(f" \u00b7 Phase {g.phase}")
            line.append(": ")
            line.append_text(safe(g.text))
            if mine:
                line.append("  \u2190 this turn's guideline", style="bold")
            parts.append(line)
        parts.append(Text(""))
    modified = [t for t in turns if t.violation and t.guideline_text]
    if modified:
        parts.append(heading("Modified guidelines followed in this dialogue (violations)"))
        for t in modified:
            line = Text(f"  turn {t.turn_index}  ", style="bold")
            line.append_text(guideline_label(t.category, t.key, t.phase))
            line.append(": ")
            line.append_text(safe(t.guideline_text or ""))
            parts.append(line)
    return Group(*parts) if parts else Text("(this dialogue has no guideline document)",
                                            style="italic")


# ------------------------------------------------------------------ the conversation widget


@dataclass(frozen=True)
class TurnBlock:
    """One turn of a conversation as the view shows it. `key` names everything the turn's
    renderable depends on (turn, attempt, highlight, ...): the view renders `make()` once per
    key and width and reuses the lines after that. `tone` draws the left rule: "assistant"
    (muted), "wrong" (the error colour) or "" (none); `current` gives the turn a background.
    Without `gap` the next block follows with no blank line (one turn in two blocks)."""

    key: Hashable
    make: Callable[[], RenderableType] = field(compare=False)
    tone: str = ""
    current: bool = False
    gap: bool = True


class ConversationView(ScrollView, can_focus=True, inherit_bindings=False):
    """A long conversation laid out once and painted line by line (Textual's line API): only
    the lines in view are painted, and a turn is rendered again only when its block's key is
    new. Moving a highlight re-renders the two turns it leaves and reaches; switching back to
    an attempt already shown renders nothing. One widget instead of a widget per turn also
    spares the compositor a layout of every turn on each key."""

    BINDINGS = ScrollPane.BINDINGS
    COMPONENT_CLASSES = {"conversation--assistant", "conversation--wrong",
                         "conversation--current"}
    DEFAULT_CSS = """
    ConversationView > .conversation--assistant { color: $primary 40%; }
    ConversationView > .conversation--wrong { color: $error; }
    ConversationView > .conversation--current { background: $boost; }
    """
    _RULED = ("assistant", "wrong")
    # Rendered blocks kept across keys: a few attempts' worth of a long conversation.
    CACHE = 4096

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.blocks: list[TurnBlock] = []
        self._lines: list[list[Strip]] = []
        self._starts: list[int] = []
        self._cache: OrderedDict[tuple[Any, ...], list[Strip]] = OrderedDict()
        self._width = 0
        self._look: tuple[int, int] | None = None
        self._shown: list[TurnBlock] = []  # the blocks self._lines were laid out for
        self._palette_memo: tuple[Style, Style, Style, Style, Style] | None = None

    def show(self, blocks: Sequence[TurnBlock]) -> None:
        """Show these turns (in order); only blocks with a new key are rendered."""
        self.blocks = list(blocks)
        self._layout()

    def scroll_to_block(self, index: int, *, top: bool = True) -> None:
        if 0 <= index < len(self._starts):
            y = self._starts[index]
            if not top:
                y = max(0, y + len(self._lines[index]) - self.scrollable_content_region.height)
            self.scroll_to(y=y, animate=False, immediate=True)

    def block_plain(self, index: int) -> str:
        """The text of one block as painted, one line per row, without its rule and padding
        (for tests and checks)."""
        left = 2 if self.blocks[index].tone in self._RULED else 1
        return "\n".join(s.text[left:].rstrip() for s in self._lines[index])

    def on_resize(self) -> None:
        self._layout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._palette_memo = None
        self._layout()  # focus or theme: the colours baked into the lines may have changed

    def _palette(self) -> tuple[Style, Style, Style, Style, Style]:
        """(text, current text, assistant rule, wrong rule, current background) styles."""
        if self._palette_memo is None:
            base = self.rich_style
            bg = self.background_colors[1]
            cur_bg = bg + self.get_component_styles("conversation--current").background
            current = base + Style(bgcolor=cur_bg.rich_color)
            rule = [Style(color=(bg + self.get_component_styles(name).color).rich_color)
                    for name in ("conversation--assistant", "conversation--wrong")]
            self._palette_memo = (base, current, rule[0], rule[1],
                                  Style(bgcolor=cur_bg.rich_color))
        return self._palette_memo

    def _layout(self) -> None:
        full, height = self.size
        if full <= 0 or not self.is_mounted:
            return
        palette = self._palette()
        # Lay out for the width the lines will have: Textual shows the vertical scrollbar
        # after it sees the virtual size, so the width depends on the height we produce.
        bar = self.styles.scrollbar_size_vertical
        widths = [full - bar, full] if self._look is None or self._look[0] < full \
            else [full, full - bar]
        for width in widths:
            look = (width, hash(palette))  # hashed once, not five Rich styles per turn
            lines, starts, y = self._lay(look, palette)
            if (y > height) == (width < full):
                break
        self._width, self._look, self._shown = width, look, list(self.blocks)
        self._lines, self._starts = lines, starts
        size = Size(width, y)  # the last turn keeps its blank line too
        if size != self.virtual_size:
            # Not through the reactive, which lays out the whole screen on every change of
            # height (a review queue's move changes it every time): the scrollbar's update
            # lays it out only when the bar appears or goes, and clamps the scroll offset.
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)
        self.refresh()

    def _lay(self, look: tuple[int, int], palette: tuple[Style, Style, Style, Style, Style],
             ) -> tuple[list[list[Strip]], list[int], int]:
        """Each block's lines at this look, where each block starts, the total height."""
        # A block object shown last time at the same look keeps its lines without a lookup
        # (the screen rebuilds only the blocks of the turns that changed).
        same = {id(b): ls for b, ls in zip(self._shown, self._lines, strict=False)} \
            if look == self._look else {}
        lines: list[list[Strip]] = []
        starts: list[int] = []
        y = 0
        for block in self.blocks:
            strips = same.get(id(block))
            if strips is None:
                strips = self._cached(block, look, palette)
            starts.append(y)
            lines.append(strips)
            y += len(strips) + block.gap  # a blank line after each turn
        return lines, starts, y

    def _cached(self, block: TurnBlock, look: tuple[int, int],
                palette: tuple[Style, Style, Style, Style, Style]) -> list[Strip]:
        """The block's lines: its rendered text (cached without the rule's colour, so a turn
        that becomes wrong or right under another attempt is not rendered again), behind its
        rule."""
        ruled = block.tone in self._RULED
        ck = (block.key, ruled, block.current, look)
        body = self._remember(ck, lambda: self._render_body(block, look[0], ruled, palette))
        if not ruled:
            return body
        base, current, rule_assistant, rule_wrong, cur_bg = palette
        rule = rule_wrong if block.tone == "wrong" else rule_assistant
        edge = Segment("\u258f", (current + cur_bg if block.current else base) + rule)
        return self._remember((*ck, block.tone), lambda: [
            Strip([edge, *line], look[0]) for line in body])

    def _remember(self, ck: tuple[Any, ...], make: Callable[[], list[Strip]]) -> list[Strip]:
        strips = self._cache.get(ck)
        if strips is None:
            strips = self._cache[ck] = make()
            if len(self._cache) > self.CACHE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(ck)
        return strips

    def _render_body(self, block: TurnBlock, width: int, ruled: bool,
                     palette: tuple[Style, Style, Style, Style, Style]) -> list[Strip]:
        """The block rendered with a cell of padding either side, in the width left by the
        rule when it has one."""
        base, current = palette[:2]
        style = current if block.current else base
        inner = max(1, width - 2 - ruled)
        console = self.app.console
        options = console.options.update(width=inner, height=None, highlight=False)
        pad = Segment(" ", style)
        return [Strip([pad, *line, pad], width - ruled) for line in
                console.render_lines(block.make(), options, style=style, pad=True)]

    def render_line(self, y: int) -> Strip:
        n = self.scroll_offset.y + y
        i = bisect_right(self._starts, n) - 1  # the block holding line n
        if i >= 0:
            k = n - self._starts[i]
            if k < len(self._lines[i]):
                return self._lines[i][k]
        return Strip.blank(self._width, self.rich_style)
