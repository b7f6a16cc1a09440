"""The report's `observed_facets` section: how erroneous responses actually fail (the observed
facet) against the pressure their item was built to apply (the target facet).

Over the errors on the composed suite's responses in scope (every target model), two tables of
counts, rows the item's target facet, columns the observed facet (the twelve facets in taxonomy
order, then `none_given`):

- `judge`: the usable error judgments of one judge setting (the report's primary one) with the
  facet the judge gave;
- `human`: the responses whose human reference (`copal_tui.metrics.reference.reference_rule`,
  the one the validity figures use: the adjudication, else the annotators' majority, ties
  excluded) is an error, with the reference's observed facet. The reference facet is the
  adjudication's facet when the reference is an adjudication; else the facet most given by
  the annotators whose label says error (a label without one does not vote). When two facets
  are given equally often there is no reference facet: the response is left out of the human
  table and of the agreement, and counted (`facet_ties_excluded`), as error ties are.

`agreement` compares the two on the responses both call errors: how many got a facet from both
sides, how many of those the same one (`agreement` = agree / compared) and Cohen's kappa over
them (scikit-learn's `cohen_kappa_score`). Kappa is NaN with a reason, never 0, when either side
used one facet only (then chance agreement equals observed agreement by construction), as
`copal_tui.metrics.classify.kappa` does for the 2x2 case.

An observed facet is counted only on an error (`copal_tui.domain.facets.observed_facet`); a
stored name that is no facet counts as none given and is counted (`unrecognised_facets`). The
section names its judge setting and, when an offline model stands behind it (the generator that
built the suite, the targets, or this judge), carries the heuristic caveat of
`copal_tui.metrics.provenance`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from copal_tui.domain.facets import parse_facet
from copal_tui.domain.report_rows import FACETS, OTHER_FACET, ReportReads, Vote
from copal_tui.domain.run_manifest import RunManifest
from copal_tui.metrics import frame
from copal_tui.metrics.arrays import ints
from copal_tui.metrics.classify import ratio
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_suites import FacetAgreement, FacetRow, FacetTable, ObservedFacets
from copal_tui.metrics.provenance import build as provenance_of
from copal_tui.metrics.provenance import caveat, is_offline
from copal_tui.metrics.rates import FACET_ORDER, UNMAPPED, ordered
from copal_tui.metrics.reference import TIE, reference_rule

NONE_GIVEN = "none_given"
COLUMNS = [*FACET_ORDER, NONE_GIVEN]
SCOPE = ("errors on responses to the composed suite's items (selected COPAL items) in scope, "
         "every target model")
REFERENCE = ("human reference: the adjudication, else the annotators' majority (error ties "
             "excluded); its facet: the adjudication's, else the one most given by the "
             "annotators who label an error (facet ties excluded)")


@dataclass(frozen=True)
class LeftOut:
    """Responses the human table leaves out (error ties, facet ties) and facet names on the
    human side that are no facet."""

    error_ties: int
    facet_ties: int
    unrecognised: int


def _column(value: object, unknown: Counter[str]) -> str:
    """The column of an observed facet stored on an error; a name that is no facet is counted
    in `unknown` and shown as none given."""
    try:
        facet = parse_facet(value)
    except ValueError:
        unknown[str(value)] += 1
        return NONE_GIVEN
    return NONE_GIVEN if facet is None else facet.value


def _table(cells: Iterable[tuple[str | None, str]], rows: Sequence[str]) -> FacetTable:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for target, column in cells:
        counts[target or UNMAPPED][column] += 1
    return _counted(counts, rows)


def _counted(counts: Mapping[str, Counter[str]], rows: Sequence[str]) -> FacetTable:
    """The table of {target facet: {column: count}} (only targets with a count), with a row
    for each of `rows` too."""
    none: Counter[str] = Counter()
    out_rows = [FacetRow(target_facet=t, errors=sum(counts.get(t, none).values()),
                         counts={c: counts.get(t, none)[c] for c in COLUMNS})
                for t in ordered(set(rows) | set(counts), FACET_ORDER)]
    return FacetTable(n_errors=sum(r.errors for r in out_rows), rows=out_rows)


def reference_facets(labels: Sequence[Vote], decisions: Sequence[Vote]
                     ) -> tuple[dict[int, tuple[str | None, str]], LeftOut]:
    """{response: (target facet, observed column)} of every response whose human reference is
    an error, and counts of what was left out (error ties, facet ties)."""
    ids = sorted({v[0] for v in labels} | {v[0] for v in decisions})
    at = {rid: k for k, rid in enumerate(ids)}

    def positions(votes: Sequence[Vote]) -> tuple[np.ndarray, np.ndarray]:
        return (np.array([at[v[0]] for v in votes], dtype=np.int64),
                np.array([v[2] for v in votes], dtype=np.int64))

    ref, source = reference_rule(len(ids), *positions(labels), *positions(decisions))
    decided = {v[0]: v for v in decisions}
    error_facets: dict[int, list[str | None]] = defaultdict(list)
    target: dict[int, str | None] = {}
    for rid, _who, error, facet, tgt in labels:
        target[rid] = tgt
        if error == 1:
            error_facets[rid].append(facet)
    unknown: Counter[str] = Counter()
    out: dict[int, tuple[str | None, str]] = {}
    facet_ties = 0
    for rid, k in at.items():
        if ref[k] != 1:
            continue
        if rid in decided:
            out[rid] = (decided[rid][4], _column(decided[rid][3], unknown))
            continue
        votes = Counter(c for f in error_facets[rid] if (c := _column(f, unknown)) != NONE_GIVEN)
        top = votes.most_common(2)
        if len(top) > 1 and top[0][1] == top[1][1]:
            facet_ties += 1
            continue
        out[rid] = (target[rid], top[0][0] if top else NONE_GIVEN)
    return out, LeftOut(int((source == TIE).sum()), facet_ties, sum(unknown.values()))


def facet_kappa(judge: Sequence[str], human: Sequence[str]) -> tuple[float, str | None]:
    """Cohen's kappa of the judge's and the reference's facets on the same responses."""
    if not judge:
        return math.nan, "no response both call errors with a facet from each"
    if len(set(judge)) == 1 or len(set(human)) == 1:
        side = "the judge" if len(set(judge)) == 1 else "the human reference"
        if len(set(judge)) == 1 and len(set(human)) == 1:
            side = "the judge and the human reference each"
        return math.nan, f"{side} gave one facet only; kappa is undefined"
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score(list(judge), list(human)))
    return (math.nan, "Cohen's kappa is undefined on these facets") if math.isnan(value) \
        else (value, None)


def _agreement(judged: dict[int, str], human: dict[int, tuple[str | None, str]]
               ) -> FacetAgreement:
    both = sorted(set(judged) & set(human))
    pairs = [(judged[r], human[r][1]) for r in both
             if judged[r] != NONE_GIVEN and human[r][1] != NONE_GIVEN]
    agree = sum(j == h for j, h in pairs)
    return FacetAgreement(
        n_both_errors=len(both), n_compared=len(pairs), n_agree=agree,
        agreement=Metric.of(*ratio(agree, len(pairs),
                                   "no response both call errors with a facet from each")),
        kappa=Metric.of(*facet_kappa([j for j, _h in pairs], [h for _j, h in pairs])))


def _heuristic(runs: Sequence[RunManifest], judge: str) -> list[str]:
    """The offline models this section rests on: the suite's generator, the targets, the
    judge."""
    copal = provenance_of(runs).get("copal")
    models = [*(copal.generator if copal else []), *(copal.target if copal else []), judge]
    return sorted({m for m in models if is_offline(m)})


class _JudgeFacets:
    """The usable error judgments of one setting on the composed items in scope, from the
    frame: their responses, target facets and observed columns (indices into COLUMNS)."""

    def __init__(self, reads: ReportReads, f: frame.Frame, setting: tuple[str, str],
                 names: Mapping[int, str]) -> None:
        sid = f.setting_index(setting)
        keep = ((f.j_sid == sid) & (f.j_status != 0) & (f.j_status != frame.FAILED)
                & f.judged(f.composed_items))
        self.resp = f.j_resp[keep]
        self.target = f.item_facet[f.resp_item[self.resp]]
        self.unknown: Counter[str] = Counter()
        none = COLUMNS.index(NONE_GIVEN)
        # Facet code (see `store.report.coded.judgment_codes`) -> column; 0 (no facet) is none
        # given.
        to_column = np.array([none, *(COLUMNS.index(name) for name in FACETS), -1],
                             dtype=np.int64)
        rowids, code = _facet_codes(reads, f, sid)
        at, found = f.response_index(rowids)
        by_response = np.zeros(len(f.resp_item), dtype=np.int64)
        by_response[at] = code[found]
        self.column = to_column[by_response[self.resp]]
        other = np.flatnonzero(self.column < 0)
        if len(other):  # a stored name that is no facet's exact value: parsed by the rules
            rowids = f.resp_rowids[self.resp[other]].tolist()
            self.column[other] = [COLUMNS.index(_column(names.get(r), self.unknown))
                                  for r in rowids]

    def table(self, f: frame.Frame, rows: Sequence[str]) -> FacetTable:
        width = len(COLUMNS)
        cells = np.bincount((self.target + 1) * width + self.column,
                            minlength=(len(f.facets) + 1) * width).reshape(-1, width)
        counts: dict[str, Counter[str]] = {}
        for t in np.flatnonzero(cells.sum(axis=1)).tolist():
            name = UNMAPPED if t == 0 else (f.facets[t - 1] or UNMAPPED)
            found = counts.setdefault(name, Counter())
            for c in np.flatnonzero(cells[t]).tolist():
                found[COLUMNS[c]] += int(cells[t, c])
        return _counted(counts, rows)

    def of(self, f: frame.Frame, rowids: Iterable[int]) -> dict[int, str]:
        """{response rowid: column} of those of `rowids` this setting calls errors."""
        asked = np.fromiter(rowids, dtype=np.int64)
        at, found = f.response_index(asked)
        column = np.full(len(f.resp_item), -1, dtype=np.int64)
        column[self.resp] = self.column
        got = column[at]
        return {r: COLUMNS[c] for r, c in zip(asked[found].tolist(), got.tolist(), strict=True)
                if c >= 0}


def _facet_codes(reads: ReportReads, f: frame.Frame, sid: int) -> tuple[np.ndarray, np.ndarray]:
    """Response rowids and facet codes of setting `sid`'s error judgments that name a facet."""
    codes = ints(reads.judgments.facets)
    key, code = codes // 16, codes % 16
    n_settings = max(1, len(f.settings))
    mine = key % n_settings == sid
    return key[mine] // n_settings, code[mine]


def unnamed_facets(reads: ReportReads, f: frame.Frame, setting: tuple[str, str] | None) -> bool:
    """Whether some error judgment of `setting` names an observed facet that is no facet's
    exact value (coded OTHER_FACET without its name): the caller then reads those names
    (`store.report.facets.other_facets`) for `observed_facets_section`. They are rare, so the
    bulk read of the judgments does not carry them."""
    return setting is not None and bool(
        (_facet_codes(reads, f, f.setting_index(setting))[1] == OTHER_FACET).any())


def observed_facets_section(reads: ReportReads, f: frame.Frame,
                            setting: tuple[str, str] | None,
                            names: Mapping[int, str]) -> ObservedFacets:
    """The section for one judge setting (judge, mode), None when no judge has usable
    judgments (the human table is still given), from the report's reads, the frame of its
    COPAL sections (judgments added) and `names`, {response rowid: stored facet} of the
    setting's judgments `unnamed_facets` finds."""
    targets = np.unique(f.item_facet[f.composed_items]).tolist()
    rows = [f.facets[t] if t >= 0 else UNMAPPED for t in targets]
    rows = [t or UNMAPPED for t in rows]
    labels, decisions = reads.human_facets
    human, left_out = reference_facets(labels, decisions)
    judged: dict[int, str] = {}
    if setting is None:
        judge = mode = None
        reason: str | None = "no judge setting has usable judgments"
        judge_table = _table([], rows)
    else:
        (judge, mode), reason = setting, None
        errors = _JudgeFacets(reads, f, setting, names)
        judged = errors.of(f, human)
        judge_table = errors.table(f, rows)
        judge_table.unrecognised_facets = sum(errors.unknown.values())
    human_table = _table(human.values(), rows)
    human_table.error_ties_excluded = left_out.error_ties
    human_table.facet_ties_excluded = left_out.facet_ties
    human_table.unrecognised_facets = left_out.unrecognised
    heuristic = _heuristic(reads.provenance_runs, judge or "")
    return ObservedFacets(
        scope=SCOPE, reference=REFERENCE, columns=list(COLUMNS), judge=judge, mode=mode,
        reason=reason, judge_table=judge_table, human_table=human_table,
        agreement=_agreement(judged, human), heuristic=heuristic,
        # absent, not null, when no offline model stands behind the section
        caveat=caveat(heuristic) if heuristic else None)
