"""The store as integer arrays: items, responses and judgments read once, then every grouping
the report needs is a numpy bincount/unique over them.

Not one SQL GROUP BY per table: each would re-read and re-sort the judgments, while reading them
once as packed integers (`store.report.coded.judgment_codes`) and grouping in numpy keeps a full
report over 300,000 judgments under a second (BENCHMARKS.md). The tuples produced here have the
shapes the metric functions take (`rates`, `contrast`, `validity`, `sensitivity`).

`load` builds the arrays from the report's reads (`copal_tui.domain.report_rows.ReportReads`;
the decoding and grouping helpers are `copal_tui.metrics.arrays`). Indices: items are numbered
in id order, responses in rowid order, settings in (judge, mode) order, models in name order, so
every output is sorted and the same store gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress, repeat
from typing import Any

import numpy as np

from copal_tui.domain.report_rows import REJECTED_PROJECTION, LabelRow, ReportReads
from copal_tui.metrics.arrays import code, find, group, group_arrays, ints, responses, tally, texts
from copal_tui.metrics.reference import ADJUDICATED, MAJORITY, SOURCES, TIE, reference_rule

UNDER, OVER, MIXED, UNKNOWN, FAILED = 1, 2, 3, 4, 5
DIRECTION = {0: "none", UNDER: "under_enforcement", OVER: "over_enforcement", MIXED: "mixed",
             UNKNOWN: None}


@dataclass
class Frame:
    item_ids: list[str]
    worlds: list[str]
    patterns: list[str]
    facets: list[str]
    methods: list[str]
    item_world: np.ndarray
    item_pattern: np.ndarray
    item_facet: np.ndarray
    item_method: np.ndarray
    item_selected: np.ndarray
    item_parent: np.ndarray
    item_clauses: np.ndarray
    item_scope: np.ndarray
    models: list[str]
    resp_item: np.ndarray
    resp_model: np.ndarray
    resp_answered: np.ndarray
    resp_rowids: np.ndarray
    settings: list[tuple[str, str]]
    j_resp: np.ndarray
    j_sid: np.ndarray
    j_status: np.ndarray

    # ---------------------------------------------------------------- derived masks

    def method_is(self, name: str) -> np.ndarray:
        k = self.methods.index(name) if name in self.methods else -2
        return self.item_method == k

    @property
    def top_items(self) -> np.ndarray:
        """Selected top-level items in scope."""
        return self.item_selected & (self.item_parent < 0) & self.item_scope

    @property
    def composed_items(self) -> np.ndarray:
        return self.method_is("copal") & self.top_items

    def usable(self, sid: int) -> np.ndarray:
        """Per judgment: is it a usable judgment of setting `sid`."""
        return (self.j_sid == sid) & (self.j_status != FAILED)

    def response_index(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the responses with these rowids, and which rowids were found."""
        return find(self.resp_rowids, rowids)

    def judged(self, items: np.ndarray) -> np.ndarray:
        """Per judgment, the value of a per-item boolean mask at its response's item. Taken
        per response first: gathering the item of every judgment made an int64 array as
        long as the judgments, the report's largest temporary."""
        return items[self.resp_item][self.j_resp]

    def setting_index(self, setting: tuple[str, str] | None) -> int:
        return self.settings.index(setting) if setting in self.settings else -1


def load(reads: ReportReads, worlds: list[str] | None) -> Frame:
    """The items and responses of the report's reads (whose attributes wait for each read); no
    judgments yet: `add_judgments` adds them, so the caller can work on the labels while the
    judgments, the longest read, are still being read."""
    cols = reads.items
    item_ids = texts(cols.ids)
    position = dict(zip(item_ids, range(len(item_ids)), strict=True))
    world, worlds_all = code(texts(cols.worlds))
    pattern, patterns = code(texts(cols.patterns))
    facet, facets = code(texts(cols.facets))
    method, methods = code(texts(cols.methods))
    parents = texts(cols.parents)
    scope = np.ones(len(item_ids), dtype=bool) if not worlds else \
        np.isin(world, [k for k, w in enumerate(worlds_all) if w in set(worlds)])

    rowids, resp_item, resp_model, models = responses(reads.responses, position)
    none = np.zeros(0, dtype=np.int64)
    return Frame(
        item_ids=item_ids, worlds=worlds_all, patterns=patterns, facets=facets,
        methods=methods, item_world=world, item_pattern=pattern, item_facet=facet,
        item_method=method, item_selected=ints(cols.selected) != 0,
        item_parent=np.fromiter(map(position.get, parents, repeat(-1)), dtype=np.int64,
                                count=len(parents)),
        item_clauses=ints(cols.clauses),
        item_scope=scope, models=models, resp_item=resp_item,
        resp_model=resp_model, resp_answered=np.ones(len(rowids), dtype=bool),
        resp_rowids=rowids, settings=[], j_resp=none, j_sid=none, j_status=none,
    )


def add_judgments(f: Frame, reads: ReportReads) -> None:
    """Add the judgments (and which responses have no answer) of `reads` to a loaded frame."""
    f.resp_answered[find(f.resp_rowids, ints(reads.failed_responses))[0]] = False
    judgments = reads.judgments
    settings = judgments.settings
    codes = ints(judgments.codes)
    n_settings = max(1, len(settings))
    # Decoded in place, the setting and status kept as small integers: three million
    # judgments as int64 columns and their temporaries were most of the report's memory.
    status = (codes & 7).astype(np.int8)
    codes >>= 3
    sid = (codes % n_settings).astype(np.int16)
    codes //= n_settings
    j_resp, seen = find(f.resp_rowids, codes)
    del codes
    if not seen.all():  # a judgment of a response written after the responses were read
        status, sid = status[seen], sid[seen]
    f.settings, f.j_resp, f.j_sid, f.j_status = settings, j_resp, sid, status


# ------------------------------------------------------------------ per-section inputs


def setting_counts(f: Frame) -> list[tuple[str, str, int, int]]:
    """(judge, mode, usable, failed) per setting over judgments of responses in scope."""
    scope = f.judged(f.item_scope)
    failed = f.j_status == FAILED
    usable = np.bincount(f.j_sid[scope & ~failed], minlength=len(f.settings))
    bad = np.bincount(f.j_sid[scope & failed], minlength=len(f.settings))
    return [(j, m, int(usable[k]), int(bad[k])) for k, (j, m) in enumerate(f.settings)
            if usable[k] or bad[k]]


def _primary(f: Frame, sid: int, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Usable judgments of setting `sid` on responses whose item is in `items`: (response, status)."""
    keep = f.usable(sid) & f.judged(items)
    return f.j_resp[keep], f.j_status[keep]


def composed_cells(f: Frame, sid: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Cells of the shape the rates module takes, (model, world, pattern, facet, error,
    direction, count), in two views of the same counts: by (model, world, pattern, facet,
    error) with no direction (for `error_rates`), and by (model, facet, error, direction) with
    world "" and no pattern (for `facet_atlas` and `one_sided`). The full cross of both has
    tens of thousands of rows on a large store, each summed in Python by every rates figure."""
    resp, status = _primary(f, sid, f.composed_items)
    item = f.resp_item[resp]
    cols = [f.resp_model[resp], f.item_world[item], f.item_pattern[item] + 1,
            f.item_facet[item] + 1, status]
    sizes = [len(f.models), len(f.worlds), len(f.patterns) + 1, len(f.facets) + 1, 5]
    (m, w, p, fa, st), count = group_arrays(cols, sizes)
    # Regrouped weighted by `count`: the last total of each row is its judgments.
    rated = [(f.models[a], f.worlds[b], f.patterns[c - 1] if c else None,
              f.facets[d - 1] if d else None, e, None, k)
             for a, b, c, d, e, _cells, k in group(
                 [m, w, p, fa, (st != 0).astype(np.int64)], [*sizes[:4], 2], count)]
    directed = [(f.models[a], "", None, f.facets[d - 1] if d else None, int(e != 0),
                 DIRECTION[e], k)
                for a, d, e, _cells, k in group([m, fa, st], [sizes[0], sizes[3], 5], count)]
    return rated, directed


def composed_coverage(f: Frame, sid: int) -> list[tuple[str, int, int, int, int]]:
    """Per model over composed responses: (model, failed responses, answered, failed
    judgments of the setting, answered responses it never judged)."""
    resp = f.composed_items[f.resp_item]
    mine = f.j_sid == sid
    judged = tally(f.j_resp, len(f.resp_item), mine) > 0
    failed_j = tally(f.j_resp, len(f.resp_item), mine & (f.j_status == FAILED)) > 0
    a = f.resp_answered
    cols = [tally(f.resp_model, len(f.models), resp & mask)
            for mask in (~a, a, failed_j, a & ~judged)]
    return [(name, int(cols[0][k]), int(cols[1][k]), int(cols[2][k]), int(cols[3][k]))
            for k, name in enumerate(f.models) if any(c[k] for c in cols)]


def method_cells(f: Frame, sid: int) -> list[tuple[str, str, int, int]]:
    """(method, model, judged, errors) over selected top-level items of every construction
    method (the non-interacting controls are no construction method: `controls` reports them)."""
    resp, status = _primary(f, sid, f.top_items & ~f.method_is("control"))
    item = f.resp_item[resp]
    rows = group([f.item_method[item], f.resp_model[resp]], [len(f.methods), len(f.models)],
                 (status != 0).astype(np.int64))
    return [(f.methods[meth], f.models[m], n, e) for meth, m, n, e in rows]


def selected_by_method(f: Frame) -> list[tuple[str, int]]:
    top = f.top_items & ~f.method_is("control")
    counts = np.bincount(f.item_method[top], minlength=len(f.methods))
    return [(f.methods[k], int(c)) for k, c in enumerate(counts) if c]


def paired_contrast(f: Frame, sid: int) -> list[tuple[Any, ...]]:
    """Per model: (model, composed items asked, dropped for a rejected projection, dropped for
    no projections, dropped unanswered, dropped unjudged, paired items, composed errors,
    projection responses, projection errors, composition-induced, items with a failing
    projection). Which items are paired, and the order of the reasons to drop one, are those of
    `copal_tui.metrics.contrast`; a rejected projection reads as method REJECTED_PROJECTION."""
    n_items, n_models = len(f.item_ids), len(f.models)
    usable = f.usable(sid)
    err = np.full(len(f.resp_item), -1, dtype=np.int64)
    err[f.j_resp[usable]] = (f.j_status[usable] != 0).astype(np.int64)
    child = f.item_parent >= 0
    projection = f.method_is("projection") & child
    rejected = np.bincount(f.item_parent[f.method_is(REJECTED_PROJECTION) & child],
                           minlength=n_items)
    k = np.bincount(f.item_parent[projection], minlength=n_items)
    # Projection responses counted per (model, parent item).
    per_parent = partial(tally, f.resp_model * n_items + f.item_parent[f.resp_item],
                         n_models * n_items)
    pr = projection[f.resp_item]
    answered = per_parent(pr & f.resp_answered)
    judged = per_parent(pr & (err >= 0))
    errs = per_parent(pr & (err >= 0), err)
    comp = f.composed_items[f.resp_item]
    m, item, e = f.resp_model[comp], f.resp_item[comp], err[comp]
    at = m * n_items + item
    kk, aa, jj, ee = k[item], answered[at], judged[at], errs[at]
    dropped_rejected = rejected[item] > 0
    dropped_none = ~dropped_rejected & (kk == 0)
    left = ~dropped_rejected & ~dropped_none
    dropped_unanswered = left & (~f.resp_answered[comp] | (aa < kk))
    left &= ~dropped_unanswered
    dropped_unjudged = left & ((e < 0) | (jj < kk))
    paired = left & ~dropped_unjudged
    per_model = partial(tally, m, n_models)
    cols = [per_model(np.ones(len(m), dtype=bool)), per_model(dropped_rejected),
            per_model(dropped_none), per_model(dropped_unanswered), per_model(dropped_unjudged),
            per_model(paired), per_model(paired, e), per_model(paired, kk),
            per_model(paired, ee), per_model(paired & (e == 1) & (ee == 0)),
            per_model(paired & (ee > 0))]
    return [(f.models[x], *(int(c[x]) for c in cols)) for x in range(n_models) if cols[0][x]]


def reference(f: Frame, labels: Sequence[LabelRow],
              adjudications: Sequence[LabelRow]) -> tuple[np.ndarray, dict[str, int]]:
    """Each response's reference label (-1: none or a tie) by `reference.reference_rule` (the
    adjudication if there is one, else the annotators' majority), and counts of how the ones
    in scope were formed."""

    def positions(rows: Sequence[LabelRow]) -> tuple[np.ndarray, np.ndarray]:
        idx, found = _located(f, rows)
        return idx, np.array([int(r[2]) for r in found], dtype=np.int64)

    ref, source = reference_rule(len(f.resp_item), *positions(labels), *positions(adjudications))
    scope = f.item_scope[f.resp_item]
    ref[~scope] = -1
    return ref, {SOURCES[c]: int(((source == c) & scope).sum()) for c in (ADJUDICATED, MAJORITY,
                                                                          TIE)}


def _located(f: Frame, rows: Sequence[LabelRow]) -> tuple[np.ndarray, list[LabelRow]]:
    """The response positions of the label rows whose response the frame holds, and those rows."""
    idx, found = f.response_index(np.array([r[0] for r in rows], dtype=np.int64))
    return idx, list(compress(rows, found.tolist()))


def validity_cells(f: Frame, ref: np.ndarray) -> list[tuple[Any, ...]]:
    """(judge, mode, item, pattern, tp, fp, tn, fn) per setting and item, error positive."""
    keep = (f.j_status != FAILED) & (ref >= 0)[f.j_resp]
    judge_err = (f.j_status[keep] != 0).astype(np.int64)
    ref_err = ref[f.j_resp[keep]]
    cell = np.where(judge_err == 1, np.where(ref_err == 1, 0, 1), np.where(ref_err == 0, 2, 3))
    item = f.resp_item[f.j_resp[keep]]
    # (setting, item) pairs with their four counts, as arrays: a loop over the grouped rows
    # cost 10 ms on 10,000 labelled responses.
    cols, sizes = [f.j_sid[keep], item], [len(f.settings), len(f.item_ids)]
    (sids, items), _n = group_arrays(cols, sizes)
    counts = np.stack([group_arrays(cols, sizes, (cell == k).astype(np.int64))[1]
                       for k in range(4)], axis=1)
    pattern = f.item_pattern[items]
    return [(*f.settings[s], f.item_ids[i], f.patterns[p] if p >= 0 else None, *k)
            for s, i, p, k in zip(sids.tolist(), items.tolist(), pattern.tolist(),
                                  counts.tolist(), strict=True)]


def labels_in_scope(f: Frame, labels: Sequence[LabelRow]) -> list[tuple[int, str, int]]:
    """(response index, annotator, error) of labels on responses in scope."""
    idx, found = _located(f, labels)
    scope = f.item_scope[f.resp_item[idx]].tolist()
    return [(i, r[1], int(r[2])) for i, r, s in zip(idx.tolist(), found, scope, strict=True) if s]


def sensitivity(f: Frame, mode: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], int]:
    """Over composed responses judged usably by every setting of `mode` that judged any
    composed response: (judge, mode, model, n, errors) cells, (model, n, majority errors, ties)
    and the number of composed responses judged by at least one setting of the mode (why one
    mode: `copal_tui.metrics.sensitivity`)."""
    in_mode = np.array([m == mode for _j, m in f.settings] or [False], dtype=bool)
    keep = (f.j_status != FAILED) & f.judged(f.composed_items) & in_mode[f.j_sid]
    sids = np.flatnonzero(np.bincount(f.j_sid[keep], minlength=len(f.settings)))
    k = len(sids)
    if not k:
        return [], [], 0
    per_response = np.bincount(f.j_resp[keep], minlength=len(f.resp_item))
    judged = int((per_response > 0).sum())
    common = keep & (per_response == k)[f.j_resp]
    resp, err = f.j_resp[common], (f.j_status[common] != 0).astype(np.int8)
    cells = [(*f.settings[sid], f.models[m], n, e) for sid, m, n, e in group(
        [f.j_sid[common], f.resp_model[resp]], [len(f.settings), len(f.models)], err)]
    votes = np.bincount(resp, weights=err, minlength=len(f.resp_item)).astype(np.int64)
    # per_response counts only usable judgments of composed responses, so these are composed.
    shared = np.flatnonzero(per_response == k)
    models, s = f.resp_model[shared], votes[shared]
    n_models = len(f.models)
    total = np.bincount(models, minlength=n_models)
    maj = np.bincount(models[2 * s > k], minlength=n_models)
    ties = np.bincount(models[2 * s == k], minlength=n_models)
    majority = [(f.models[x], int(total[x]), int(maj[x]), int(ties[x]))
                for x in range(n_models) if total[x]]
    return cells, majority, judged


def corpus_arrays(f: Frame) -> dict[str, list[tuple[Any, int]]]:
    """The corpus counts that come from items, responses and judgments."""
    composed = f.composed_items

    def counted(codes: np.ndarray, names: Sequence[Any], missing: str = "") -> list[tuple[Any, int]]:
        """(name, count) per code present, sorted; code -1 is `missing`. Counted rather than
        sorted: the judgments are millions."""
        counts = np.bincount(codes + 1, minlength=len(names) + 1)
        return sorted((names[v - 1] if v else missing, int(counts[v]))
                      for v in np.flatnonzero(counts).tolist())

    resp_scope = f.item_scope[f.resp_item]
    clauses = [str(v) for v in range(int(f.item_clauses.max(initial=0)) + 1)]
    return {
        "items_by_pattern": counted(f.item_pattern[composed], f.patterns, "unmapped"),
        "items_by_facet": counted(f.item_facet[composed], f.facets, "unmapped"),
        "items_by_active_clauses": counted(f.item_clauses[composed], clauses),
        "items_by_method": counted(f.item_method[f.top_items], f.methods, "none"),
        "projections": [("projection", int((f.method_is("projection") & f.item_scope).sum()))],
        "responses_by_model": counted(f.resp_model[resp_scope], f.models),
        "judgments_by_setting": counted(f.j_sid[resp_scope[f.j_resp]],
                                        [f"{j} ({m})" for j, m in f.settings]),
    }
