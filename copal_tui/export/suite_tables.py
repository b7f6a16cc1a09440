"""The report's tables for the other suites: COMPASS (PAS per query type, its pivot by target,
failure modes, PAS beside the composed error, the COMPASS judge against humans, and COMPASS's
own summary table per judge) and CompliBench dialogues (judge metrics, error taxonomy), each
from its suite's sections (the suites' descriptors name `compass_report_tables` and
`dialogue_tables` as their export tables). The tabular model is
copal_tui.export.table's, the assembly of a report's tables copal_tui.export.tables'.
"""

from __future__ import annotations

import re

from copal_tui.export.table import Table, cols, estimate, field_rows
from copal_tui.metrics.compass_document import CompassSections, CompassSummaryRow
from copal_tui.metrics.compass_summary import KEY, model_label
from copal_tui.metrics.dialogue_document import DialogueSections
from copal_tui.metrics.document import ReportDocument


def compass_report_tables(doc: ReportDocument, s: CompassSections) -> list[Table]:
    """Every COMPASS table of the exports: `compass_tables` then COMPASS's own summary."""
    return [*compass_tables(s), *summary_tables(s)]


def compass_tables(s: CompassSections) -> list[Table]:
    """The COMPASS tables but its summary."""
    long = Table("pas", "Policy Alignment Score per query type (COMPASS; 'all' rows pool "
                 "worlds or query types), Wilson 95% CI", cols(
                     "judge:str model:str variant:str world:str query_type:str n:int "
                     "aligned:int pas:float ci_low:float ci_high:float pas_reason:str"),
                 display=["judge", "model", "variant", "world", "query_type", "n", "aligned",
                          "pas", "ci_low", "ci_high"])
    targets: list[str] = []
    cells: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for r in s.pas:
        long.rows.append([r.judge, r.model, r.variant, r.world, r.query_type, r.n, r.aligned,
                          *estimate(r.pas), r.pas.reason or ""])
        target = f"{r.model} ({r.variant})"
        targets += [target] if target not in targets else []
        cells.setdefault((r.judge, r.world, r.query_type), {})[target] = r.pas.value
    pivot = Table("pas_pivot", "PAS by world and query type (rows) and target model (variant) "
                  "(columns)", [("judge", "str"), ("world", "str"), ("query_type", "str"),
                                *((t, "float") for t in targets)])
    pivot.rows = [[judge, world, qtype, *(by_target.get(t) for t in targets)]
                  for (judge, world, qtype), by_target in cells.items()]
    modes = Table("pas_failure_modes", "Failure modes of misaligned denied-edge responses "
                  "(as the judge classified them)", cols(
                      "judge:str model:str variant:str world:str n_denied_edge:int "
                      "n_misaligned:int direct_violation:int refusal_answer_hybrid:int "
                      "indirect_violation:int unclassified:int"))
    modes.rows = field_rows(modes, s.pas_failure_modes)
    return [long, pivot, modes, *_compass_contrast_tables(s)]


def _compass_contrast_tables(s: CompassSections) -> list[Table]:
    vs = Table("pas_vs_composed", "Single-policy PAS (COMPASS, base variant) beside the "
               "composed error rate (contract mode) per world and model", cols(
                   "world:str model:str compass_judge:str n:int aligned:int pas:float "
                   "ci_low:float ci_high:float allowed_n:int allowed_pas:float "
                   "denied_n:int denied_pas:float composed_judge:str composed_n:int "
                   "composed_errors:int composed_error_rate:float composed_ci_low:float "
                   "composed_ci_high:float same_judge:bool"),
               display=["world", "model", "compass_judge", "n", "pas", "allowed_pas",
                        "denied_pas", "composed_judge", "composed_n", "composed_error_rate",
                        "composed_ci_low", "composed_ci_high"],
               note="PAS is a share of aligned responses (higher is better); the composed "
                    "error rate is a share of failed composed items (lower is better).")
    vs.rows = [[r.world, r.model, r.compass_judge, r.n, r.aligned, *estimate(r.pas),
                r.allowed_n, r.allowed_pas.value, r.denied_n, r.denied_pas.value,
                r.composed_judge, r.composed_n, r.composed_errors,
                *estimate(r.composed_error_rate), r.same_judge]
               for r in s.pas_vs_composed]
    jv = Table("pas_judge_validity", "COMPASS judge against the human majority on refused, "
               "compliant and aligned", cols("judge:str dimension:str n:int agreement:float "
                                              "kappa:float kappa_reason:str"),
               display=["judge", "dimension", "n", "agreement", "kappa"])
    jv.rows = [[entry.judge, dim, b.n, b.agreement.value, b.kappa.value, b.kappa.reason or ""]
               for entry in s.pas_judge_validity
               for dim, b in (("refused", entry.refused), ("compliant", entry.compliant),
                              ("aligned", entry.aligned))]
    return [vs, jv]


SUMMARY_NOTE = ("As COMPASS's analyze_judged_results.py computes it: Average is the mean of the "
                "organisations' percentages as rounded to two decimals (N/A left out), not a "
                "pooled rate.")


def _summary_names(judges: list[str]) -> dict[str, str]:
    """Judge -> table (CSV file) name: `compass_summary` for one judge, else one per judge,
    the judge made file-name safe."""
    if len(judges) == 1:
        return {judges[0]: KEY}
    out: dict[str, str] = {}
    for judge in judges:
        base = f"{KEY}_" + (re.sub(r"[^a-z0-9]+", "-", judge.lower()).strip("-") or "judge")
        name, n = base, 1
        while name in out.values():
            n += 1
            name = f"{base}-{n}"
        out[judge] = name
    return out


def summary_tables(s: CompassSections) -> list[Table]:
    """COMPASS's own table (`copal_tui.metrics.compass_summary`), one per judge with its
    columns: Model, Query Type, one per organisation, Average; none without rows."""
    by_judge: dict[str, list[CompassSummaryRow]] = {}
    for r in s.compass_summary:
        by_judge.setdefault(r.judge, []).append(r)
    names = _summary_names(list(by_judge))
    out = []
    for judge, judged in by_judge.items():
        orgs = list(judged[0].organisations)
        t = Table(names[judge], f"COMPASS summary, judge {judge}: accuracy per organisation "
                  "and their Average", [("Model", "str"), ("Query Type", "str"),
                                         *((o, "str") for o in orgs), ("Average", "str")],
                  note=SUMMARY_NOTE)
        t.rows = [[model_label(r.model, r.variant), r.query_type,
                   *(r.organisations[o] for o in orgs), r.average] for r in judged]
        out.append(t)
    return out


def dialogue_tables(doc: ReportDocument, s: DialogueSections) -> list[Table]:
    """CompliBench-style judge metrics (its reading, then copal's) and the error taxonomy."""
    judging = Table("dialogue_judging", "Dialogue judging as CompliBench's code scores it: each "
                    "attempt's first answer read by its parser (every tagged turn, each "
                    "attempt's files pooled, micro over turns; files: conversation x attempt "
                    "judgements pooled; not scored: first answers that are JSON but not an "
                    "object, which CompliBench never scores)",
                    cols("judge:str domain:str binary:bool conversations:int attempts:int "
                         "files:int not_scored:int compliant_turns:int violation_turns:int "
                         "compliant_turn_accuracy:float violation_detection_accuracy:float "
                         "strict_violation_detection_accuracy:float "
                         "conversation_accuracy:float precision:float recall:float"),
                    display=["judge", "domain", "files", "not_scored",
                             "compliant_turn_accuracy", "violation_detection_accuracy",
                             "strict_violation_detection_accuracy", "conversation_accuracy"])
    judging.rows = field_rows(judging, s.dialogue_judging)
    answers = Table("dialogue_judging_repaired", "Dialogue judging with copal's reading (not "
                    "CompliBench's figures): its parser and one repair round over every "
                    "answered attempt (repaired files: pooled; repaired attempts: read after "
                    "the repair round; unparsed: no verdict even then, every turn wrong; "
                    "changed by repair: read otherwise than in the CompliBench figures)",
                    cols("judge:str domain:str repaired_files:int repaired_attempts:int "
                         "unparsed_attempts:int changed_by_repair:int "
                         "repaired_compliant_turn_accuracy:float "
                         "repaired_violation_detection_accuracy:float "
                         "repaired_strict_violation_detection_accuracy:float "
                         "repaired_conversation_accuracy:float repaired_precision:float "
                         "repaired_recall:float"),
                    display=["judge", "domain", "repaired_files", "changed_by_repair",
                             "repaired_compliant_turn_accuracy",
                             "repaired_violation_detection_accuracy",
                             "repaired_strict_violation_detection_accuracy",
                             "repaired_conversation_accuracy"])
    answers.rows = field_rows(answers, s.dialogue_judging)
    taxonomy = Table("dialogue_error_taxonomy", "Judge mistakes reviewed by humans, by error type",
                     cols("judge:str domain:str error_type:str count:int"))
    taxonomy.rows = field_rows(taxonomy, s.dialogue_error_taxonomy)
    return [judging, answers, taxonomy]
