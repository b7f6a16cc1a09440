"""The report as one JSON document: NaN becomes null with a sibling `<key>_reason`.

The document is written from the typed report (`copal_tui.metrics.document.ReportDocument`):
its serialiser lays every metric out as the report's keys (`<key>`, `<key>_reason`, `ci_low`,
...), and this module encodes the result. Other documents of an export (its manifest) are
plain JSON values and are encoded as they are.

JSON has no NaN, and a bare null would hide why a number is missing, so every null metric has
a reason next to it (the metrics layer states the reasons; a NaN that arrives without one gets
a generic reason here rather than passing silently). Same report, same bytes: keys keep the
order the metrics layer built them in (already sorted by model, taxonomy order, ...) and floats
are written with Python's shortest round-trip repr.
"""

from __future__ import annotations

import json
import math
from typing import Any

from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_base import GENERIC_REASON

__all__ = ["dumps", "jsonable"]


def jsonable(value: Any) -> Any:
    """A copy of the report with NaN replaced by null (+ reasons) and numpy scalars unwrapped."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key] = jsonable(item)
        for key, item in value.items():
            if _is_nan(item) and f"{key}_reason" not in value and "reason" not in value:
                out[f"{key}_reason"] = GENERIC_REASON
        return out
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if _is_nan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return jsonable(value.item())  # numpy scalar
    return value


def _is_nan(value: Any) -> bool:
    try:
        return isinstance(value, float) and math.isnan(value) or (
            hasattr(value, "dtype") and bool(math.isnan(float(value))))
    except (TypeError, ValueError):
        return False


def dumps(document: ReportDocument | dict[str, Any]) -> str:
    """The report (or another document of the export, such as its manifest) as indented JSON
    text ending in a newline; refuses NaN and Infinity."""
    value = document.to_dict() if isinstance(document, ReportDocument) else document
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
