"""What a deployed chatbot (an http target) is sent: a live endpoint outside the audit, so each
text copal sends it (a probe's query, a few-shot demonstration) passes the de-identifier
imported traffic passes (`copal_tui.domain.deid`, its default rules) first, and what it
changed is recorded by type with the response (`responses.redactions`,
`compass_responses.redactions`: `{}` when nothing, NULL for any other target).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from copal_tui.domain.deid import Deidentifier

# What the de-identifier's neutralising of a placeholder look-alike (`<EMAIL_1>` typed in a
# query) is recorded as.
LOOKALIKE = "LOOKALIKE"


def probe(deid: Deidentifier, query: str) -> tuple[str, dict[str, int]]:
    """The query as a deployed chatbot is sent it, and what de-identification changed in it
    by type (empty: nothing)."""
    [sent], changed = probe_texts(deid, [query])
    return sent, changed


def probe_texts(deid: Deidentifier, texts: Sequence[str]) -> tuple[list[str], dict[str, int]]:
    """Texts sent together (numbered as one conversation) and what de-identification changed
    in them by type."""
    done = deid.redact(list(texts))
    changed: Counter[str] = Counter(done.counts)
    if done.escaped:
        changed[LOOKALIKE] += done.escaped
    return list(done.texts), dict(sorted(changed.items()))
