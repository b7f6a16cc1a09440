"""The recognisers of identifiers that words announce: street addresses (a number, a street
name and a street type) and account, order and ticket ids (after "order", "ticket", "account"
and their kin, or behind a known prefix such as ORD- or INC).

Both start from a digit, where the regular-expression engine can skip ahead cheaply, and look
back at the few characters before it for the words, so a text without digits costs nothing
here.
"""

from __future__ import annotations

import re

from copal_tui.domain.deid.recognisers import Found

# ------------------------------------------------------------------ street addresses

_STREET_TYPES = (
    r"Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Boulevard|Blvd|Court|Ct|Place|Pl|Way|"
    r"Close|Crescent|Cres|Terrace|Gardens|Gdns|Square|Sq|Parkway|Pkwy|Highway|Hwy|Circle|Cir|"
    r"Grove|Mews|Row|Hill|Walk|Park|Green|Rise|Parade|Trail|Plaza|Pike|Alley|Loop|Broadway|"
    r"Wharf|Quay|Embankment")
# In lower case only the full words, and the street's name may not be a common word: "sent 3
# items on the way" is no address.
_STREET_WORDS = {"street", "road", "avenue", "lane", "drive", "boulevard", "court", "place",
                 "way", "close", "crescent", "terrace", "gardens", "square", "parkway", "highway",
                 "grove", "mews"}
_COMMON = {"the", "a", "an", "on", "in", "to", "of", "for", "my", "your", "our", "their", "and",
           "or", "by", "at", "with", "from", "is", "are", "was", "be", "it", "this", "that", "all",
           "more", "other", "same", "next", "last", "few", "day", "days", "hour", "hours", "week",
           "weeks", "month", "months", "year", "years", "item", "items", "time", "times", "piece",
           "pieces", "box", "boxes", "pack", "packs", "unit", "units", "order", "orders",
           "minute", "minutes"}
_UNIT = r"(?:Flat|Apt\.?|Apartment|Unit|Suite|Ste\.?|Floor|Fl\.?|Room|#) ?[0-9A-Za-z]{1,5}"
_POSTAL = (r"(?:[A-Z]{2}\s+[0-9]{5}(?:-[0-9]{4})?"  # a US state and ZIP
           r"|[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}"  # a UK postcode
           r"|[0-9]{5}(?:-[0-9]{4})?)\b")  # a bare ZIP
_TOWN = r"[A-Z][a-zA-Z'’.-]+\b(?: [A-Z][a-zA-Z'’.-]+\b){0,2}"
_TAIL = (rf"(?:,? {_UNIT})?"
         r"(?:,?\s+(?:N|S|E|W|NE|NW|SE|SW)\b\.?)?"
         rf"(?:,?\s+{_TOWN},?\s+{_POSTAL}|,\s*{_TOWN}|,?\s+{_POSTAL})?")
# `[0-9][0-9]{0,4}`, not `[0-9]{1,5}`: a pattern that opens on a character class lets `re`
# skip to the next digit; the look-behind after it drops starts inside a longer number at once.
_NUMBER = r"[0-9](?<![0-9][0-9])[0-9]{0,4}[A-Za-z]?(?:[-/][0-9]{1,5}[A-Za-z]?)?,? "
_STREET = re.compile(
    _NUMBER + r"(?:(?:[A-Z][a-zA-Z'’.-]*|[0-9]{1,3}(?:st|nd|rd|th)) ){1,4}"
    rf"(?:{_STREET_TYPES})\b\.?" + _TAIL)
# Any case, run only where a text has a street word and a word that announces an address ("my
# address is 12 baker street"); `addresses` checks that word stands just before.
_STREET_ANY_CASE = re.compile(
    _NUMBER + r"(?P<name>(?:[A-Za-z][a-zA-Z'’.-]* ){1,3})"
    rf"(?i:{'|'.join(sorted(_STREET_WORDS))})\b\.?"
    rf"(?i:(?:,?\s+{_TOWN},?\s+{_POSTAL}|,?\s+{_POSTAL}))?" + _TAIL)
# Both looked for in the lower-cased text before the scan in any case runs.
_HAS_STREET_WORD = re.compile(" (?:" + "|".join(sorted(_STREET_WORDS)) + r")\b")
_HAS_ADDRESS_WORD = re.compile(r"address|live|moved|deliver|ship|send|sent|post|locat|visit|"
                               r"come to|collect|\bat\b")
_UNIT_BEFORE = re.compile(rf"\b{_UNIT},? \Z")
_PO_BOX = re.compile(r"\b[Pp]\.? ?[Oo]\.? ?(?:Box|BOX|box) [0-9]{1,6}\b" + _TAIL)
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def addresses(text: str) -> list[Found]:
    """Street addresses: a number, a street name and a street type, with a flat or unit, a
    town and a US ZIP or UK postcode where they follow; and PO boxes."""
    out = []
    spans = [m.span() for m in _STREET.finditer(text)]
    low = text.lower()
    if _HAS_STREET_WORD.search(low) and _HAS_ADDRESS_WORD.search(low):
        spans += [m.span() for m in _STREET_ANY_CASE.finditer(text) if _lower_ok(m, text)]
    for start, end in spans:
        if start and text[start - 1].isalnum():
            continue
        unit = _UNIT_BEFORE.search(text, max(0, start - 20), start)
        if unit:
            start = unit.start()
        out.append((start, end, "ADDRESS", _NOT_ALNUM.sub(" ", text[start:end].lower()).strip()))
    if "box" in text or "Box" in text or "BOX" in text:
        out += [(m.start(), m.end(), "ADDRESS", _NOT_ALNUM.sub(" ", m.group().lower()).strip())
                for m in _PO_BOX.finditer(text)]
    return out


def _lower_ok(m: re.Match[str], text: str) -> bool:
    if any(w.lower() in _COMMON for w in m["name"].split()):
        return False
    return _HAS_ADDRESS_WORD.search(text[max(0, m.start() - 40):m.start()].lower()) is not None


# ------------------------------------------------------------------ account, order, ticket ids

_KEYWORDS = {
    "ORDER": r"order|purchase order|invoice|booking|reservation|confirmation|tracking|"
             r"shipment|parcel|consignment|return|rma|refund|receipt|transaction",
    "TICKET": r"ticket|case|incident|request|complaint|claim|enquiry|inquiry|issue|"
              r"support id|ref|reference",
    "ACCOUNT": r"account|acct|a/c|customer|member|membership|user|client|subscriber|"
               r"subscription|policy|loyalty card|contract|meter",
}
# The word, then "no.", "number", "id"...; then "#", ":" or "is"; then the id.
_KEYWORD_BEFORE = re.compile(
    "\\b(?:" + "|".join(f"(?P<{t}>{kw})" for t, kw in _KEYWORDS.items()) + ")\\b"
    r"(?P<filler>\s+(?:(?:no|nr|num)(?:\.|\b)|number\b|id\b|ref(?:\.|\b)|reference\b|code\b))?"
    r"(?P<mark>\s*#\s*:?|\s*:|\s+is\b)?\s*\Z")
# Three characters at least (`re` skips "9:00" and "£24.99" without a Python step).
_FILLER_HINT = re.compile("no|nr|num|id|ref|code|#|:")
_TOKEN = re.compile(r"[0-9](?:[0-9A-Za-z]{2,}(?:[-/][0-9A-Za-z]+){0,4}"
                    r"|[0-9A-Za-z]?(?:[-/][0-9A-Za-z]+){1,4})")
_HEAD = re.compile(r"[A-Za-z]{1,6}[-/]?\Z")
_PREFIX_TYPE = {"ORD": "ORDER", "ORDER": "ORDER", "PO": "ORDER", "INV": "ORDER",
                "RMA": "ORDER", "TKT": "TICKET", "TK": "TICKET", "TCK": "TICKET",
                "INC": "TICKET", "CS": "TICKET", "CASE": "TICKET", "SR": "TICKET",
                "REQ": "TICKET", "REF": "TICKET", "ACC": "ACCOUNT", "ACCT": "ACCOUNT",
                "CUST": "ACCOUNT", "CUS": "ACCOUNT", "MEM": "ACCOUNT"}
# Dates and times after "booking" or "order" are not ids.
_NOT_ID = re.compile(r"[0-9]{1,4}[-/][0-9]{1,2}[-/][0-9]{1,4}|[0-9]{1,2}(?:am|pm|h|st|nd|rd|th)",
                     re.I)
_ID_KEY = re.compile(r"[^0-9A-Z]")


def ids(text: str) -> list[Found]:
    """Account, order and ticket ids: after one of their words ("order #A-123456", "ticket
    TK-88231", "account no. 12345678", "case 00123456") or with a known prefix (ORD-123456).
    After the bare word, an id needs six digits, or four behind letters (A-1234); after "no.",
    "number", "id", "#" or ":", three digits do."""
    out: list[Found] = []
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        digits = sum(map(str.isdigit, m.group()))
        if digits < 3:
            continue
        before = text[start - 1] if start else " "
        head = None
        if before.isalpha() or before in "-/":
            head = _HEAD.search(text, max(0, start - 7), start)
        if head is not None:
            start = head.start()
        if start and text[start - 1].isalnum():
            continue  # inside a word ("kettle2000")
        value = text[start:end]
        if _NOT_ID.fullmatch(value):
            continue
        kind = None
        # Lower-cased rather than matched ignoring case: three times faster in `re`.
        window = text[max(0, start - 28):start].lower()
        # A short number without letters (a year, a price) is an id only after "no.", "#",
        # ":" and their kin: where none is near, the words are not looked for.
        short = digits < 6 and head is None
        word = None if short and not _FILLER_HINT.search(window, len(window) - 14) \
            else _KEYWORD_BEFORE.search(window)
        if word is not None:
            mark = (word["mark"] or "").replace(" ", "")
            marked = word["filler"] is not None or mark in ("#", ":", "#:")
            if digits >= 6 or (marked and digits >= 3) or (head is not None and digits >= 4):
                kind = next(t for t in _KEYWORDS if word[t] is not None)
        if kind is None and head is not None and digits >= 4 and head.group().isupper():
            kind = _PREFIX_TYPE.get(head.group().rstrip("-/"))
        if kind is not None:
            out.append((start, end, kind, _ID_KEY.sub("", value.upper())))
    return out
