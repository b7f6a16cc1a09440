"""The item itself: its query, the trap it sets, what it projects from, its composition, the
clauses it activates (trigger, scope, effect, source span) and its handling contract (the R
items a response must contain, the F items it must not), each item numbered as annotators see
it. Every untrusted string is rendered through `safe`."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from copal_tui.services.item_views import ClauseRow, ItemDetail, MissingClause
from copal_tui.tui.safe import safe
from copal_tui.tui.widgets.paged_table import short_id


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold")


def _field(name: str, value: str | None) -> Text:
    line = Text(f"{name}: ", style="dim")
    line.append_text(safe(value or "-"))
    return line


def render_item(detail: ItemDetail) -> RenderableType:
    item = detail.item
    wid = item.world_id
    parts: list[RenderableType] = []
    head = Text()
    head.append_text(safe(item.pattern or item.method, style="bold"))
    if item.facet:
        head.append(" / ")
        head.append_text(safe(item.facet, style="bold"))
    head.append(f"  \u00b7  method {item.method}  \u00b7  "
                f"{'selected' if item.selected else 'not selected'}  \u00b7  "
                f"{detail.response_total} responses", style="dim")
    parts.append(head)
    parts.append(_heading("Query"))
    parts.append(safe(item.query))
    if item.trap:
        parts.append(_field("trap", item.trap))
    parent = detail.parent
    if parent:
        line = Text("single-policy projection of ", style="dim")
        line.append_text(safe(short_id(parent.id, wid, 60), style="bold"))
        line.append(" (p opens it): ", style="dim")
        line.append_text(safe(parent.query))
        parts.append(line)

    comp = detail.composition
    if comp and not parent:
        parts.append(_heading(f"Composition {short_id(comp.id, wid, 40)}"))
        parts.append(Text(f"{comp.pattern} ({comp.status})"))
        if comp.reason:
            parts.append(safe(comp.reason, style="italic"))

    parts.append(_heading(f"Active clauses ({len(detail.clauses)})"))
    for c in detail.clauses:
        parts.append(_clause(c, wid))
    if not detail.clauses:
        parts.append(Text("none recorded", style="italic"))

    parts.append(_heading("Contract"))
    for rows, title in ((item.required, "R: the response must contain"),
                        (item.forbidden, "F: the response must not contain")):
        parts.append(Text(title, style="bold"))
        if not rows:
            parts.append(Text("  (none)", style="dim"))
        for entry in rows:
            line = Text(f"  {entry.id} ", style="bold")
            line.append(f"[{entry.kind}] ", style="dim")
            line.append_text(safe(entry.text))
            if entry.clause_id:
                line.append(f"  ({short_id(entry.clause_id, wid, 30)})", style="dim")
            parts.append(line)
    for key, value in (("gate", item.gate), ("route", item.route)):
        if value:
            parts.append(_field(key, value))
    return Group(*parts)


def _clause(c: ClauseRow | MissingClause, wid: str) -> RenderableType:
    if isinstance(c, MissingClause):
        return Text(f"{short_id(c.id, wid, 40)} (not in the database)", style="italic")
    head = Text(f"{short_id(c.id, wid, 40)} ", style="bold")
    head.append(f"{c.effect or 'no effect (audit note)'}", style="bold")
    head.append(f"  policies {', '.join(c.policy_ids)}", style="dim")
    return Group(head, _field("  trigger", c.trigger), _field("  scope", c.scope),
                 _field("  source", c.source_span))


class ItemOverview(Static):
    def show(self, item: ItemDetail) -> None:
        self.update(render_item(item))
