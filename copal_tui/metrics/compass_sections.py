"""The COMPASS sections of the report: groups the COMPASS reads of the report
(`copal_tui.domain.report_rows.CompassRows`), feeds the functions of `copal_tui.metrics.pas`,
and records every exclusion with its reason.

`add_compass` fills the report's `pas`, `pas_failure_modes`, `pas_vs_composed`,
`pas_judge_validity` and `compass_summary` (COMPASS's own table, `metrics.compass_summary`), and
leaves them out when no world in scope has a COMPASS suite (so a store without one gives the
report it always gave).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from copal_tui.domain.report_rows import FAILURE_MODE_CODES, CompassRows
from copal_tui.metrics import compass_summary
from copal_tui.metrics.arrays import group_arrays
from copal_tui.metrics.compass_document import CompassSections
from copal_tui.metrics.frame import FAILED, Frame
from copal_tui.metrics.pas import (
    DIMENSIONS,
    UNCLASSIFIED,
    Exclude,
    contrast,
    failure_modes,
    human_majority,
    judge_validity,
    label,
    pas_rows,
)

if TYPE_CHECKING:
    from copal_tui.metrics.suite_report import Given

# ------------------------------------------------------------------ grouping the judgments

Cell = tuple[str, str, str, str, str, str, str | None, int, int]
SEP, UNIT = "\x1e", "\x1f"  # char(30) between rows, char(31) between a class key's fields


def judgment_cells(rows: CompassRows, worlds: list[str] | None
                   ) -> tuple[list[Cell], list[tuple[str, str, int, int]]]:
    """Grouped judgments and response counts of the suites in scope.

    Cells are (judge, model, variant, world, query type, status, failure mode, judgments,
    aligned) with status `usable`, `failed` (the judge call failed or gave no verdict),
    `no_response` or `not_kept` (see `store.report.compass.response_columns`); the failure mode
    is set on usable misaligned denied-edge judgments only (`unclassified` when the judge gave
    none). Response counts are (model, variant, answered 0/1, responses) over kept queries. The
    judgments are read once as packed columns and grouped in numpy (see
    `store.report.compass.judgment_columns` for why)."""
    ids, keys = rows.response_ids, rows.response_keys
    if not ids or not keys:
        return [], []
    id_list, key_list = ids.split(SEP), keys.split(SEP)
    classes: dict[str, int] = {}
    codes = [classes.setdefault(k, len(classes)) for k in key_list]
    index = dict(zip(id_list, codes, strict=True))
    class_keys = [tuple(k.split(UNIT)) for k in classes]
    scope = set(worlds) if worlds else None
    in_scope = np.array([scope is None or c[2] in scope for c in class_keys], dtype=bool)
    answered: Counter[tuple[str, str, int]] = Counter()
    for k, n in Counter(codes).items():
        model, variant, world, _qtype, status = class_keys[k]
        if in_scope[k] and status != "not_kept":
            answered[(model, variant, int(status == "answered"))] += n
    counts = [(*k, v) for k, v in sorted(answered.items())]
    judge_names = rows.judges
    rids_text, codes_text = rows.judgment_responses, rows.judgment_codes
    if not rids_text or not codes_text:
        return [], counts
    rids = rids_text.split(SEP)
    cls = np.fromiter(map(index.__getitem__, rids), dtype=np.int64, count=len(rids))
    code = np.fromstring(codes_text, dtype=np.int64, sep=",")  # C-speed parse of "1,2,3"
    keep = in_scope[cls]  # judgments of responses outside the scope are left out
    jc, bits = code[keep] // 32, code[keep] % 32
    key = (jc * len(classes) + cls[keep]) * 32 + bits
    uniq, totals = np.unique(key, return_counts=True)
    acc: Counter[tuple[Any, ...]] = Counter()
    aligned: Counter[tuple[Any, ...]] = Counter()
    for k, n in zip(uniq.tolist(), totals.tolist(), strict=True):
        bits, rest = k % 32, k // 32
        model, variant, world, qtype, rstatus = class_keys[rest % len(classes)]
        status = rstatus if rstatus != "answered" else "failed" if bits & 2 else "usable"
        mode = None
        if status == "usable" and bits >= 4 and qtype == "denied_edge":
            m = bits >> 2
            mode = FAILURE_MODE_CODES[m - 1] if m <= len(FAILURE_MODE_CODES) \
                else UNCLASSIFIED
        cell = (judge_names[rest // len(classes)], model, variant, world, qtype, status, mode)
        acc[cell] += n
        aligned[cell] += n if bits & 1 and status == "usable" else 0
    cells: list[Cell] = [(*c, acc[c], aligned[c])
                         for c in sorted(acc, key=lambda c: (*c[:6], c[6] or ""))]
    return cells, counts


# ------------------------------------------------------------------ the report sections

_LEFT_OUT = {"failed": "the judge call failed or gave no verdict",
             "not_kept": "the query was not kept by verification",
             "no_response": "the response has no answer (the target call failed)"}


def _coverage(cells: Sequence[tuple[Any, ...]], responses: Sequence[tuple[Any, ...]],
              exclude: Exclude) -> None:
    """Exclusions: judgments left out, failed responses, and answered responses each judge
    skipped (for judges that judged that model and variant at all)."""
    left: dict[tuple[str, str, str, str], int] = defaultdict(int)
    judged: dict[tuple[str, str, str], int] = defaultdict(int)
    for judge, model, variant, _w, _t, status, _m, count, _a in cells:
        left[(judge, model, variant, status)] += int(count)
        if status in ("usable", "failed"):  # kept query, answered response
            judged[(judge, model, variant)] += int(count)
        else:
            judged.setdefault((judge, model, variant), 0)
    for (judge, model, variant, status), count in sorted(left.items()):
        if status in _LEFT_OUT:
            exclude("pas", f"COMPASS judgments by {judge} of {label(model, variant)}",
                    _LEFT_OUT[status], count)
    answered: dict[tuple[str, str], int] = defaultdict(int)
    for model, variant, ok, count in responses:
        if ok:
            answered[(model, variant)] += int(count)
        else:
            exclude("pas", f"COMPASS responses of {label(model, variant)}", "the target "
                    "model's call failed (no answer to judge)", int(count))
    for (judge, model, variant), count in sorted(judged.items()):
        # At most one judgment per response and judge, so the rest were never judged.
        exclude("pas", f"COMPASS responses of {label(model, variant)} for {judge}",
                "not judged by this judge (skipped)", answered[(model, variant)] - count)


def _composed(f: Frame, base_models: set[str], suite: list[str], cells: Sequence[Cell],
              preferred: str | None, by_world: Sequence[tuple[str, str, int, int]]
              ) -> list[tuple[Any, ...]]:
    """Composed cells (world, model, judge, n, errors) for the contrast. The preferred
    (primary) judge's come from the report's error table (`by_world`), so the two agree by
    construction. Other judges count only where the preferred judge lacks one side of a world
    and model, and only judges that judged COMPASS responses there."""
    out: list[tuple[Any, ...]] = [(w, m, preferred, n, e) for w, m, n, e in by_world
                                  if w in suite]
    if preferred is None:
        return [*out, *composed_by_judge(f, base_models, suite, None)]
    covered = {(w, m) for w, m, _j, _n, _e in out}
    single: dict[tuple[str, str], set[str]] = defaultdict(set)
    for judge, model, variant, world, _t, status, *_rest in cells:
        if status == "usable" and variant == "base":
            single[(world, model)].add(judge)
    need = {(w, m) for (w, m), js in single.items() if preferred not in js or (w, m) not in
            covered}
    others = sorted({j for key in need for j in single[key]} - {preferred})
    if not others:
        return sorted(out)
    return sorted([*out, *composed_by_judge(f, base_models, sorted({w for w, _m in need}),
                                            others)])


def composed_by_judge(f: Frame, base_models: set[str], worlds: Sequence[str],
                      judges: Sequence[str] | None) -> list[tuple[str, str, str, int, int]]:
    """(world, model, judge, judged, errors) of usable contract-mode judgments of base-variant
    responses to composed items in `worlds`, by `judges` (None: all), sorted. `base_models`
    are the stored model names (a variant's target is `model#variant`, a name of its own)."""
    sids = [k for k, (judge, mode) in enumerate(f.settings)
            if mode == "contract" and (judges is None or judge in judges)]
    in_worlds = np.array([w in set(worlds) for w in f.worlds], dtype=bool)
    base = np.array([name in base_models for name in f.models], dtype=bool)
    keep = (np.isin(f.j_sid, sids) & (f.j_status != FAILED)
            & f.judged(f.composed_items & in_worlds[f.item_world]))
    keep[keep] = base[f.resp_model[f.j_resp[keep]]]
    resp = f.j_resp[keep]
    (w, m, s, e), n = group_arrays(
        [f.item_world[f.resp_item[resp]], f.resp_model[resp], f.j_sid[keep].astype(np.int64),
         (f.j_status[keep] != 0).astype(np.int64)],
        [len(f.worlds), len(f.models), max(1, len(f.settings)), 2])
    found: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for a, b, c, error, count in zip(w.tolist(), m.tolist(), s.tolist(), e.tolist(),
                                     n.tolist(), strict=True):
        cell = found[(f.worlds[a], f.models[b], f.settings[c][0])]
        cell[0] += count
        cell[1] += count * error
    return sorted((*key, judged, errors) for key, (judged, errors) in found.items())


def build(given: Given, rows: CompassRows | None) -> CompassSections | None:
    """The COMPASS sections (None, leaving them out, when no world in scope has a suite);
    `given.exclude` records (section, what, reason, count) like the report's other
    exclusions. The composed side of the contrast prefers the report's primary judge when it
    is a contract-mode judge, and then takes its numbers from the report's error table
    (`by_world` of each model), so the two agree by construction; other judges' come from the
    COPAL frame (judgments added)."""
    if rows is None:
        return None
    doc, f, exclude = given.doc, given.frame, given.exclude
    suite = rows.suite
    chosen = doc.scope.primary_judge
    preferred = chosen.judge if chosen and chosen.mode == "contract" else None
    by_world = [(w, r.model, c.n, c.errors) for r in doc.error_rates
                for w, c in r.by_world.items() if c.n] if preferred else []
    cells, responses = judgment_cells(rows, given.worlds)
    _coverage(cells, responses, exclude)
    summary = compass_summary.section(rows, cells, exclude)
    vs_composed, one_sided = contrast(
        cells, _composed(f, set(given.reads.responses.models), suite, cells, preferred,
                         by_world),
        preferred)
    for world, model, side, judge, count in one_sided:
        other = "composed contract-mode" if side == "COMPASS" else "COMPASS (base variant)"
        exclude("pas_vs_composed", f"{side} judgments of {model} in {world} by {judge}",
                f"the model has no usable {other} judgments in this world", count)

    majority, ties = human_majority(rows.labels)
    judges = sorted({c[0] for c in cells if c[5] == "usable"})
    validity, unjudged = judge_validity(
        majority, rows.labelled_judgments, judges) if majority else ([], {})
    for dim in DIMENSIONS:
        exclude("pas_judge_validity", "labelled COMPASS responses", "annotators split evenly "
                f"on {dim} (tie)", ties[dim])
    for judge, count in unjudged.items():
        exclude("pas_judge_validity", f"human-labelled COMPASS responses for {judge}",
                "the judge did not judge them (skipped or failed)", count)
    return CompassSections(pas=pas_rows(cells), pas_failure_modes=failure_modes(cells),
                           compass_summary=summary, pas_vs_composed=vs_composed,
                           pas_judge_validity=validity)
