"""What an annotator reads before marking: the query, the active clauses and the response.

A focusable scroll pane (up/down/page keys scroll it). Every piece of stored text is untrusted
and goes through `safe` (no markup, escapes stripped, bidi neutralised). The label queue hides
the responding model unless COPAL_SHOW_MODEL is set (`show_model=False`): the model's name and
the response id (which embeds it) give way to a neutral "Response" and the item id.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.scroll_pane import ScrollPane


def context_renderable(ctx: dict[str, Any], *, with_response: bool = True,
                       show_model: bool = True, note: str | None = None) -> RenderableType:
    """Meta lines, the annotator's own note, the query, the response (what is being judged),
    then the active clauses."""
    meta = Text(one_line(ctx["world_name"] or ctx["world_id"], 40), style="bold")
    meta.append(f"  {one_line(ctx['pattern'] or '-', 24)} / {one_line(ctx['facet'] or '-', 26)}",
                style="dim")
    if show_model:
        meta.append_text(safe(f"\n{one_line(ctx['model'], 40)} \u00b7 "
                              f"{one_line(ctx['response_id'], 90)}", style="dim"))
    else:
        meta.append_text(safe(f"\nResponse \u00b7 item {one_line(ctx['item_id'], 80)}",
                              style="dim"))
    parts: list[RenderableType] = [meta]
    if note:
        line = Text("Your note: ", style="bold yellow")
        line.append_text(safe(note))
        parts.append(line)
    parts += [Text(""), Text("Query", style="bold underline"), safe(ctx["query"]), Text("")]
    if with_response:
        parts += [Text("Response", style="bold underline"),
                  safe(ctx["response"]) if ctx["response"] else Text("(empty)", style="dim"),
                  Text("")]
    parts.append(Text("Active clauses", style="bold underline"))
    if not ctx["clauses"]:
        parts.append(Text("(none recorded)", style="dim"))
    for c in ctx["clauses"]:
        line = Text(f"{one_line(c['id'].rsplit(':', 1)[-1], 12)} ", style="bold")
        line.append(f"{one_line(c['effect'] or 'note', 14)} ", style="cyan")
        line.append_text(safe(f"when {one_line(c['trigger'], 200)}; "
                              f"scope {one_line(c['scope'], 200)}"))
        parts.append(line)
    return Group(*parts)


class LabelContext(ScrollPane):
    """Scrollable query + clauses + response (left/right stay free for moving)."""

    def compose(self) -> ComposeResult:
        yield Static(Text("Loading the queue\u2026", style="dim"), id="label-context-body")

    def show(self, ctx: dict[str, Any] | None, message: str = "", *, show_model: bool = True,
             note: str | None = None) -> None:
        body = self.query_one("#label-context-body", Static)
        body.update(context_renderable(ctx, show_model=show_model, note=note) if ctx
                    else Text(message, style="dim"))
        self.scroll_home(animate=False)
