"""What an annotator reads before marking: the query, the active clauses and the response.

A focusable scroll pane (up/down/page keys scroll it; the label screens' PgUp/PgDn and
shift+up/down scroll it from anywhere). Every piece of stored text is untrusted
and goes through `safe` (no markup, escapes stripped, bidi neutralised). The label queue hides
the responding model unless COPAL_SHOW_MODEL is set (`show_model=False`): the model's name and
the response id (which embeds it) give way to a neutral "Response" and the item id.

The response is read a part at a time (widgets/long_text.py): the context holds its first part,
`move_part` reads another from the store.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from copal_tui.services.annotation.views import ResponseContext, response_part
from copal_tui.tui.safe import SHOWN, one_line, safe
from copal_tui.tui.widgets.long_text import LongText
from copal_tui.tui.widgets.scroll_pane import ScrollPane


def context_renderable(ctx: ResponseContext, *, with_response: bool = True,
                       show_model: bool = True, note: str | None = None,
                       show_facet: bool = True,
                       response: LongText | None = None) -> RenderableType:
    """One meta line, the annotator's own note, the query, the response (what is being
    judged), then the active clauses and which response this is. Compact (no blank line
    before the response) so the response starts high on an 80x24 terminal. The item's target
    facet is left out with `show_facet=False`: while labelling blind it would suggest the
    failure to look for. `response` is the response's part on screen (default: the
    context's)."""
    meta = Text(one_line(ctx.world_name or ctx.world_id, 40), style="bold")
    meta.append(f"  {one_line(ctx.pattern or '-', 24)}", style="dim")
    if show_facet:
        meta.append(f" / {one_line(ctx.facet or '-', 26)}", style="dim")
    parts: list[RenderableType] = [meta]
    if note:
        line = Text("Your note: ", style="bold yellow")
        line.append_text(safe(note))
        parts.append(line)
    query = Text("Query ", style="bold underline")
    query.append_text(safe(ctx.query))
    parts.append(query)
    if with_response:
        parts.append(Text("Response", style="bold underline"))
        parts += (response or LongText(ctx.response)).renderables()
    parts += [Text(""), Text("Active clauses", style="bold underline")]
    if not ctx.clauses:
        parts.append(Text("(none recorded)", style="dim"))
    for c in ctx.clauses:
        line = Text(f"{one_line(c.id.rsplit(':', 1)[-1], 12)} ", style="bold")
        line.append(f"{one_line(c.effect or 'note', 14)} ", style="cyan")
        line.append_text(safe(f"when {one_line(c.trigger, 200)}; "
                              f"scope {one_line(c.scope, 200)}"))
        parts.append(line)
    if show_model:
        parts.append(safe(f"{one_line(ctx.model, 40)} \u00b7 "
                          f"{one_line(ctx.response_id, 90)}", style="dim"))
    else:
        parts.append(safe(f"Response \u00b7 item {one_line(ctx.item_id, 80)}", style="dim"))
    return Group(*parts)


class LabelContext(ScrollPane):
    """Scrollable query + clauses + response (left/right stay free for moving)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[ResponseContext, dict[str, Any]] | None = None
        self._response = LongText(None)

    def compose(self) -> ComposeResult:
        yield Static(Text("Loading the queue\u2026", style="dim"), id="label-context-body")

    def show(self, ctx: ResponseContext | None, message: str = "", *, show_model: bool = True,
             note: str | None = None, show_facet: bool = True) -> None:
        if ctx is not None and (self._shown is None or self._shown[0] is not ctx):
            # Another response (the same one drawn again keeps its part): its first part.
            rid = ctx.response_id
            self._response = LongText(ctx.response, lambda index: response_part(
                self.app.db, "response", rid, index, SHOWN))  # type: ignore[attr-defined]
        self._shown = None if ctx is None else (ctx, {"show_model": show_model, "note": note,
                                                      "show_facet": show_facet})
        self._draw(message)
        self.scroll_home(animate=False)

    def move_part(self, delta: int) -> bool:
        """Show the response's next (previous) part; False when there is none."""
        if self._shown is None or not self._response.move(delta):
            return False
        self._draw("")
        return True

    def _draw(self, message: str) -> None:
        body = self.query_one("#label-context-body", Static)
        if self._shown is None:
            body.update(Text(message, style="dim"))
            return
        ctx, options = self._shown
        body.update(context_renderable(ctx, response=self._response, **options))
