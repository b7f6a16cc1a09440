"""The cases behind a figure: every response a count of the report rests on, with the judge's
verdict, the human reference and how it was formed, and its confusion cell.

Shared by `copal cases`, the TUI's lists (the cases screen, the items list's `disagree:` and
`cell:` filters) and the export's `validity_cases` file. The reference comes from
`copal_tui.metrics.reference.reference_rule`, as the report's `frame.reference` does, over the
same current labels and decisions (`store.browse.cases`), so a list has exactly the responses of
the count it explains (cell fp of a judge setting: the report's `fp` of that setting, one by
one). Each public read is one read transaction (the judged rows and the votes of one snapshot).
A case is a `copal_tui.export.case_record.Case`.

Error is the positive class: tp = judge error, reference error; fp = judge error, reference no
error; fn = judge no error, reference error; tn = neither. A response without a reference (not
labelled, or a tie) has no cell; asking for a cell or `disagree` keeps only those with one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from copal_tui.domain.spelling import canonical, spelled_suffix
from copal_tui.export.case_record import Case
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.options import MODES, parse_setting, pick
from copal_tui.metrics.reference import CELL_NAMES as CELLS
from copal_tui.metrics.reference import SOURCES, reference_rule
from copal_tui.services import reading
from store.browse import cases as sql
from store.browse import lists
from store.browse.lists import Filter, FilterError, Page, PageRequest
from store.db import Database

DISAGREE = ("fp", "fn")
AGREE = ("tp", "tn")


@dataclass(frozen=True)
class CaseSpec:
    """Which cases: a judge setting's judged responses narrowed like a report cell (see
    `store.browse.cases.CaseQuery`), and optionally to some confusion cells. `judge=None` means
    the judge the report would pick as primary in `mode`."""

    judge: str | None = None
    mode: str = "contract"
    worlds: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    pattern: str | None = None
    facet: str | None = None
    composed: bool = False
    judge_error: int | None = None
    direction: str | None = None
    cells: tuple[str, ...] = ()
    search: str = ""


# ------------------------------------------------------------------ reading cases


def pick_setting(db: Database, judge: str | None, mode: str,
                 worlds: Sequence[str] = ()) -> tuple[str, str] | None:
    """The judge setting `judge` names in `mode`, or the report's primary when None
    (`copal_tui.metrics.options.pick`; ReportError for a judge without usable judgments)."""
    with reading(db):
        counts = sql.setting_counts(db, worlds)
    return pick(counts, judge, mode, "judge")


def resolve(db: Database, spec: CaseSpec) -> CaseSpec:
    """`spec` with its judge named (the default one when it was None); ValueError if none."""
    if spec.judge is not None:
        return spec
    found = pick_setting(db, None, spec.mode, spec.worlds)
    if found is None:
        raise ValueError("no judge setting has usable judgments")
    return replace(spec, judge=found[0], mode=found[1])


def _query(spec: CaseSpec, **kw: Any) -> sql.CaseQuery:
    assert spec.judge is not None
    return sql.CaseQuery(judge=spec.judge, mode=spec.mode, worlds=spec.worlds,
                         models=spec.models, pattern=spec.pattern, facet=spec.facet,
                         composed=spec.composed, judge_error=spec.judge_error,
                         direction=spec.direction, search=spec.search, **kw)


def with_reference(db: Database, spec: CaseSpec, rows: Sequence[sql.JudgedRow],
                   everything: bool = False) -> list[Case]:
    """The judged rows of `store.browse.cases.judged` as cases, with their reference labels (the
    votes read for these responses only, or for all when `everything`)."""
    import numpy as np  # here, not at the top: importing the service stays cheap (start-up)

    assert spec.judge is not None
    ids = [r.response_id for r in rows]
    position = {rid: k for k, rid in enumerate(ids)}
    labels, decisions = sql.votes(db, None if everything else ids)
    labels = [v for v in labels if v[0] in position]
    decisions = [v for v in decisions if v[0] in position]

    def at(votes: list[tuple[str, str, int, str | None]]) -> tuple[np.ndarray, np.ndarray]:
        return (np.array([position[v[0]] for v in votes], dtype=np.int64),
                np.array([v[2] for v in votes], dtype=np.int64))

    ref, source = reference_rule(len(ids), *at(labels), *at(decisions))
    by_response: dict[str, list[tuple[str, int, str | None]]] = {}
    for rid, who, error, sha in labels:
        by_response.setdefault(rid, []).append((who, error, sha))
    decided = {rid: (who, sha) for rid, who, _e, sha in decisions}
    out = []
    for k, r in enumerate(rows):
        rid = ids[k]
        votes = by_response.get(rid, [])
        adjudicator, adj_sha = decided.get(rid, (None, None))
        # The hash of what the reference rests on: the decision's, else the labels' (two
        # hashes mean the annotators saw different content: worth seeing, never hidden).
        hashes = [adj_sha] if adjudicator is not None else [s for _w, _e, s in votes]
        out.append(Case(
            response_id=rid, item_id=r.item_id, world_id=r.world_id, model=r.model,
            pattern=r.pattern, facet=r.facet, judge=spec.judge, mode=spec.mode,
            judge_error=int(r.judge_error), judge_direction=r.judge_direction,
            reference=None if ref[k] < 0 else int(ref[k]),
            reference_source=SOURCES[int(source[k])],
            annotators=tuple((w, e) for w, e, _s in votes), adjudicator=adjudicator,
            content_sha256=tuple(sorted({h for h in hashes if h}))))
    return out


def find(db: Database, spec: CaseSpec) -> list[Case]:
    """Every case of `spec` (resolved first), in (item, model, variant) order."""
    with reading(db):
        spec = resolve(db, spec)
        cells = tuple(spec.cells)
        rows = sql.judged(db, _query(spec, labelled=bool(cells)))
        # Every current label at once: bounded by what humans labelled, and one read instead
        # of a parameter listing every judged response.
        found = with_reference(db, spec, rows, everything=True)
    return [c for c in found if c.cell in cells] if cells else found


def validity_cases(db: Database, doc: ReportDocument) -> list[Case]:
    """Every response counted in the report's judge validity, setting by setting (the
    settings in the report's order): one case per response in a cell, nothing else."""
    worlds = tuple(doc.scope.worlds)
    with reading(db):
        return [case for entry in doc.judge_validity
                for case in find(db, CaseSpec(judge=entry.judge, mode=entry.mode,
                                              worlds=worlds, cells=CELLS))]


def counts(cases: Sequence[Case]) -> dict[str, int]:
    """tp, fp, fn, tn over `cases`."""
    out = dict.fromkeys(CELLS, 0)
    for c in cases:
        if c.cell is not None:
            out[c.cell] += 1
    return out


# ------------------------------------------------------------------ filters typed in a list

CASE_FILTER_KEYS = ("cell", "composed", "direction", "disagree", "facet", "judge", "model",
                    "pattern", "verdict")


def parse_cells(value: str) -> tuple[str, ...]:
    """`fp` or `fp,fn` (any of tp, fp, fn, tn)."""
    cells = tuple(dict.fromkeys(v.strip().lower() for v in value.split(",") if v.strip()))
    bad = [c for c in cells if c not in CELLS]
    if bad or not cells:
        raise ValueError("expects tp, fp, fn or tn (several with commas: fp,fn)")
    return cells


def parse_flag(value: str) -> bool:
    v = value.strip().lower()
    if v in ("1", "y", "yes", "true", "on"):
        return True
    if v in ("0", "n", "no", "false", "off"):
        return False
    raise ValueError("expects yes or no")


def narrow(cells: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    """Cells allowed by both (an empty tuple allows every cell)."""
    if not cells:
        return more
    kept = tuple(c for c in cells if c in more)
    return kept or ("none",)  # a contradiction matches nothing, it does not widen


def apply_filters(spec: CaseSpec, filters: Mapping[str, str]) -> CaseSpec:
    """`spec` narrowed by `key:value` filters typed in a list (FilterError on a bad one)."""
    for key, value in filters.items():
        key = key.lower()
        if key not in CASE_FILTER_KEYS:
            raise FilterError(f"unknown filter {key!r} (this list knows: "
                              f"{', '.join(CASE_FILTER_KEYS)})")
        try:
            if key == "cell":
                spec = replace(spec, cells=narrow(spec.cells, parse_cells(value)))
            elif key == "disagree":
                spec = replace(spec, cells=narrow(spec.cells,
                                                  DISAGREE if parse_flag(value) else AGREE))
            elif key == "judge":
                judge, mode = parse_setting(spelled_suffix(value, MODES))
                spec = replace(spec, judge=judge, mode=mode or spec.mode)
            elif key == "model":
                spec = replace(spec, models=(value,))
            elif key == "pattern":
                spec = replace(spec, pattern=value)
            elif key == "facet":
                spec = replace(spec, facet=value)
            elif key == "composed":
                spec = replace(spec, composed=parse_flag(value))
            elif key == "verdict":
                spec = replace(spec, judge_error={"error": 1, "ok": 0}[value.lower()])
            elif key == "direction":
                direction = canonical(value, (*sql.DIRECTIONS, "unknown", "none"))
                if direction is None:
                    raise ValueError("expects under_enforcement, over_enforcement, mixed, "
                                     "unknown or none")
                spec = replace(spec, direction=direction)
        except KeyError:
            raise FilterError(f"{key}: expects error or ok") from None
        except ValueError as exc:
            raise FilterError(f"{key}: {exc}") from None
    return spec


@dataclass(frozen=True)
class CasePage(Page):
    """A page of cases and the judge setting they are of."""

    setting: tuple[str, str] | None = None
    cases: tuple[Case, ...] = ()


def page(spec: CaseSpec, db: Database, req: PageRequest) -> CasePage:
    """One page of the cases of `spec` narrowed by the request's words and filters; each row
    carries its case's fields (`store`-style dicts, keyed by response id)."""
    spec = apply_filters(replace(spec, search=req.search), req.filters)
    limit, offset = max(1, int(req.limit)), max(0, int(req.offset))
    with reading(db):
        try:
            spec = resolve(db, spec)
        except ValueError as exc:
            raise FilterError(str(exc)) from None
        if spec.cells:
            # Only labelled responses can be in a cell: read them all (bounded by what humans
            # labelled), keep the cell's, and page in memory.
            found = find(db, spec)
            total, shown = len(found), found[offset:offset + limit]
        else:
            rows, total = sql.judged_page(db, _query(spec), offset, limit)
            shown = with_reference(db, spec, rows)
    assert spec.judge is not None
    return CasePage([{**c.record(), "id": c.response_id} for c in shown], total, offset,
                    limit, setting=(spec.judge, spec.mode), cases=tuple(shown))


# ------------------------------------------------------------------ the items list's filters


ITEM_KEYS = ("cell", "disagree", "judge")


def items_page(db: Database, world_id: str, req: PageRequest) -> Page:
    """`store.browse.lists.items_page` with the filters of `item_filters`."""
    with reading(db):
        return lists.items_page(db, world_id, req, item_filters(db, world_id, req.filters))


def item_filters(db: Database, world_id: str, filters: Mapping[str, str]
                 ) -> dict[str, Filter]:
    """The items list's `disagree:`, `cell:` and `judge:` filters, as extra filters for
    `store.browse.lists.items_page`: an item matches `cell:fp` (or `disagree:yes`, fp or fn)
    when one of its responses is a case of that cell for the judge setting (`judge:J[@mode]`,
    default the report's primary); `disagree:no` when none of its responses is a
    disagreement (an item nobody labelled has no disagreement)."""
    mine = {k.lower(): v for k, v in filters.items() if k.lower() in ITEM_KEYS}
    spec = apply_filters(CaseSpec(worlds=(world_id,)), mine)
    negate = "cell" not in mine and "disagree" in mine and not parse_flag(mine["disagree"])
    extra: dict[str, Filter] = {}
    if spec.cells:
        try:
            cases = find(db, replace(spec, cells=DISAGREE) if negate else spec)
        except ValueError as exc:
            raise FilterError(str(exc)) from None
        ids = json.dumps(sorted({c.item_id for c in cases}))
        extra["cell" if "cell" in mine else "disagree"] = (
            f"items.id {'NOT ' if negate else ''}IN (SELECT value FROM json_each(?))",
            lambda _v: ids)
    # Every other key (all of them without a cell filter) is true for every item: it chose the
    # judge or narrowed the cells above, or is listed only so that a mistyped key's error
    # names these keys too.
    for key in ITEM_KEYS:
        extra.setdefault(key, ("? IS NOT NULL", lambda _v: 1))
    return extra
