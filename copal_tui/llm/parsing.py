"""Turning a model's answer into a validated pydantic object, and the repair prompt when it fails.

Models wrap JSON in code fences or add a sentence around it; that is tolerated (the object is
cut out), anything else is a problem described in words the model can act on in its one repair
round.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

REPAIR_INSTRUCTION = (
    "Your answer was invalid because {problem}. Answer again with only the JSON object "
    "described above, no other text."
)
EMPTY_REPAIR_INSTRUCTION = (
    "Your answer was empty. Answer with only the JSON object described above, no other text."
)


class OutputProblem(ValueError):
    """Why an answer could not be used (phrased for the repair message and the failure reason)."""


def extract_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped:
        raise OutputProblem("the answer was empty")
    candidates = [stripped]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(stripped)]
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        candidates.append(stripped[start : end + 1])
    first_error: json.JSONDecodeError | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
    if start != -1 and end <= start:
        raise OutputProblem("the JSON object is incomplete (it was cut off before its closing brace)")
    detail = f" ({first_error.msg} at line {first_error.lineno} column {first_error.colno})" if first_error else ""
    raise OutputProblem(f"it is not valid JSON{detail}")


def validate(text: str, out_type: type[T], context: Mapping[str, Any] | None = None) -> T:
    """Parse and validate; raises OutputProblem. Depends on the text (and the request's own
    `context`, pydantic's validation context: what a model's validators check an answer
    against, such as the response a judge quotes) alone, so the repair request built from a
    cached answer is the same request (and hits the cache) on a re-run."""
    obj = extract_json(text)
    if not isinstance(obj, dict):
        raise OutputProblem(f"the answer is a JSON {type(obj).__name__}, not an object")
    try:
        return out_type.model_validate(obj, context=dict(context) if context else None)
    except ValidationError as exc:
        raise OutputProblem(f"it does not match the schema: {summarise(exc)}") from None


def summarise(exc: ValidationError, limit: int = 6) -> str:
    errors = exc.errors()
    parts = []
    for err in errors[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    more = f"; and {len(errors) - limit} more" if len(errors) > limit else ""
    return "; ".join(parts) + more


def repair_messages(
    messages: list[dict[str, Any]], bad_answer: str, problem: str
) -> list[dict[str, Any]]:
    """The original conversation, the bad answer, and one short instruction to fix it."""
    if not bad_answer.strip():
        # Several providers reject an empty assistant turn, so only the instruction is added.
        return [*messages, {"role": "user", "content": EMPTY_REPAIR_INSTRUCTION}]
    return [
        *messages,
        {"role": "assistant", "content": bad_answer},
        {"role": "user", "content": REPAIR_INSTRUCTION.format(problem=problem)},
    ]
