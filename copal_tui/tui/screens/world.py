"""One world: a summary line and five tabs (policies, clauses, compositions, items, runs), each a
paged, filterable list, then a tab for each registered suite whose descriptor names a
`world_tab` (a `WorldTab`) when the world has that suite's rows, in the registry's order, each
on the next digit key. Enter opens an item or a suite tab's row, or shows a policy / clause /
composition / run in full; `r` follows a row to its related rows (policy -> its clauses -> their
compositions -> their items; a suite tab's row as its `WorldTab` says). A tab's list is built
the first time the tab is shown, and kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from copal_tui.services import browse
from copal_tui.services.browse import Page, PageRequest, WorldSummary
from copal_tui.tui.safe import safe
from copal_tui.tui.screens.record import RecordScreen
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.paged_table import Column, PagedTable, fmt_rate, short_id
from copal_tui.tui.widgets.screen_commands import ScreenCommands
from copal_tui.tui.widgets.world_tab import WorldTab, suite_bindings, suite_tabs, tab_binding

if TYPE_CHECKING:
    from copal_tui.services.item_views import ClauseRow, MissingClause

TABS = ["policies", "clauses", "compositions", "items", "runs"]


def _tick(value: object) -> str:
    return "\u2713" if value else "\u00b7"


def _members(ids: str | list[str], world_id: str) -> str:
    values = json.loads(ids) if isinstance(ids, str) else ids
    return " + ".join(short_id(v, world_id, 12) for v in values)


def _columns(world_id: str) -> dict[str, list[Column]]:
    def sid(width: int) -> Callable[[dict[str, Any]], str]:
        return lambda r: short_id(r["id"], world_id, width)

    return {
        "policies": [
            Column("id", "id", 6),
            Column("kind", "kind", 9),
            Column("clauses", "cl.", 3, hide_below=100, justify="right"),
            Column("text", "text"),
        ],
        "clauses": [
            Column("id", "id", 12, render=sid(12)),
            Column("effect", "effect", 12, render=lambda r: r["effect"] or "(note)"),
            Column("policy_ids", "policies", 9, hide_below=100,
                   render=lambda r: ",".join(json.loads(r["policy_ids"]))),
            Column("trigger", "trigger"),
            Column("scope", "scope", hide_below=100),
            Column("source_span", "source span", hide_below=140),
        ],
        "compositions": [
            Column("id", "id", 12, render=sid(12)),
            Column("pattern", "pattern", 20),
            Column("status", "status", 9, hide_below=100),
            Column("clause_ids", "clauses", 16, render=lambda r: _members(r["clause_ids"],
                                                                            world_id)),
            Column("items", "items", 5, justify="right"),
            Column("reason", "reason"),
        ],
        "items": [
            Column("id", "id", 14, render=sid(14)),
            Column("pattern", "pattern", 19, hide_below=110),
            Column("facet", "facet", 19, render=lambda r: r["facet"] or r["method"]),
            Column("method", "method", 10, hide_below=140),
            Column("selected", "sel", 3, render=lambda r: _tick(r["selected"])),
            Column("responses", "resp", 4, justify="right"),
            Column("labelled", "lab.", 4, hide_below=100, justify="right"),
            Column("judge_err", "err J", 5, render=lambda r: fmt_rate(r["judge_err"]),
                   justify="right"),
            Column("query", "query"),
        ],
        "runs": [
            Column("id", "run", 32, hide_below=120),
            Column("stage", "stage", 9),
            Column("status", "status", 11),
            Column("started_at", "started (UTC)", 16,
                   render=lambda r: (r["started_at"] or "")[:16].replace("T", " ")),
            Column("calls", "calls", 6, justify="right"),
            Column("cache_hits", "hits", 6, justify="right"),
            Column("failures", "fail", 5, justify="right"),
            Column("cost", "cost", 8, render=lambda r: f"${r['cost']:.4f}", justify="right"),
        ],
    }


PLACEHOLDERS = {
    "policies": "/ filter policies: words, or kind:deny",
    "clauses": "/ filter clauses: words, or effect:withhold policy:P04",
    "compositions": "/ filter: words, or pattern:scope status:confirmed clause:C09",
    "items": "/ filter items: words, or facet: pattern: method: selected:yes erred:yes",
    "runs": "/ filter runs: words, or stage:judge status:done",
}


class WorldScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("enter", "open_row", "Open", show=False, id="browse.open"),
        # The footer fits 80 columns beside the palette: Related is in `?` and the palette
        # only, and Back shows as `b` (esc works too).
        Binding("r", "related", "Related", show=False, id="world.related"),
        Binding("b,escape", "back", "Back", id="browse.back"),
        *[tab_binding(n, name, name.capitalize()) for n, name in enumerate(TABS, 1)],
        # The suites' tabs registered by now (the keymap check reads a class's bindings).
        *suite_bindings(suite_tabs(len(TABS) + 1)),
    ]

    def __init__(self, world_id: str, tab: str = "policies") -> None:
        super().__init__()
        self.world_id = world_id
        self.summary: WorldSummary | None = None
        self.initial_tab = tab
        self.tabs = list(TABS)
        self._tables: dict[str, PagedTable] = {}  # the tabs' lists built so far, by tab
        self.suite_tabs = suite_tabs(len(TABS) + 1)
        # A suite registered after this module was imported has no binding in the class.
        for binding in suite_bindings(self.suite_tabs):
            bound = self._bindings.key_to_bindings.setdefault(binding.key, [])
            if all(b.id != binding.id for b in bound):
                bound.append(binding)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A suite tab's key exists only where the tab does (and stays out of `?` elsewhere).
        return not (action == "tab" and bool(parameters) and parameters[0] not in self.tabs)

    def compose(self) -> ComposeResult:
        self.summary = browse.world_summary(self.app.db, self.world_id)  # type: ignore[attr-defined]
        if self.summary is not None:
            self.tabs += [name for name, (_n, tab) in self.suite_tabs.items()
                          if tab.count(self.summary) is not None]
        if self.initial_tab not in self.tabs:
            self.initial_tab = "policies"
        yield Header()
        yield Static(self._summary(), id="world-summary", classes="summary")
        with TabbedContent(initial=self.initial_tab):
            for name in self.tabs:
                with _Pane(self._tab_title(name), id=name):
                    # Only the first tab's list is built now; the others on first showing. All
                    # lists at once cost a page query each, racing the first paint, and every
                    # widget on a screen adds to each refresh.
                    if name == self.initial_tab:
                        yield self._tables.setdefault(name, self._new_table(name))
        yield Footer()

    def _suite_tab(self, name: str) -> WorldTab | None:
        found = self.suite_tabs.get(name)
        return None if found is None else found[1]

    def _tab_title(self, name: str) -> str:
        if name in TABS:
            return f"{TABS.index(name) + 1} {name.capitalize()}"
        n, tab = self.suite_tabs[name]
        return f"{n} {tab.title}" if n <= 9 else tab.title

    def _new_table(self, name: str, filter_text: str = "") -> PagedTable:
        tab = self._suite_tab(name)
        if tab is None:
            fetch, columns, hint = FETCH[name], _columns(self.world_id)[name], PLACEHOLDERS[name]
        else:
            fetch, columns, hint = tab.page, tab.columns(self.world_id), tab.hint
        return PagedTable(partial(_world_fetch, fetch, self.world_id), columns,
                          id=f"{name}-table", placeholder=hint, filter_text=filter_text)

    def table_of(self, name: str, filter_text: str | None = None) -> PagedTable:
        """The list of tab `name`, built (and mounted in its pane) when first asked for; a
        `filter_text` replaces its filter line."""
        found = self._tables.get(name)
        if found is None:
            # Kept by name at once, not looked up in the DOM: a second call while the mount is
            # still under way (a tab key as the screen opens) must not build a second list.
            found = self._tables[name] = self._new_table(name, filter_text or "")
            self.query_one(f"TabPane#{name}", TabPane).mount(found)
        elif filter_text is not None:
            found.set_filter(filter_text)
        return found

    def _summary(self, stats: dict[str, Any] | None = None) -> Text:
        row = self.summary
        if row is None:
            return Text(f"no world {self.world_id!r}", style="bold")
        # Two lines, each cut rather than wrapped, so the tabs never move at 80 columns.
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append_text(safe(row.id, style="bold"))
        out.append("  ")
        out.append_text(safe(row.name))
        out.append(f"  \u00b7  risk {row.risk_tier}  \u00b7  ")
        out.append_text(safe(row.industry))
        out.append("\n")
        # Most telling first: the line is cut at the right edge on narrow terminals. The
        # response statistics arrive from a worker (they cost a pass over the responses).
        if stats is None:
            out.append("counting responses and labels\u2026 \u00b7 ", style="dim italic")
        else:
            out.append(
                f"err J {fmt_rate(stats['judge_err'])} H {fmt_rate(stats['human_err'])} \u00b7 "
                f"{stats['responses']} resp, {stats['labelled']} labelled \u00b7 ", style="dim")
        out.append(
            f"{row.items} items ({row.selected} sel) \u00b7 {row.compositions} comp "
            f"\u00b7 {row.clauses} clauses \u00b7 {row.policies} policies", style="dim")
        for name in self.tabs:
            tab = self._suite_tab(name)
            if tab is not None:
                out.append(f" \u00b7 {tab.count(row)} {tab.counted}", style="dim")
        return out

    @work(thread=True, exclusive=True, group="world-stats")
    def _load_stats(self, app: Any, db_path: Any) -> None:
        with app.worker_db() as db:
            stats = browse.world_stats(db, [self.world_id]).get(self.world_id)
        if stats is not None and not get_current_worker().is_cancelled:
            app.call_from_thread(self._show_stats, stats)

    def _show_stats(self, stats: dict[str, Any]) -> None:
        self.query_one("#world-summary", Static).update(self._summary(stats))

    def on_mount(self) -> None:
        self.title = f"copal \u00b7 {self.world_id}"
        self._focus_table()
        self._load_stats(self.app, self.app.db_path)  # type: ignore[attr-defined]

    def _focus_table(self) -> None:
        table = self.active_table()
        if table.is_mounted:
            table.table.focus()
        else:  # built for this tab a moment ago: its rows exist once it is mounted
            self.call_after_refresh(self._focus_table)

    def active_table(self) -> PagedTable:
        return self.table_of(self.query_one(TabbedContent).active)

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self.table_of(self.query_one(TabbedContent).active)
        self.call_after_refresh(self._focus_table)

    # ------------------------------------------------------------------ actions

    def action_tab(self, name: str) -> None:
        # Focus follows in _tab_changed (TabActivated), once the pane is shown.
        tabs = self.query_one(TabbedContent)
        if tabs.active == name:
            self._focus_table()
        tabs.active = name

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_open_row(self) -> None:
        row = self.active_table().current_row()
        if row is not None:
            self._open(self.query_one(TabbedContent).active, row)

    @on(PagedTable.Selected)
    def _selected(self, event: PagedTable.Selected) -> None:
        self._open((event.table.id or "").removesuffix("-table"), event.row)

    def _open(self, tab: str, row: dict[str, Any]) -> None:
        spec = self._suite_tab(tab)
        if tab == "items" or spec is not None:
            screen, key = ("item", "item_id") if spec is None else (spec.opens, spec.opens_with)
            self.app.action_open(screen, **{key: row["id"]})  # type: ignore[attr-defined]
            return
        shown = {"policies": self._policy, "clauses": self._clause,
                 "compositions": self._composition, "runs": self._run}[tab](row["id"])
        if shown is not None:
            self.app.push_screen(RecordScreen(*shown))

    def action_related(self) -> None:
        tab = self.query_one(TabbedContent).active
        row = self.active_table().current_row()
        if row is None:
            return
        short = short_id(row["id"], self.world_id, 200)
        target = {"policies": ("clauses", f"policy:{short}"),
                  "clauses": ("compositions", f"clause:{short}"),
                  "compositions": ("items", f"composition:{short}"),
                  "items": ("items", f"parent:{short}")}.get(tab)
        spec = self._suite_tab(tab)
        if spec is not None:  # a suite tab's related rows are in its own list
            target = None if spec.related is None else (tab, spec.related(row, self.world_id))
        if target is None:
            self.notify("runs have no related rows here; enter shows the manifest" if spec is None
                        else f"{spec.title} rows have no related rows here")
            return
        name, text = target
        self.table_of(name, text)
        self.action_tab(name)

    # ------------------------------------------------------------------ full records

    def _policy(self, policy_id: str) -> tuple[str, list[tuple[str, RenderableType]]] | None:
        found = browse.policy_record(self.app.db, self.world_id, policy_id)  # type: ignore[attr-defined]
        if found is None:
            return None
        pol = found.policy
        clauses = [_clause_line(c, self.world_id) for c in found.clauses] or [Text("none yet")]
        return (f"policy {policy_id} ({pol.kind})",
                [("Text", safe(pol.text)), ("Clauses grounded from it", Group(*clauses))])

    def _clause(self, clause_id: str) -> tuple[str, list[tuple[str, RenderableType]]] | None:
        found = browse.clause_record(self.app.db, self.world_id, clause_id)  # type: ignore[attr-defined]
        if found is None:
            return None
        c = found.clause
        policies = []
        for pid, pol in found.policies:
            line = Text(f"{pid}: ", style="bold")
            line.append_text(safe(pol.text if pol else "(missing)"))
            policies.append(line)
        sections: list[tuple[str, RenderableType]] = [
            ("Effect", Text(c.effect or "none (kept as an audit note)")),
            ("Trigger", safe(c.trigger)), ("Scope", safe(c.scope)),
            ("Source span", safe(c.source_span)), ("Policies", Group(*policies)),
            ("Confidence", Text("-" if c.confidence is None else f"{c.confidence:.2f}")),
        ]
        if c.audit_note:
            sections.append(("Audit note", safe(c.audit_note)))
        return f"clause {clause_id}", sections

    def _composition(self, comp_id: str) -> tuple[str, list[tuple[str, RenderableType]]] | None:
        found = browse.composition_record(self.app.db, comp_id)  # type: ignore[attr-defined]
        if found is None:
            return None
        comp = found.composition
        members = [_clause_line(c, self.world_id) for c in found.members]
        return (f"composition {comp_id}", [
            ("Pattern", Text(f"{comp.pattern} ({comp.status})")),
            ("Reason", safe(comp.reason or "-")),
            ("Member clauses", Group(*members)),
        ])

    def _run(self, run_id: str) -> tuple[str, list[tuple[str, RenderableType]]] | None:
        run = browse.run_record(self.app.db, run_id)  # type: ignore[attr-defined]
        if run is None:
            return None
        head = Text(f"{run.stage} \u00b7 {run.status} \u00b7 started {run.started_at}"
                    f" \u00b7 finished {run.finished_at or '-'}\ncalls {run.calls} \u00b7 "
                    f"cache hits {run.cache_hits} \u00b7 failures {run.failures} \u00b7 "
                    f"cost ${run.cost:.4f}")
        manifest = run.manifest if isinstance(run.manifest, str) else json.dumps(
            run.manifest, indent=2, ensure_ascii=False, sort_keys=True)
        return f"run {run_id}", [("Run", head), ("Manifest", safe(manifest))]


class _Pane(TabPane):
    """A tab's pane that does not take the tabs over when a widget in it gets the focus
    (TabPane's default). The screen focuses a list only in the tab already shown; a focus that
    lands late (a busy start, a key pressed as the screen opens) would otherwise switch back to
    the first tab after the user's key chose another."""

    def _on_descendant_focus(self, event: events.DescendantFocus) -> None:
        event.prevent_default()  # TabPane's handler, next in the MRO, posts the switch


FETCH: dict[str, Callable[[Any, str, PageRequest], Page]] = {
    "policies": browse.policies_page,
    "clauses": browse.clauses_page,
    "compositions": browse.compositions_page,
    # `disagree:` and `cell:` need the report's reference rule: the service applies it.
    "items": browse.items_page,
    "runs": browse.runs_page,
}


def _world_fetch(fetch: Callable[[Any, str, PageRequest], Page], world_id: str,
                 db: Any, req: PageRequest) -> Page:
    return fetch(db, world_id, req)


def _clause_line(c: ClauseRow | MissingClause, world_id: str) -> Text:
    from copal_tui.services.item_views import MissingClause  # loaded when a record opens

    line = Text(f"{short_id(c.id, world_id, 40)} ", style="bold")
    if isinstance(c, MissingClause):
        return line.append("(missing)")
    line.append(f"{c.effect or 'note'}: ")
    line.append_text(safe(c.trigger))
    line.append(" \u2192 ")
    line.append_text(safe(c.scope))
    return line
