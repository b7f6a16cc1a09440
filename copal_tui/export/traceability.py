"""What lets a reader check the judge-validity figures of an export: the confusion matrices in
scikit-learn's layout (a report table) and the file of every response counted
(`validity_cases.csv`, or `.jsonl` beside `report.json`), one row per response and judge setting
(`copal_tui.export.case_record`). Its rows per setting are exactly that setting's `n`, their
cells its tp/fp/fn/tn: `copal_tui.services.cases` reads them, applying the report's reference
rule; this module only formats them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from copal_tui.export.case_record import FIELDS, Case
from copal_tui.export.formats import table_csv
from copal_tui.export.table import Table, validity_blocks
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.reference import CLASSES, CONVENTION

CASES_STEM = "validity_cases"


def confusion_tables(doc: ReportDocument) -> list[Table]:
    """Each judge setting's matrix (pooled, then per pattern): a row per human reference
    class, a column per judge class."""
    t = Table("confusion_matrix", f"Confusion matrices ({CONVENTION})",
              [("judge", "str"), ("mode", "str"), ("pattern", "str"),
               ("human_reference", "str"), ("judge_no_error", "int"), ("judge_error", "int")],
              note="Cells: [[tn, fp], [fn, tp]], as scikit-learn's confusion_matrix(reference, "
                   "judge, labels=[0, 1]).")
    t.rows = [[entry.judge, entry.mode, pattern, cls, *row] for entry in doc.judge_validity
              for pattern, block in validity_blocks(entry)
              for cls, row in zip(CLASSES, block.confusion_matrix.matrix, strict=True)]
    return [t]


def case_files(found: Sequence[Case], fmt: str) -> dict[str, str]:
    """File name -> text of the cases behind the judge-validity figures, for an export in
    `fmt` (JSON lines beside a json report, CSV beside any other)."""
    if fmt == "json":
        return {f"{CASES_STEM}.jsonl": cases_jsonl(found)}
    return {f"{CASES_STEM}.csv": cases_csv(found)}


def cases_jsonl(found: Sequence[Case]) -> str:
    """One JSON object per case and line (`Case.record`)."""
    return "".join(json.dumps(c.record(), ensure_ascii=False) + "\n" for c in found)


def cases_csv(found: Sequence[Case]) -> str:
    """The cases as CSV (the report tables' dialect), one column per `FIELDS`."""
    kinds = {"judge_error": "int", "reference": "int"}
    return table_csv(Table(CASES_STEM, "Responses counted in judge validity",
                           [(name, kinds.get(name, "str")) for name in FIELDS],
                           rows=[c.flat() for c in found]))
