"""Numpy over the rows of the report's reads (`copal_tui.domain.report_rows`): decoding their
group_concat columns into arrays and lists (the responses' coded columns too), integer codes for
text values, a GROUP BY over small integer columns, and finding rows by rowid.
`copal_tui.metrics.frame` builds the report's arrays with these.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from copal_tui.domain.report_rows import NULL_MARK, ResponseColumns


def ints(text: str | None) -> np.ndarray:
    """The integers of a comma-separated group_concat column."""
    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",")  # C-speed parse of "1,2,3"


def texts(text: str | None) -> list[str]:
    """The values of a char(30)-separated group_concat column (see `store.report.reads`)."""
    return text.split("\x1e") if text else []


def code(values: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """Integer codes of `values` in sorted order of the distinct values; None (or NULL_MARK,
    a NULL of a group_concat column) is code -1."""
    names = sorted(set(values) - {None, NULL_MARK})
    index: dict[Any, int] = {v: k for k, v in enumerate(names)}
    index[None] = index[NULL_MARK] = -1
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values)), names


# Above this many possible keys `group` sorts the keys instead of counting into a dense array.
_DENSE_KEYS = 4_000_000


def group(columns: Sequence[np.ndarray], sizes: Sequence[int],
          weights: np.ndarray | None = None) -> list[tuple[int, ...]]:
    """Distinct combinations of small non-negative integer columns, sorted, each with its number
    of rows and, given `weights`, their sum over those rows: a GROUP BY in numpy."""
    parts, counts = group_arrays(columns, sizes)
    if weights is not None:
        parts.append(counts)
        counts = group_arrays(columns, sizes, weights)[1]
    return list(zip(*(p.tolist() for p in parts), counts.tolist(), strict=True))


def group_arrays(columns: Sequence[np.ndarray], sizes: Sequence[int],
                 weights: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """`group` as arrays: one array per column of the distinct combinations, and the totals."""
    if not len(columns) or not len(columns[0]):
        return [np.zeros(0, dtype=np.int64) for _ in sizes], np.zeros(0, dtype=np.int64)
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col, size in zip(columns, sizes, strict=True):
        key *= size  # in place: on millions of judgments each temporary is tens of MB
        key += col
    space = math.prod(sizes)
    if space <= _DENSE_KEYS:
        # Counting into every possible key is linear; np.unique sorts (20 ms on 300,000 keys).
        counts = np.bincount(key, minlength=space)
        uniq = np.flatnonzero(counts)
        sums = counts if weights is None else np.bincount(key, weights=weights, minlength=space)
        totals = sums[uniq].astype(np.int64)
    else:
        uniq, inverse = np.unique(key, return_inverse=True)
        totals = np.bincount(inverse, weights=weights).astype(np.int64)
    return list(np.unravel_index(uniq, tuple(sizes))), totals


def tally(keys: np.ndarray, size: int, mask: np.ndarray,
          weights: np.ndarray | None = None) -> np.ndarray:
    """Per value 0 .. size - 1: how many of the `keys` under `mask` have it (or the sum of
    their `weights`)."""
    w = None if weights is None else weights[mask]
    return np.bincount(keys[mask], weights=w, minlength=size).astype(np.int64)


def find(sorted_rowids: np.ndarray, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the `rowids` found in `sorted_rowids`, and which of them were found (the
    reads run on separate connections, so one may see a row that another did not)."""
    n = len(sorted_rowids)
    top = int(sorted_rowids[-1]) if n else -1
    if n and sorted_rowids[0] >= 0 and top <= 4 * n:
        # Rowids are nearly dense: a lookup table is 5x faster than a binary search.
        table = np.full(top + 2, -1, dtype=np.int64)  # the last slot stays -1 for outliers
        table[sorted_rowids] = np.arange(n)
        idx = table[np.clip(rowids, -1, top + 1)]
        found = idx >= 0
        return idx[found], found
    idx = np.searchsorted(sorted_rowids, rowids)
    found = idx < n
    found[found] = sorted_rowids[idx[found]] == rowids[found]
    return idx[found], found


def responses(cols: ResponseColumns, position: Mapping[str, int]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The responses in rowid order (so judgments and labels find them by binary search):
    rowids, item positions, model codes and the models' names, sorted. A response of an item
    the items read did not see (written after it) is left out, and so is its model when it
    has no other response."""
    per_item = np.fromiter(map(position.get, texts(cols.items), repeat(-1)), dtype=np.int64)
    resp_item = np.repeat(per_item, ints(cols.counts))
    rowids, model = ints(cols.rowids), ints(cols.model_codes)
    known = (resp_item >= 0) & (model >= 0)
    if not known.all():
        rowids, resp_item, model = rowids[known], resp_item[known], model[known]
    order = np.argsort(rowids)
    rowids, resp_item, model = rowids[order], resp_item[order], model[order]
    names = list(cols.models)
    if cols.variants:  # a variant's target is `model#variant`: a name of its own
        index = {name: k for k, name in enumerate(names)}
        entries = [entry.split("\x1f", 1) for entry in texts(cols.variants)]
        at, found = find(rowids, np.array([int(e[0]) for e in entries], dtype=np.int64))
        variants = [e[1] for e, ok in zip(entries, found.tolist(), strict=True) if ok]
        model[at] = [index.setdefault(f"{names[m]}#{v}", len(index))
                     for m, v in zip(model[at].tolist(), variants, strict=True)]
        names = list(index)
    used = np.flatnonzero(np.bincount(model, minlength=len(names))).tolist()
    used.sort(key=names.__getitem__)
    recode = np.full(len(names), -1, dtype=np.int64)
    recode[used] = np.arange(len(used))
    return rowids, resp_item, recode[model], [names[k] for k in used]
