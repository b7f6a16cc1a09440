"""Marks on one response side by side: the selected judge, every annotator's current label and
the adjudication, one row per contract item, with the error and direction each set of marks
gives (computed by `copal_tui.domain.contract.evaluate`, never read from a stated verdict) and
the disagreements flagged.

`sources()` and `disagreements()` are pure functions (tested directly); `marks_table()` renders
them as a `rich` table whose every untrusted string goes through `safe`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from copal_tui.domain.contract import evaluate, item_kinds
from copal_tui.services.annotation.views import Annotation
from copal_tui.services.item_views import ItemJudgment, ItemResponse, ItemRow
from copal_tui.tui.safe import safe

PRESENT, ABSENT, UNKNOWN = "\u2713", "\u00b7", "\u2014"
SHORT_DIRECTION = {"none": "ok", "over_enforcement": "over", "under_enforcement": "under",
                   "mixed": "mixed"}


@dataclass(frozen=True)
class Source:
    """One set of marks on a response: a judge, an annotator or the adjudicator."""

    name: str
    kind: str  # judge | human | adjudication
    observed: frozenset[str] | None  # None: no item-level marks (full-policy judge, bare error)
    error: int | None
    direction: str | None
    failure: str | None = None
    note: str | None = None


def contract_ids(item: ItemRow) -> tuple[list[str], list[str]]:
    return [c.id for c in item.required], [c.id for c in item.forbidden]


def _marked(item: ItemRow, name: str, kind: str, observed: list[str] | None,
            error: int | None, direction: str | None, note: str | None) -> Source:
    # Item-level marks decide the error and direction (the contract rule); only a bare error
    # (a full-policy judge) is taken as stated.
    if observed is not None:
        req, forb = contract_ids(item)
        verdict = evaluate(req, forb, observed, item_kinds([c.view() for c in item.required]))
        return Source(name, kind, frozenset(observed), verdict.error, verdict.direction.value,
                      note=note)
    return Source(name, kind, None, error, direction, note=note)


def _judge_source(item: ItemRow, j: ItemJudgment) -> Source:
    if j.failure:
        return Source("judge", "judge", None, None, None, failure=str(j.failure))
    return _marked(item, "judge", "judge", j.observed, j.error, j.direction, None)


def _label_source(item: ItemRow, name: str, kind: str, lab: Annotation) -> Source:
    return _marked(item, name, kind, lab.get("observed"), lab.get("error"),
                   lab.get("direction"), lab.get("note"))


def sources(item: ItemRow, resp: ItemResponse, judge: tuple[str, str] | None) -> list[Source]:
    """The selected judge (if it judged this response), annotators, then the adjudication."""
    out = []
    if judge is not None and judge in resp.judgments:
        out.append(_judge_source(item, resp.judgments[judge]))
    for label in resp.labels:
        out.append(_label_source(item, str(label.annotator), "human", label))
    if resp.adjudication is not None:
        out.append(_label_source(item, "adj.", "adjudication", resp.adjudication))
    return out


def reference(marks: list[Source]) -> tuple[int | None, str]:
    """The human reference error by the report's rule (`copal_tui.metrics.reference`, so
    this screen flags the responses the report counts as disagreements): the adjudication,
    else the annotators' majority; a tie has none."""
    from copal_tui.metrics.reference import ADJUDICATED, MAJORITY, reference_rule

    humans = [s.error for s in marks if s.kind == "human" and s.error is not None]
    decided = [s.error for s in marks if s.kind == "adjudication" and s.error is not None][:1]
    ref, source = reference_rule(1, [0] * len(humans), humans, [0] * len(decided), decided)
    basis = {ADJUDICATED: "adjudication", MAJORITY: "annotators"}.get(int(source[0]), "none")
    return (None if ref[0] < 0 else int(ref[0])), basis


def differing_items(item: ItemRow, marks: list[Source]) -> list[str]:
    """Contract items on which the sets of item-level marks do not all agree."""
    req, forb = contract_ids(item)
    marked = [s.observed for s in marks if s.observed is not None]
    if len(marked) < 2:
        return []
    return [cid for cid in req + forb if len({cid in m for m in marked}) > 1]


def disagreements(item: ItemRow, marks: list[Source]) -> list[str]:
    """Plain-language flags: annotators disagreeing, the judge against the reference, items."""
    out = []
    humans = [s for s in marks if s.kind == "human" and s.error is not None]
    if len({s.error for s in humans}) > 1:
        out.append("annotators disagree: " + ", ".join(f"{s.name} {s.error}" for s in humans))
    judge = next((s for s in marks if s.kind == "judge"), None)
    ref, basis = reference(marks)
    if judge is not None and judge.error is not None and ref is not None and judge.error != ref:
        verb = "says" if basis == "adjudication" else "say"
        out.append(f"judge says error {judge.error}, {basis} {verb} {ref}")
    items = differing_items(item, marks)
    if items:
        out.append("marks differ on " + ", ".join(items))
    return out


def flag_summary(item: ItemRow, marks: list[Source]) -> str:
    """A short cell for the responses table: `J\u2260ref`, `H\u2260H`, `items` or ``."""
    parts = []
    humans = {s.error for s in marks if s.kind == "human" and s.error is not None}
    if len(humans) > 1:
        parts.append("H\u2260H")
    judge = next((s for s in marks if s.kind == "judge"), None)
    ref, _ = reference(marks)
    if judge is not None and judge.error is not None and ref is not None and judge.error != ref:
        parts.append("J\u2260ref")
    if not parts and differing_items(item, marks):
        parts.append("items")
    return ("\u2691 " + " ".join(parts)) if parts else ""


def verdict_text(s: Source | None) -> Text:
    if s is None:
        return Text(UNKNOWN, style="dim")
    if s.failure:
        return Text("failed", style="italic")
    if s.error is None:
        return Text(UNKNOWN, style="dim")
    word = SHORT_DIRECTION.get(s.direction or "", s.direction or "")
    return Text(f"{s.error} {word}", style="bold" if s.error else "")


def marks_table(item: ItemRow, marks: list[Source]) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("item", no_wrap=True)
    table.add_column("contract item", ratio=1)
    for s in marks:
        table.add_column(safe(s.name), justify="center", no_wrap=True, max_width=10)
    table.add_column("\u2260", justify="center", no_wrap=True)
    differ = set(differing_items(item, marks))
    for side, prefix in ((item.required, "must"), (item.forbidden, "must not")):
        for c in side:
            head = Text(c.id, style="bold")
            head.append(f" {prefix}", style="dim")
            cells = []
            for s in marks:
                if s.observed is None:
                    cells.append(Text(UNKNOWN, style="dim"))
                elif c.id in s.observed:
                    cells.append(Text(PRESENT, style="bold"))
                else:
                    cells.append(Text(ABSENT))
            flag = Text("\u2260", style="bold") if c.id in differ else Text("")
            table.add_row(head, safe(c.text), *cells, flag)
    table.add_row(Text("error", style="bold"), Text("computed from the marks", style="dim"),
                  *[verdict_text(s) for s in marks], Text(""))
    return table
