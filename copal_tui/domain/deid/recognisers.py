"""The default recognisers of machine-shaped identifiers (e-mail, URL, card, IBAN, IP, phone):
each finds one type in a text and returns its spans, with the value normalised so that two
spellings of one value get one placeholder number.

A recogniser is a cheap scan for candidates, then the check that makes a candidate an
identifier (`checks.py`; `phonenumbers` for phones). The scans start on a literal or a
character class and test what stands before a candidate in Python rather than with a
look-behind, which lets the regular-expression engine skip ahead: most texts hold no
identifier, and this is where their time goes. Repeats are bounded, so a text of any length is
scanned in linear time. Digits are ASCII digits; digits of other scripts are not read.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate

import phonenumbers

from copal_tui.domain.deid.checks import IBAN_LENGTHS, card_ok, iban_ok, ip_ok, url_has_secret

# (start, end, type, normalised value)
Found = tuple[int, int, str, str]

# ------------------------------------------------------------------ e-mail, URL

_LOCAL = re.compile(r"[\w.%+-]{1,64}\Z")
_DOMAIN = re.compile(r"(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.){1,8}[^\W\d_]{2,24}\b")


def emails(text: str) -> list[Found]:
    out = []
    at = text.find("@")
    while at != -1:
        domain = _DOMAIN.match(text, at + 1)
        local = _LOCAL.search(text, max(0, at - 64), at) if domain else None
        if domain and local:
            start = local.start() + len(local.group()) - len(local.group().lstrip("."))
            if start < at:
                out.append((start, domain.end(), "EMAIL", text[start:domain.end()].lower()))
        at = text.find("@", at + 1)
    return out


_URL_START = re.compile(r"://|(?:www|WWW)\.")
_URL_BODY = re.compile(r"[^\s<>\"'`]{1,2048}")
_URL_TAIL = ".,;:!?)]}*"
_SCHEMES = {"http", "https", "ftp"}


def urls(text: str) -> list[Found]:
    """URLs carrying a credential (checks.url_has_secret); a plain link is left alone."""
    out = []
    end = 0
    for m in _URL_START.finditer(text):
        start = m.start()
        if start < end:
            continue  # inside the URL before ("https://www.")
        if m.group() == "://":
            while start > 0 and start > m.start() - 5 and text[start - 1].isalpha():
                start -= 1
            if text[start:m.start()].lower() not in _SCHEMES:
                continue
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "/.@"):
            continue
        body = _URL_BODY.match(text, start)
        if body is None:
            continue
        url = body.group().rstrip(_URL_TAIL)
        end = start + len(url)
        if _secret(url):
            out.append((start, end, "URL", url))
    return out


@lru_cache(maxsize=4096)
def _secret(url: str) -> bool:
    # A bot links the same help pages in thousands of responses: each is parsed once.
    return url_has_secret(url)


# ------------------------------------------------------------------ card, IBAN

_CARD = re.compile(r"[0-9](?:[ -]?[0-9]){12,22}(?![0-9])")
_GROUP = re.compile(r"[0-9]+")


def cards(text: str) -> list[Found]:
    """Card numbers, contiguous or in the groups cards print (4-4-4-4, 4-6-5, 4-6-4); a run
    holding more than a card (a year beside it, a second card) is searched for the groups
    that make a valid one, and the scan goes on after it."""
    out = []
    m = _CARD.search(text)
    while m is not None:
        pos = m.end()
        if not (m.start() and text[m.start() - 1].isdigit()):  # not inside a longer run
            run = m.group()
            hit = _card_in(run, [(g.start(), g.end()) for g in _GROUP.finditer(run)])
            if hit is not None:
                s, e, digits = hit
                out.append((m.start() + s, m.start() + e, "CARD", digits))
                pos = m.start() + e
        m = _CARD.search(text, pos)
    return out


def _card_in(run: str, groups: list[tuple[int, int]]) -> tuple[int, int, str] | None:
    # A card is at most five groups (4-4-4-4-3), so the windows tried stay linear in the run.
    for width in range(min(5, len(groups)), 0, -1):
        for i in range(len(groups) - width + 1):
            if not _card_grouping([e - s for s, e in groups[i:i + width]]):
                continue
            s, e = groups[i][0], groups[i + width - 1][1]
            digits = run[s:e].replace(" ", "").replace("-", "")
            if card_ok(digits):
                return s, e, digits
    return None


def _card_grouping(lengths: list[int]) -> bool:
    """One run of digits, fours with a shorter last group, or Amex's and Diners' 4-6-5 and
    4-6-4: a number grouped otherwise (an order's 3-7-7) is something else."""
    if len(lengths) == 1:
        return True
    if lengths[:2] == [4, 6] and len(lengths) == 3:
        return lengths[2] in (4, 5)
    return all(n == 4 for n in lengths[:-1]) and 1 <= lengths[-1] <= 4


# The country code in capitals, as IBANs are written: capitals are rare in prose, so `re` skips
# most of a text.
_IBAN = re.compile(r"[A-Z][A-Z][0-9][0-9](?: ?[A-Za-z0-9]){10,30}")


def ibans(text: str) -> list[Found]:
    """IBANs, compact or in groups of four, cut at their country's length."""
    out = []
    m = _IBAN.search(text)
    while m is not None:
        after = _iban_end(text, m)
        if after is not None:
            out.append((m.start(), after, "IBAN", text[m.start():after].replace(" ", "").upper()))
        # The run may hold a second IBAN ("NL91 ABNA 0417 1643 00 or BE68 ..."): go on from
        # the end of the first, or from the next character.
        m = _IBAN.search(text, after if after is not None else m.start() + 1)
    return out


def _iban_end(text: str, m: re.Match[str]) -> int | None:
    if m.start() and text[m.start() - 1].isalnum():
        return None
    run = m.group()
    compact = run.replace(" ", "").upper()
    length = IBAN_LENGTHS.get(compact[:2])
    if length is None or len(compact) < length or not iban_ok(compact[:length]):
        return None
    end, seen = 0, 0
    while seen < length:
        seen += run[end] != " "
        end += 1
    after = m.start() + end
    if after < len(text) and text[after].isalnum():
        return None  # the run goes on: not an IBAN's end
    return after


# ------------------------------------------------------------------ IP addresses

_IPV4 = re.compile(r"[0-9][0-9]{0,2}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?!\w|\.[0-9])")
# Two colons with at most four hex digits between them: the core of every IPv6 address.
_IPV6_CORE = re.compile(r":[0-9A-Fa-f]{0,4}:")
_IPV6_LEFT = re.compile(r"[0-9A-Fa-f:]{0,40}\Z")
_IPV6_RIGHT = re.compile(r"[0-9A-Fa-f:.]{0,45}")
# Four dotted numbers after one of these words are a version or a section, not an address:
# "version 2.4.1.0", "build 10.0.1.2", "clause 4.1.2.3".
_VERSION_WORDS = re.compile(
    r"\b(?:v|ver|version|versions|release|build|firmware|fw|update|upgrade|patch|driver|sdk|"
    r"api|app|ios|android|windows|os|section|clause|step|chapter|rule|paragraph|article|"
    r"model|edition)\b[^.!?\n]{0,24}\Z", re.I)


def ipv4s(text: str) -> list[Found]:
    out = []
    for m in _IPV4.finditer(text):
        s = m.start()
        if s and (text[s - 1].isalnum() or text[s - 1] in "._"):
            continue
        canonical = ip_ok(m.group())
        if canonical and not _VERSION_WORDS.search(text, max(0, s - 40), s):
            out.append((s, m.end(), "IP", canonical))
    return out


def ipv6s(text: str) -> list[Found]:
    out: list[Found] = []
    end = 0
    for m in _IPV6_CORE.finditer(text):
        if m.start() < end:
            continue
        left = _IPV6_LEFT.search(text, max(0, m.start() - 40), m.start())
        start = left.start() if left else m.start()
        right = _IPV6_RIGHT.match(text, m.end())
        end = right.end() if right else m.end()
        cand = text[start:end].rstrip(".")
        if (start and (text[start - 1].isalnum() or text[start - 1] in "_:")) \
                or (end < len(text) and (text[end].isalnum() or text[end] == "_")):
            continue
        if len(cand) >= 6 and any(c.isdigit() for c in cand):
            canonical = ip_ok(cand)
            if canonical:
                out.append((start, start + len(cand), "IP", canonical))
    return out


# ------------------------------------------------------------------ phones

_PHONE = re.compile(r"[+(0-9][0-9 .()\u00a0+-]{5,26}[0-9](?![0-9]|[.-][0-9])")
_BEFORE_PHONE = set("+#/.@-_") | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DATE_LIKE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,2}[.-][0-9]{1,2}[.-][0-9]{2,4}")
_PHONE_WORDS = re.compile(r"\b(?:call|called|calling|phone|tel|telephone|mobile|cell|mob|"
                          r"number|ring|text|sms|whatsapp|fax|contact|reach|dial)\b"
                          r"[^.!?\n]{0,12}\Z", re.I)
_DOTTED_QUAD = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_FALLBACK_REGIONS = ("US", "GB")
_E164 = phonenumbers.PhoneNumberFormat.E164
_SPACED = re.compile(r"[^ \u00a0]+")


def phones(text: str, region: str, taken: Sequence[Found] = ()) -> list[Found]:
    """Phone numbers in international or national formats (libphonenumber's metadata): a
    valid number for the default region, the US or the UK; or a possible one written with +,
    00 or a bracket, or after a word like "call" or "phone". A candidate wholly inside an
    identifier already found (`taken`: a card, an IBAN, an order number) is not parsed: it
    could only lose to it, and parsing is most of this recogniser's time."""
    out = []
    # For "wholly inside": the spans by start, and the furthest end of those starting so far.
    spans = sorted((f[0], f[1]) for f in taken)
    starts = [a for a, _ in spans]
    reach = list(accumulate((b for _, b in spans), max))
    m = _PHONE.search(text)
    while m is not None:
        s = m.start()
        if s and text[s - 1] in _BEFORE_PHONE:
            # Part of a word or an id ("A-1234567"); a number may still start further on
            # ("@0 +44 20 7946 0123"), so the scan goes on from the next character.
            m = _PHONE.search(text, s + 1)
            continue
        cand = m.group()
        digits = sum(map(str.isdigit, cand))
        if digits >= 7 and not _DATE_LIKE.fullmatch(cand) \
                and not _DOTTED_QUAD.fullmatch(cand) \
                and not _inside(starts, reach, s, m.end()):
            context = _PHONE_WORDS.search(text, max(0, s - 30), s) is not None
            for a, b, key in _phone_in(cand, region, context):
                out.append((s + a, s + b, "PHONE", key))
        m = _PHONE.search(text, m.end())
    return out


def _inside(starts: list[int], reach: list[int], start: int, end: int) -> bool:
    i = bisect_right(starts, start) - 1
    return i >= 0 and reach[i] >= end


@lru_cache(maxsize=8192)
def _phone_in(cand: str, region: str, context: bool) -> tuple[tuple[int, int, str], ...]:
    # A company's own number recurs in thousands of responses: cached, it is parsed once.
    whole = _phone_key(cand, region, context)
    if whole is not None:
        return ((0, len(cand), whole),)
    # Two numbers, or a number and a quantity, in one run ("020 7946 0123 2 times", "0 +44 20
    # 7946 0123"): the longest run of whole groups that is a number, from the run's start, a
    # + or a bracket, or the end of a number found; then on after it. Not from any group:
    # the tail of an account number may well pass for a phone number.
    groups = [(g.start(), g.end()) for g in _SPACED.finditer(cand)]
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(groups):
        a = groups[i][0]
        if i == 0 or cand[a] in "+(" or (out and out[-1][1] == groups[i - 1][1]):
            for j in range(len(groups) - 1, i - 1, -1):
                b = groups[j][1]
                key = None if (a, b) == (0, len(cand)) else \
                    _phone_key(cand[a:b], region, context and i == 0)
                if key is not None:
                    out.append((a, b, key))
                    i = j
                    break
        i += 1
    return tuple(out)


@lru_cache(maxsize=8192)
def _phone_key(cand: str, region: str, context: bool) -> str | None:
    """The number in E.164 when `cand` is a phone number: valid in the default region, the
    US or the UK; or possible there and written as a phone number is (nine digits at least,
    and a +, 00 or bracket, or a word like "call" just before: "phone case (SKU 100-2231)" has
    seven). A possible number is one no numbering plan has given out yet, like Ofcom's
    07700 900xxx."""
    if not 7 <= sum(map(str.isdigit, cand)) <= 17:
        return None  # no numbering plan has shorter or longer numbers (with 00 and (0) added)
    groups = _GROUP.findall(cand)
    if sum(len(g) == 1 for g in groups) > 1:
        return None  # "1 2 3 4 5 6 7 8 9 10" is a list; a number has one lone digit at most
    if all(len(g) <= 2 for g in groups) and cand[0] not in "0+(":
        return None  # pairs of digits are a number only as France writes it: "01 99 00 12 34"
    possible = None
    # With a + the number says its country; only a national number is tried in each region.
    regions = (region,) if cand[0] == "+" else \
        (region, *(x for x in _FALLBACK_REGIONS if x != region))
    for r in regions:
        try:
            num = phonenumbers.parse(cand, r)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(num):
            return phonenumbers.format_number(num, _E164)
        if possible is None and r == region and phonenumbers.is_possible_number(num):
            possible = num
    if possible is not None and sum(map(str.isdigit, cand)) >= 9 \
            and (context or cand[0] in "+(" or cand.startswith("00")):
        return phonenumbers.format_number(possible, _E164)
    return None
