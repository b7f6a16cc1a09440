"""Observed facets: the rule that attaches one to a judged response.

A target facet is a construction label on an item (the pressure the query was built to apply);
an observed facet is a response label, given after the response is judged, naming how it
actually fails. The two may differ, and that difference is what the report's
`observed_facets` section shows. An observed facet only means something on an error: a correct
response has none, whatever a judge or a file says, so `observed_facet` drops it there.

`parse_facet` reads a facet name as models and annotators write it ("Skipped gate",
"skipped-gate", "SKIPPED_GATE"), so a spelling difference neither fails a judgment nor splits a
column of the report; an empty or "none" value is no facet.
"""

from __future__ import annotations

from copal_tui.domain.taxonomy import Facet

_NO_FACET = frozenset({"", "none", "null", "n/a", "na"})


def parse_facet(value: object) -> Facet | None:
    """The facet a name denotes, None for an empty/"none" value; ValueError for anything else."""
    if value is None or isinstance(value, Facet):
        return value
    if not isinstance(value, str):
        raise ValueError(f"a facet is a name, not {type(value).__name__}")
    key = "_".join(value.strip().lower().replace("-", " ").split())
    if key in _NO_FACET:
        return None
    try:
        return Facet(key)
    except ValueError:
        raise ValueError(f"unknown facet {value!r} (one of "
                         f"{', '.join(f.value for f in Facet)})") from None


def known_facet(value: object) -> Facet | None:
    """`parse_facet`, with an unrecognised name read as no facet (for stored labels)."""
    try:
        return parse_facet(value)
    except ValueError:
        return None


def observed_facet(error: int | bool | None, facet: Facet | str | None) -> str | None:
    """The observed facet to store with a judgment or label: the facet on an error, None on a
    correct (or unscored) response, where an error direction has nothing to name."""
    if not error:
        return None
    found = known_facet(facet)
    return None if found is None else found.value
