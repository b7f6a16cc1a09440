"""Evidence quotes in judge answers: how a quote is matched against the response it cites, and
the check a judge's output model runs when the response is in its validation context.

A quote counts as in the response when it occurs there after both are normalised: every run of
whitespace becomes one space and typographic quotation marks and apostrophes read as straight
ones. Nothing else is forgiven (case, wording, dashes, ellipses, joined passages): a quote that
changes a word may change what it shows, so the judge is asked again instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationInfo

# Validation context keys of the judges' answers (`LLMClient.structured(..., context=...)`):
# the response the evidence must quote, and a callable told of each answer rejected for a
# quote that is not in it.
RESPONSE_CONTEXT = "response"
QUOTE_REJECTED_CONTEXT = "on_quote_rejected"
# Typographic quotation marks and apostrophes, which a model copying a reply may straighten or
# curl: read as the straight ones on both sides. Nothing else is folded (not case, dashes or
# ellipses): a quote that changes a word or joins passages is still not in the reply.
_QUOTE_MARKS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'",
                              "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"'})


def normalise_quote(text: str) -> str:
    """Text as evidence is compared: every run of whitespace (newlines included) one space,
    typographic quotation marks straight."""
    return " ".join(text.translate(_QUOTE_MARKS).split())


def quote_in(quote: str, response: str) -> bool:
    """Whether an evidence quote occurs in the response, both normalised (`normalise_quote`).
    Quotation marks around the whole quote are not part of it; an empty quote is in nothing."""
    q = normalise_quote(quote).strip("\"' ")
    return bool(q) and q in normalise_quote(response)


def check_quotes(quotes: Iterable[tuple[str, str]], info: ValidationInfo, fix: str) -> None:
    """Reject an answer whose (label, quote) pairs quote words that are not in the response of
    the validation context (without that context nothing is checked). The message names the
    quotes, for the repair round."""
    context = info.context if isinstance(info.context, dict) else {}
    response = context.get(RESPONSE_CONTEXT)
    if not isinstance(response, str):
        return
    bad = [(label, q) for label, q in quotes if not quote_in(q, response)]
    if not bad:
        return
    tally = context.get(QUOTE_REJECTED_CONTEXT)
    if callable(tally):
        tally()
    listed = "; ".join(f"{label} {q[:80]!r}{'...' if len(q) > 80 else ''}" for label, q in bad)
    raise ValueError(f"evidence not found in the reply: {listed}. Every evidence quote must be "
                     "an exact, contiguous copy of the reply's characters (only whitespace and "
                     "the style of quotation marks may differ), with no paraphrase, ellipsis or "
                     f"joined passages; {fix}")
