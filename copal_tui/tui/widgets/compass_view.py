"""Renderables for COMPASS suites: a query with its verification, a response with each judge's
verdict and the annotators' labels, the policy list, and verdict words.

Pure functions from the store's typed rows to Rich renderables, shared by the query screen and the COMPASS
label queue. Every stored string (policies, queries, responses, rationales, notes, even model
names) is untrusted and goes through `safe`; nothing is ever parsed as markup. A verdict is
spelled out in words (refused / answered, compliant / violates, aligned / misaligned), so
colour never carries the meaning alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from rich.console import Group, RenderableType
from rich.text import Text

from copal_tui.services.item_views import (
    CompassJudgment,
    CompassLabel,
    CompassResponse,
    PolicyRow,
    QueryDetail,
)
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.long_text import LongText

MODE_WORDS = {"direct_violation": "direct violation",
              "refusal_answer_hybrid": "refusal-answer hybrid",
              "indirect_violation": "indirect violation"}


def heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold underline")


def _flag(value: Any, yes: str, no: str) -> str:
    return "?" if value is None else (yes if value else no)


def verdict_words(refused: Any, compliant: Any, aligned: Any = None,
                  failure_mode: str | None = None) -> str:
    """`refused · compliant · aligned`; unknown parts as `?`, the failure mode when given."""
    parts = [_flag(refused, "refused", "answered"), _flag(compliant, "compliant", "violates")]
    if aligned is not None:
        parts.append("aligned" if aligned else "misaligned")
    if failure_mode:
        parts.append(MODE_WORDS.get(failure_mode, failure_mode))
    return " \u00b7 ".join(parts)


class QueryFacts(Protocol):
    """What `query_meta` shows of a query: a browsed query or a label queue's context."""

    @property
    def query_type(self) -> str: ...
    @property
    def strategy(self) -> str | None: ...
    @property
    def form(self) -> str | None: ...
    @property
    def policy_id(self) -> str: ...


class PrefilterFacts(Protocol):
    """The pre-filter's decision on a response (a browsed response or a label context)."""

    @property
    def prefilter(self) -> str | None: ...
    @property
    def prefilter_model(self) -> str | None: ...
    @property
    def prefilter_reason(self) -> str | None: ...


def verdict_text(row: CompassJudgment | CompassLabel | None) -> Text:
    """A short verdict cell for tables (a judgment or a label row, or None)."""
    if row is None:
        return Text("-", style="dim")
    if isinstance(row, CompassJudgment) and row.failure:
        return Text("failed", style="bold")
    aligned = row.aligned
    mark = "" if aligned is None else ("\u2713 " if aligned else "\u2717 ")
    words = (_flag(row.refused, "ref", "ans") + "/" + _flag(row.compliant, "ok", "viol"))
    return Text(mark + words, style="bold" if aligned == 0 else "")


def policy_line(p: PolicyRow, intended: str | None = None) -> Text:
    is_intended = p.id == intended
    line = Text("\u25b6 " if is_intended else "  ", style="bold")
    line.append_text(safe(one_line(p.id, 40), style="bold"))
    line.append(f" ({p.kind}) ", style="dim")
    line.append_text(safe(p.text))
    if is_intended:
        line.append("  \u2190 intended", style="bold")
    return line


def policies_block(policies: Sequence[PolicyRow], intended: str | None) -> list[Text]:
    """Allowlist first, then denylist, each in the world's order."""
    ordered = sorted(policies, key=lambda p: p.kind != "allow")
    return [policy_line(p, intended) for p in ordered] or [Text("(no policies)", style="dim")]


def query_meta(q: QueryFacts) -> str:
    strategy = q.strategy
    return " \u00b7 ".join(x for x in (
        q.query_type, strategy.replace("_", " ") if strategy else "",
        q.form or "", f"policy {one_line(q.policy_id, 30)}") if x)


def query_renderable(q: QueryDetail, policies: Sequence[PolicyRow]) -> RenderableType:
    """The query tab: meta, the text, the intended policy, verification, parent, attributes."""
    parts: list[RenderableType] = [Text(query_meta(q), style="bold"), heading("Query"),
                                   safe(q.text), heading("Intended policy")]
    intended = q.intended
    if intended is None:
        parts.append(safe(f"{q.policy_id} (not a policy of this world)", style="bold"))
    else:
        parts.append(policy_line(intended))
    parts.append(heading("Verification"))
    status = Text(q.status, style="bold")
    if q.matched is not None:
        status.append("  matched: ")
        status.append_text(safe(", ".join(q.matched) or "none"))
    parts.append(status)
    if q.reason:
        parts.append(safe(q.reason))
    if q.parent:
        parts.append(heading("Base query (parent)"))
        parts.append(safe(f"{q.parent.id} ({q.parent.query_type})", style="dim"))
        parts.append(safe(q.parent.text))
    if q.children:
        parts.append(Text(f"\n{q.children} edge queries derive from this one "
                          "(r in the list filters them)", style="dim"))
    if q.attributes:
        parts.append(heading("Attributes"))
        for key, value in sorted(q.attributes.items()):
            parts.append(safe(f"{key}: {value}"))
    parts.append(heading("Policies of the world"))
    parts.extend(policies_block(policies, q.policy_id))
    return Group(*parts)


def prefilter_line(r: PrefilterFacts) -> Text | None:
    if not r.prefilter:
        return None
    line = Text(f"pre-filter {r.prefilter}", style="bold")
    if r.prefilter_model:
        line.append_text(safe(f" by {one_line(r.prefilter_model, 40)}"))
    if r.prefilter_reason:
        line.append(": ")
        line.append_text(safe(r.prefilter_reason))
    return line


def judgment_lines(judgments: Sequence[CompassJudgment]) -> list[RenderableType]:
    if not judgments:
        return [Text("no judge has judged this response", style="italic")]
    out: list[RenderableType] = []
    for j in judgments:
        line = safe(one_line(j.judge, 50), style="bold")
        if j.failure:
            line.append("  judgment failed: ")
            line.append_text(safe(j.failure))
            out.append(line)
            continue
        line.append("  " + verdict_words(j.refused, j.compliant, j.aligned, j.failure_mode))
        out.append(line)
        if j.rationale:
            out.append(safe(j.rationale, style="dim"))
    return out


def label_lines(labels: Sequence[CompassLabel]) -> list[RenderableType]:
    if not labels:
        return [Text("no human labels yet", style="italic")]
    out: list[RenderableType] = []
    for lab in labels:
        line = safe(one_line(lab.annotator, 30), style="bold")
        line.append("  " + verdict_words(lab.refused, lab.compliant, lab.aligned,
                                         lab.failure_mode))
        out.append(line)
        if lab.note:
            out.append(safe(lab.note, style="dim"))
    return out


def response_renderable(r: CompassResponse, position: str = "",
                        text: LongText | None = None) -> RenderableType:
    """One response in full: text (`text`, its part on screen; default: the first),
    pre-filter decision, every judge's verdict, human labels."""
    title = Text(position + "  " if position else "", style="bold")
    title.append_text(safe(one_line(r.model, 50), style="bold"))
    title.append(f"  \u00b7  variant {r.variant}", style="dim")
    parts: list[RenderableType] = [title]
    pre = prefilter_line(r)
    if pre is not None:
        parts.append(pre)
    if r.failure:
        parts.append(Text("the model call failed: ", style="bold") + safe(r.failure))
    parts.append(heading("Response"))
    parts += (text or LongText.of(r.text)).renderables("(no text)", empty_style="italic")
    parts.append(heading("Judges"))
    parts.extend(judgment_lines(r.judgments))
    parts.append(heading("Human labels"))
    parts.extend(label_lines(r.labels))
    return Group(*parts)
