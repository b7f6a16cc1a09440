"""The COMPASS sections of the report: Policy Alignment Score per query type with
Wilson intervals, the failure modes of misaligned denied-edge responses, single-policy PAS set
beside the composed error of the same world, and the judge against human labels.

Pure functions over the grouped rows that `copal_tui.metrics.compass_sections` reads from the
store (that module also records the exclusions). Judges are never pooled: every row names its
judge.

Pooled rows of `pas`: for every (judge, model, variant, world) with at least one judgment
(usable or failed) there is a row for each of the four query types and one with
`query_type` = "all"; the same five rows again with `world` = "all" pool the worlds in scope of
that judge, model and variant. Models and variants are never pooled.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from copal_tui.domain.compass import (
    FAILURE_MODES,
    QUERY_TYPES,
    VARIANTS,
    intended_kind,
    is_aligned,
    pas,
)
from copal_tui.metrics.classify import kappa, ratio
from copal_tui.metrics.compass_document import (
    FailureModeRow,
    PasAgreement,
    PasJudgeValidity,
    PasRow,
    PasVsComposedRow,
)
from copal_tui.metrics.document_base import Interval, Metric
from copal_tui.metrics.intervals import wilson
from copal_tui.metrics.rates import rate

ALL = "all"
UNCLASSIFIED = "unclassified"
DIMENSIONS = ("refused", "compliant", "aligned")
Exclude = Callable[[str, str, str, int], None]


def label(model: str, variant: str) -> str:
    """How a target is named in tables and exclusions: a variant is never silently pooled."""
    return f"{model} ({variant})"


def variant_rank(variant: str) -> tuple[int, str]:
    """Variants in the order of the mitigations' table (base first), never alphabetical."""
    return (VARIANTS.index(variant) if variant in VARIANTS else len(VARIANTS), variant)


def score(aligned: int, n: int, reason: str) -> Metric:
    """PAS with its Wilson 95% interval; undefined, with the reason, when n is 0 (never 0)."""
    value = pas(aligned, n)
    why = None if value is not None else reason
    return Metric.of(value, why, Interval.of(*wilson(aligned, n), why))


def pas_rows(cells: Sequence[tuple[Any, ...]]) -> list[PasRow]:
    """`cells` are `store.report.compass.judgment_cells`; see the module docstring for rows."""
    acc: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0, 0, 0])  # n, aligned, failed
    worlds: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for judge, model, variant, world, qtype, status, _mode, count, aligned in cells:
        if status not in ("usable", "failed"):
            continue
        worlds[(judge, model, variant)].add(world)
        for w in (world, ALL):
            for t in (qtype, ALL):
                cell = acc[(judge, model, variant, w, t)]
                if status == "usable":
                    cell[0] += int(count)
                    cell[1] += int(aligned)
                else:
                    cell[2] += int(count)
    rows = []
    for judge, model, variant in sorted(worlds, key=lambda g: (g[0], g[1], variant_rank(g[2]))):
        for world in [*sorted(worlds[(judge, model, variant)]), ALL]:
            for qtype in [*QUERY_TYPES, ALL]:
                n, aligned, failed = acc.get((judge, model, variant, world, qtype), (0, 0, 0))
                reason = (f"no usable judgments ({failed} failed)" if failed
                          else "no judged responses to queries of this type")
                rows.append(PasRow(judge=judge, model=model, variant=variant, world=world,
                                   query_type=qtype, n=n, aligned=aligned,
                                   pas=score(aligned, n, reason)))
    return rows


def failure_modes(cells: Sequence[tuple[Any, ...]]) -> list[FailureModeRow]:
    """Per (judge, model, variant, world) with usable denied-edge judgments, and per world
    "all": how many were misaligned and how the judge classified them (the failure modes of
    the COMPASS paper, Section 6.1). `cells` are `store.report.compass.judgment_cells`."""
    acc: dict[tuple[str, str, str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for judge, model, variant, world, qtype, status, mode, count, _aligned in cells:
        if status != "usable" or qtype != "denied_edge":
            continue
        for w in (world, ALL):
            c = acc[(judge, model, variant, w)]
            c["n_denied_edge"] += int(count)
            if mode is not None:  # set on misaligned ones only
                c["n_misaligned"] += int(count)
                c[mode if mode in FAILURE_MODES else UNCLASSIFIED] += int(count)
    counts = ("n_denied_edge", "n_misaligned", *FAILURE_MODES, UNCLASSIFIED)  # the row's fields
    order = sorted(acc, key=lambda k: (k[0], k[1], variant_rank(k[2]), k[3] == ALL, k[3]))
    return [FailureModeRow(judge=j, model=m, variant=v, world=w,
                           **{name: acc[(j, m, v, w)][name] for name in counts})
            for j, m, v, w in order]


def _choose(counts: dict[str, int], preferred: str | None) -> str:
    """The preferred judge if it is in `counts`, else the one with the most judgments."""
    return str(preferred) if preferred in counts else min(counts, key=lambda j: (-counts[j], j))


def contrast(cells: Sequence[tuple[Any, ...]], composed: Sequence[tuple[Any, ...]],
             preferred: str | None) -> tuple[list[PasVsComposedRow],
                                             list[tuple[str, str, str, str, int]]]:
    """Single-policy PAS (base variant) beside the composed error rate, per world and model.

    The judge is the same on both sides when one judge judged both (the preferred judge, i.e.
    the report's primary, if it did; else the one with the most judgments on the two sides);
    otherwise each side takes the preferred judge or its own most prolific one, and
    `same_judge` is false. Allowed PAS pools allowed-base and allowed-edge, denied PAS
    denied-base and denied-edge. `composed` holds (world, model, judge, judged, errors); the
    caller reads the primary judge's and those of judges that also judged COMPASS responses.
    Returns the rows and, for models judged on one side only, (world, model, side, judge,
    judgments) with the judge the contrast would have used on that side."""
    single: dict[tuple[str, str], dict[str, dict[str, list[int]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(lambda: [0, 0])))
    for judge, model, variant, world, qtype, status, _mode, count, aligned in cells:
        if status != "usable" or variant != "base":
            continue
        for part in (ALL, intended_kind(qtype)):
            single[(world, model)][judge][part][0] += int(count)
            single[(world, model)][judge][part][1] += int(aligned)
    comp: dict[tuple[str, str], dict[str, tuple[int, int]]] = defaultdict(dict)
    for world, model, judge, n, errors in composed:
        comp[(world, model)][judge] = (int(n), int(errors))
    both_worlds = {w for w, _m in single} & {w for w, _m in comp}
    rows, one_sided = [], []
    for world, model in sorted(k for k in set(single) | set(comp) if k[0] in both_worlds):
        s, c = single.get((world, model), {}), comp.get((world, model), {})
        s_counts = {j: v[ALL][0] for j, v in s.items()}
        c_counts = {j: v[0] for j, v in c.items()}
        if not s or not c:
            side, counts = ("COMPASS", s_counts) if s else ("composed", c_counts)
            judge = _choose(counts, preferred)  # the judge the contrast would have used
            one_sided.append((world, model, side, judge, counts[judge]))
            continue
        common = {j: s_counts[j] + c_counts[j] for j in set(s_counts) & set(c_counts)}
        if common:
            s_judge = c_judge = _choose(common, preferred)
        else:
            s_judge, c_judge = _choose(s_counts, preferred), _choose(c_counts, preferred)
        (n, aligned), (allowed_n, allowed), (denied_n, denied) = (
            s[s_judge].get(part, [0, 0]) for part in (ALL, "allow", "deny"))
        why = "no usable judgments of these query types"
        comp_n, errors = c[c_judge]
        rows.append(PasVsComposedRow(
            world=world, model=model, compass_judge=s_judge, n=n, aligned=aligned,
            pas=score(aligned, n, why), allowed_n=allowed_n, allowed_aligned=allowed,
            allowed_pas=score(allowed, allowed_n, why), denied_n=denied_n, denied_aligned=denied,
            denied_pas=score(denied, denied_n, why), composed_judge=c_judge, composed_n=comp_n,
            composed_errors=errors, composed_error_rate=rate(errors, comp_n).error_rate,
            same_judge=s_judge == c_judge))
    return rows, one_sided


# ------------------------------------------------------------------ judge vs human labels


def _majority(votes: list[int]) -> int | None:
    """The majority value of 0/1 votes; None for no votes or a tie."""
    if not votes or 2 * sum(votes) == len(votes):
        return None
    return int(2 * sum(votes) > len(votes))


def human_majority(labels: Sequence[tuple[Any, ...]]) -> tuple[dict[str, dict[str, int]],
                                                                dict[str, int]]:
    """Per response, the annotators' majority on refused, compliant and aligned (each
    annotator's aligned follows the alignment rule from their own refused and compliant), and
    the number of ties per dimension (excluded)."""
    votes: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for response, qtype, _annotator, refused, compliant in labels:
        v = votes[response]
        if refused is not None:
            v["refused"].append(int(refused))
        if compliant is not None:
            v["compliant"].append(int(compliant))
        if refused is not None and compliant is not None:
            v["aligned"].append(int(is_aligned(qtype, bool(refused), bool(compliant))))
    out: dict[str, dict[str, int]] = {}
    ties = dict.fromkeys(DIMENSIONS, 0)
    for response, v in votes.items():
        for dim in DIMENSIONS:
            m = _majority(v[dim])
            if m is None:
                ties[dim] += int(bool(v[dim]))
            else:
                out.setdefault(response, {})[dim] = m
    return out, ties


_NO_PAIR = "no response has both the judge's and a human majority {} label"


def _kappa(t: Sequence[int], dim: str) -> tuple[float, str | None]:
    """Cohen's kappa of (tp, fp, tn, fn), with a reason that names the dimension (the shared
    helper's reasons speak of errors)."""
    tp, fp, tn, fn = t
    value, reason = kappa(tp, fp, tn, fn)
    if reason is None:
        return value, None
    n = tp + fp + tn + fn
    if n == 0:
        return math.nan, _NO_PAIR.format(dim)
    names = {True: dim, False: f"not {dim}"}
    parts = []
    if tp + fp in (0, n):
        parts.append(f"the judge said '{names[tp + fp == n]}' every time")
    if tp + fn in (0, n):
        parts.append(f"the human majority is '{names[tp + fn == n]}' on every response")
    return math.nan, "; ".join(parts) + " (one class only); kappa is undefined"


def judge_validity(majority: dict[str, dict[str, int]], judgments: Sequence[tuple[Any, ...]],
                   judges: Sequence[str]) -> tuple[list[PasJudgeValidity], dict[str, int]]:
    """Per judge: agreement and Cohen's kappa with the human majority on each dimension
    (positive class: refused / compliant / aligned). Also, per judge, how many
    human-labelled responses it has no usable judgment of."""
    by_judge: dict[str, dict[str, tuple[Any, ...]]] = defaultdict(dict)
    for response, judge, refused, compliant, aligned in judgments:
        by_judge[judge][response] = (refused, compliant, aligned)
    out, unjudged = [], {}
    for judge in sorted(set(judges) | set(by_judge)):
        mine = by_judge.get(judge, {})
        unjudged[judge] = sum(1 for r in majority if r not in mine)
        blocks: dict[str, PasAgreement] = {}
        for k, dim in enumerate(DIMENSIONS):
            t = [0, 0, 0, 0]  # tp, fp, tn, fn with the judge as the predicting side
            for response, human in majority.items():
                said = mine.get(response, (None, None, None))[k]
                if dim in human and said is not None:
                    t[(0 if human[dim] else 1) if said else (3 if human[dim] else 2)] += 1
            blocks[dim] = PasAgreement(
                n=sum(t), agreement=Metric.of(*ratio(t[0] + t[2], sum(t), _NO_PAIR.format(dim))),
                kappa=Metric.of(*_kappa(t, dim)))
        out.append(PasJudgeValidity(
            judge=judge, n_responses=sum(1 for r in majority if r in mine), **blocks))
    return out, unjudged
