"""The report as one JSON document: NaN becomes null with a sibling `<key>_reason`.

The typed report's serialiser (`copal_tui.metrics.document.ReportDocument`) lays every metric
out as the report's keys (`<key>`, `<key>_reason`, `ci_low`, ...); this module encodes the
result, and the export's other documents (its manifest) as they are. JSON has no NaN, and a bare
null would hide why a number is missing, so every null metric has a reason next to it (a NaN
that arrives without one gets a generic reason rather than passing silently). Same report, same
bytes: keys keep the order the metrics layer built them in and floats are written with Python's
shortest round-trip repr.
"""

from __future__ import annotations

import json
import math
from typing import Any

from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_base import GENERIC_REASON


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def jsonable(value: Any) -> Any:
    """A copy of the document with NaN replaced by null (+ reasons)."""
    if isinstance(value, dict):
        out = {key: jsonable(item) for key, item in value.items()}
        for key, item in value.items():
            if _is_nan(item) and f"{key}_reason" not in value and "reason" not in value:
                out[f"{key}_reason"] = GENERIC_REASON
        return out
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return None if _is_nan(value) else value


def dumps(document: ReportDocument | dict[str, Any]) -> str:
    """The report (or another document of the export, such as its manifest) as indented JSON
    text ending in a newline; refuses NaN and Infinity."""
    value = document.to_dict() if isinstance(document, ReportDocument) else document
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
