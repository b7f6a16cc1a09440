"""One response behind a judge-validity count (`Case`) and its two flat layouts, both in `FIELDS`
order: a JSON object (`Case.record`) and a row of text cells (`Case.flat`). The type lives here,
beside its renderings, so the export formats cases without reaching up to the service that reads
them (`copal_tui.services.cases`).

A case's confusion cell is `copal_tui.metrics.reference.cell`'s (error is the positive class); a
response without a reference (not labelled, or a tie) has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copal_tui.metrics.reference import cell as cell_of

# The columns of every rendering (CLI table, CSV, JSON lines, the export's file).
FIELDS = ("response_id", "item_id", "world_id", "model", "pattern", "facet", "judge", "mode",
          "judge_error", "judge_direction", "reference", "reference_source", "annotators",
          "adjudicator", "cell", "content_sha256")


@dataclass(frozen=True)
class Case:
    """One judged response: the setting's verdict, the reference (None: no label, or a tie)
    and what it rests on (the annotators' labels, the adjudicator, the content hashes)."""

    response_id: str
    item_id: str
    world_id: str
    model: str
    pattern: str | None
    facet: str | None
    judge: str
    mode: str
    judge_error: int
    judge_direction: str | None
    reference: int | None
    reference_source: str  # adjudicated, majority, tie (excluded) or none (not labelled)
    annotators: tuple[tuple[str, int], ...] = ()
    adjudicator: str | None = None
    content_sha256: tuple[str, ...] = field(default_factory=tuple)

    @property
    def cell(self) -> str | None:
        return None if self.reference is None else cell_of(self.judge_error, self.reference)

    def record(self) -> dict[str, Any]:
        """The case as one flat JSON object, in FIELDS order."""
        return {**{name: getattr(self, name) for name in FIELDS},
                "annotators": [{"annotator": a, "error": e} for a, e in self.annotators],
                "content_sha256": list(self.content_sha256)}

    def flat(self) -> list[Any]:
        """The case as one row of text-friendly cells, in FIELDS order (CSV, tables)."""
        rec = {**self.record(), "annotators": "; ".join(f"{a}:{e}" for a, e in self.annotators),
               "content_sha256": "; ".join(self.content_sha256)}
        return [rec[k] for k in FIELDS]
