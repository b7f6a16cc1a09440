"""The item itself: its query, the trap it sets, what it projects from, its composition, the
clauses it activates (trigger, scope, effect, source span) and its handling contract (the R
items a response must contain, the F items it must not), each item numbered as annotators see
it. Every untrusted string is rendered through `safe`."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from copal_tui.tui.safe import safe
from copal_tui.tui.widgets.paged_table import short_id


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold")


def _field(name: str, value: str | None) -> Text:
    line = Text(f"{name}: ", style="dim")
    line.append_text(safe(value or "-"))
    return line


def render_item(item: dict[str, Any]) -> RenderableType:
    wid = item["world_id"]
    parts: list[RenderableType] = []
    head = Text()
    head.append_text(safe(item["pattern"] or item["method"], style="bold"))
    if item.get("facet"):
        head.append(" / ")
        head.append_text(safe(item["facet"], style="bold"))
    head.append(f"  \u00b7  method {item['method']}  \u00b7  "
                f"{'selected' if item['selected'] else 'not selected'}  \u00b7  "
                f"{item['response_total']} responses", style="dim")
    parts.append(head)
    parts.append(_heading("Query"))
    parts.append(safe(item["query"]))
    if item.get("trap"):
        parts.append(_field("trap", item["trap"]))
    parent = item.get("parent")
    if parent:
        line = Text("single-policy projection of ", style="dim")
        line.append_text(safe(short_id(parent["id"], wid, 60), style="bold"))
        line.append(" (p opens it): ", style="dim")
        line.append_text(safe(parent["query"]))
        parts.append(line)

    comp = item.get("composition")
    if comp and not parent:
        parts.append(_heading(f"Composition {short_id(comp['id'], wid, 40)}"))
        parts.append(Text(f"{comp['pattern']} ({comp['status']})"))
        if comp.get("reason"):
            parts.append(safe(comp["reason"], style="italic"))

    parts.append(_heading(f"Active clauses ({len(item['clauses'])})"))
    for c in item["clauses"]:
        parts.append(_clause(c, wid))
    if not item["clauses"]:
        parts.append(Text("none recorded", style="italic"))

    parts.append(_heading("Contract"))
    for side, title in (("required", "R: the response must contain"),
                        ("forbidden", "F: the response must not contain")):
        parts.append(Text(title, style="bold"))
        rows = item.get(side) or []
        if not rows:
            parts.append(Text("  (none)", style="dim"))
        for c in rows:
            line = Text(f"  {c['id']} ", style="bold")
            line.append(f"[{c.get('kind', 'content')}] ", style="dim")
            line.append_text(safe(c.get("text")))
            if c.get("clause_id"):
                line.append(f"  ({short_id(c['clause_id'], wid, 30)})", style="dim")
            parts.append(line)
    for key in ("gate", "route"):
        if item.get(key):
            parts.append(_field(key, item[key]))
    return Group(*parts)


def _clause(c: dict[str, Any], wid: str) -> RenderableType:
    if c.get("missing"):
        return Text(f"{short_id(c['id'], wid, 40)} (not in the database)", style="italic")
    head = Text(f"{short_id(c['id'], wid, 40)} ", style="bold")
    head.append(f"{c.get('effect') or 'no effect (audit note)'}", style="bold")
    head.append(f"  policies {', '.join(c.get('policy_ids') or [])}", style="dim")
    return Group(head, _field("  trigger", c["trigger"]), _field("  scope", c["scope"]),
                 _field("  source", c["source_span"]))


class ItemOverview(Static):
    def show(self, item: dict[str, Any]) -> None:
        self.update(render_item(item))
