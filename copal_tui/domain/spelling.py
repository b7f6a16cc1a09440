"""How a choice may be spelled: one rule for every fixed choice copal takes (judge modes,
formats, suites, stages, COMPASS variants, import sources, ...), wherever it is typed.

A choice matches whatever its letters are when case is ignored and `-`, `_` and spaces are the
same mark: `full-policy`, `full_policy` and `Full Policy` all name the judge mode stored as
`full_policy`; `pre_filter` names the COMPASS variant `pre-filter`. The value kept is always the
choice as copal stores it, so the spelling never reaches the database.
"""

from __future__ import annotations

from collections.abc import Iterable


def spelling_key(text: str) -> str:
    """The form two spellings of one choice share: case-folded, `-`, `_` and runs of spaces
    made one `_`."""
    return "_".join(text.replace("-", " ").replace("_", " ").casefold().split())


def canonical(value: str, choices: Iterable[str]) -> str | None:
    """The choice `value` spells (as the choice is written), None when it spells none."""
    key = spelling_key(value)
    return next((c for c in choices if spelling_key(c) == key), None)


def spelled_suffix(text: str, choices: Iterable[str], sep: str = "@") -> str:
    """`text` with a `SEP CHOICE` ending written as the choice is (`J@full-policy` ->
    `J@full_policy`); unchanged when it has no such ending (a name may hold `sep` itself)."""
    head, found, tail = text.rpartition(sep)
    choice = canonical(tail, choices) if found else None
    return f"{head}{sep}{choice}" if choice is not None else text
