"""Contract logic as pure functions: error and direction from marks on R and F items.

`e = 1` iff some required item is missing from the observed set H or some forbidden item is
in H (COPAL section 3.4). The verdict of a judge or annotator is never trusted on its own:
callers pass the marks and these functions decide.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from copal_tui.domain.taxonomy import Direction


@dataclass(frozen=True)
class Verdict:
    error: int
    direction: Direction
    missing_required: tuple[str, ...]
    present_forbidden: tuple[str, ...]


def evaluate(
    required: Iterable[str], forbidden: Iterable[str], observed: Iterable[str]
) -> Verdict:
    """Compute the error and its direction from the observed handling set."""
    req = list(dict.fromkeys(required))
    forb = list(dict.fromkeys(forbidden))
    seen = set(observed)
    missing = tuple(r for r in req if r not in seen)
    present = tuple(f for f in forb if f in seen)
    return Verdict(
        error=int(bool(missing or present)),
        direction=direction_of(bool(missing), bool(present)),
        missing_required=missing,
        present_forbidden=present,
    )


def direction_of(required_missing: bool, forbidden_present: bool) -> Direction:
    if required_missing and forbidden_present:
        return Direction.MIXED
    if forbidden_present:
        return Direction.UNDER
    if required_missing:
        return Direction.OVER
    return Direction.NONE


def correct_marks(required: Sequence[str]) -> list[str]:
    """The observed set of a fully correct response: every required item, no forbidden one."""
    return list(dict.fromkeys(required))


def unknown_ids(
    required: Iterable[str], forbidden: Iterable[str], observed: Iterable[str]
) -> list[str]:
    """Observed ids that are not contract items (a malformed mark set)."""
    known = set(required) | set(forbidden)
    return [o for o in observed if o not in known]


def content_sha256(query: str, required: object, forbidden: object, response: str) -> str:
    """Hash of what a label was given on: query, contract and response text.

    Canonical JSON so the hash is stable across processes; used to flag stale labels.
    """
    payload = json.dumps(
        {"query": query, "required": required, "forbidden": forbidden, "response": response},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
