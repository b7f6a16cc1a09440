"""The report's tables for the other suites: COMPASS (PAS per query type, its pivot by target,
failure modes, PAS beside the composed error, the COMPASS judge against humans) and CompliBench
dialogues (judge metrics, error taxonomy). Each function gives no table when the report has no
keys for its suite. The tabular model and the assembly of a report's tables are
copal_tui.export.tables'.
"""

from __future__ import annotations

from typing import Any

from copal_tui.export.tables import Table, cols, reason_text


def compass_tables(doc: dict[str, Any]) -> list[Table]:
    """The COMPASS tables; none when the report has no COMPASS keys (no suite in scope)."""
    if "pas" not in doc:
        return []
    long = Table("pas", "Policy Alignment Score per query type (COMPASS; 'all' rows pool "
                 "worlds or query types), Wilson 95% CI", cols(
                     "judge:str model:str variant:str world:str query_type:str n:int "
                     "aligned:int pas:float ci_low:float ci_high:float pas_reason:str"),
                 display=["judge", "model", "variant", "world", "query_type", "n", "aligned",
                          "pas", "ci_low", "ci_high"])
    targets: list[str] = []
    cells: dict[tuple[str, str, str], dict[str, float]] = {}
    for r in doc["pas"]:
        long.rows.append([r["judge"], r["model"], r["variant"], r["world"], r["query_type"],
                          r["n"], r["aligned"], r["pas"], r["ci_low"], r["ci_high"],
                          reason_text(r, "pas")])
        target = f"{r['model']} ({r['variant']})"
        targets += [target] if target not in targets else []
        cells.setdefault((r["judge"], r["world"], r["query_type"]), {})[target] = r["pas"]
    pivot = Table("pas_pivot", "PAS by world and query type (rows) and target model (variant) "
                  "(columns)", [("judge", "str"), ("world", "str"), ("query_type", "str"),
                                *((t, "float") for t in targets)])
    for (judge, world, qtype), by_target in cells.items():
        pivot.rows.append([judge, world, qtype,
                           *(by_target.get(t, float("nan")) for t in targets)])
    modes = Table("pas_failure_modes", "Failure modes of misaligned denied-edge responses "
                  "(as the judge classified them)", cols(
                      "judge:str model:str variant:str world:str n_denied_edge:int "
                      "n_misaligned:int direct_violation:int refusal_answer_hybrid:int "
                      "indirect_violation:int unclassified:int"))
    keys = ["judge", "model", "variant", "world", "n_denied_edge", "n_misaligned",
            "direct_violation", "refusal_answer_hybrid", "indirect_violation", "unclassified"]
    modes.rows = [[r[k] for k in keys] for r in doc["pas_failure_modes"]]
    return [long, pivot, modes, *_compass_contrast_tables(doc)]


def _compass_contrast_tables(doc: dict[str, Any]) -> list[Table]:
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
    for r in doc["pas_vs_composed"]:
        vs.rows.append([r[name] for name, _kind in vs.columns])
    jv = Table("pas_judge_validity", "COMPASS judge against the human majority on refused, "
               "compliant and aligned", cols("judge:str dimension:str n:int agreement:float "
                                              "kappa:float kappa_reason:str"),
               display=["judge", "dimension", "n", "agreement", "kappa"])
    for entry in doc["pas_judge_validity"]:
        for dim in ("refused", "compliant", "aligned"):
            b = entry[dim]
            jv.rows.append([entry["judge"], dim, b["n"], b["agreement"], b["kappa"],
                            reason_text(b, "kappa")])
    return [vs, jv]


def dialogue_tables(doc: dict[str, Any]) -> list[Table]:
    """CompliBench-style judge metrics and the error taxonomy, only when the report has them."""
    if "dialogue_judging" not in doc:
        return []
    metrics = ("compliant_turn_accuracy violation_detection_accuracy "
               "strict_violation_detection_accuracy conversation_accuracy precision recall")
    judging = Table("dialogue_judging", "Dialogue judging (CompliBench's rule: every tagged "
                    "turn, each attempt's files pooled, micro over turns; attempts: attempts "
                    "pooled per conversation, files: conversation x attempt judgements)",
                    cols("judge:str domain:str binary:bool conversations:int attempts:int "
                          "files:int compliant_turns:int violation_turns:int "
                          + " ".join(f"{m}:float" for m in metrics.split())),
                    display=["judge", "domain", "conversations", "attempts", "files",
                             "compliant_turn_accuracy", "violation_detection_accuracy",
                             "strict_violation_detection_accuracy", "conversation_accuracy"])
    for r in doc["dialogue_judging"]:
        judging.rows.append([r[name] for name, _t in judging.columns])
    first = ("first_answer_compliant_turn_accuracy first_answer_violation_detection_accuracy "
             "first_answer_strict_violation_detection_accuracy "
             "first_answer_conversation_accuracy")
    answers = Table("dialogue_judge_answers", "Dialogue judges' answers: files read after "
                    "copal's repair round, files with no readable verdict (every turn wrong), "
                    "and the figures of the first answers alone as CompliBench's parser reads "
                    "them", cols("judge:str domain:str files:int repaired_attempts:int "
                                 "unparsed_attempts:int "
                                 + " ".join(f"{m}:float" for m in first.split())))
    answers.rows = [[r[name] for name, _t in answers.columns] for r in doc["dialogue_judging"]]
    taxonomy = Table("dialogue_error_taxonomy", "Judge mistakes reviewed by humans, by error type",
                     cols("judge:str domain:str error_type:str count:int"))
    taxonomy.rows = [[r["judge"], r["domain"], r["error_type"], r["count"]]
                     for r in doc.get("dialogue_error_taxonomy", [])]
    return [judging, answers, taxonomy]
