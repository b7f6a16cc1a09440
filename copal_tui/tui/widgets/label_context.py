"""What an annotator reads before marking: the query, the active clauses and the response.

A focusable scroll pane (up/down/page keys scroll it; the label screens' PgUp/PgDn and
shift+up/down scroll it from anywhere). Every piece of stored text is untrusted
and goes through `safe` (no markup, escapes stripped, bidi neutralised). The label queue hides
the responding model unless COPAL_SHOW_MODEL is set (`show_model=False`): the model's name and
the response id (which embeds it) give way to a neutral "Response" and the item id.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from copal_tui.services.annotation.views import ResponseContext
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.scroll_pane import ScrollPane


def context_renderable(ctx: ResponseContext, *, with_response: bool = True,
                       show_model: bool = True, note: str | None = None,
                       show_facet: bool = True) -> RenderableType:
    """One meta line, the annotator's own note, the query, the response (what is being
    judged), then the active clauses and which response this is. Compact (no blank line
    before the response) so the response starts high on an 80x24 terminal. The item's target
    facet is left out with `show_facet=False`: while labelling blind it would suggest the
    failure to look for."""
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
        parts += [Text("Response", style="bold underline"),
                  safe(ctx.response) if ctx.response else Text("(empty)", style="dim")]
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

    def compose(self) -> ComposeResult:
        yield Static(Text("Loading the queue\u2026", style="dim"), id="label-context-body")

    def show(self, ctx: ResponseContext | None, message: str = "", *, show_model: bool = True,
             note: str | None = None, show_facet: bool = True) -> None:
        body = self.query_one("#label-context-body", Static)
        body.update(context_renderable(ctx, show_model=show_model, note=note,
                                       show_facet=show_facet) if ctx
                    else Text(message, style="dim"))
        self.scroll_home(animate=False)
