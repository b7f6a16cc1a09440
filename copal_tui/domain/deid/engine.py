"""The de-identifier: one pair's texts in, the same texts with every identifier replaced by a
typed, numbered placeholder out, with counts by type.

Placeholders are `<TYPE_N>`. N counts the distinct values of that type within the pair, in
order of first appearance across its texts (query, response, earlier turns, in the order
given): the same value is the same placeholder everywhere in the pair, compared after
normalisation (a phone in E.164, an e-mail in lower case, a card's digits), so an annotator
still sees that the customer's address in the query is the one the response repeats.

Text that already looks like a placeholder (`<EMAIL_1>` typed by a customer, or a log that was
partly redacted before) is neutralised first: its angle brackets become the single guillemets
U+2039 and U+203A (`‹EMAIL_1›`), so every `<TYPE_N>` in the output is one this engine wrote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from copal_tui.domain.deid import keyed
from copal_tui.domain.deid import recognisers as rec
from copal_tui.domain.deid.rules import RedactionRules, check_region

# When two findings overlap the longer one is kept; at equal length, the lower rank. A user's
# own patterns and names come first: the user asked for them. The checked types (a card's
# Luhn digit and grouping, an IBAN's mod-97) before the ids that words introduce, and four
# dotted numbers that are an IP address may also parse as a phone number somewhere.
RANK = {"NAME": 0, "URL": 2, "EMAIL": 3, "IBAN": 4, "CARD": 5, "ACCOUNT": 6, "ORDER": 6,
        "TICKET": 6, "ADDRESS": 7, "IP": 8, "PHONE": 9}
USER_RANK = 1

_LOOKALIKE = re.compile(r"<([A-Za-z][A-Za-z0-9_]*_[0-9]+)>")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Redacted:
    """One pair, de-identified. `counts` is the number of replacements of each type (a value
    repeated three times counts three); `escaped` the placeholder look-alikes neutralised."""

    texts: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    escaped: int = 0


class Deidentifier:
    """The default recognisers plus a redaction file's patterns and names. Build one and reuse
    it: construction compiles the user's patterns, `redact` only scans. `phone_region`, when
    given, overrides the file's."""

    def __init__(self, rules: RedactionRules | None = None,
                 phone_region: str | None = None) -> None:
        self.rules = rules or RedactionRules()
        if phone_region is not None:  # a ValueError naming close codes when unknown
            region = check_region(phone_region)
            self.rules = self.rules.model_copy(update={"phone_region": region})
        self._user: list[tuple[re.Pattern[str], str]] = [
            (re.compile(p.regex), p.type) for p in self.rules.patterns]
        self._names = _names_pattern(self.rules.names)

    def redact(self, texts: Sequence[str]) -> Redacted:
        """The texts of one pair with every identifier replaced; numbering spans the pair."""
        numbers: dict[tuple[str, str], int] = {}
        last: dict[str, int] = {}
        counts: dict[str, int] = {}
        escaped = 0
        out: list[str] = []
        for text in texts:
            if "<" in text:
                text, n = _LOOKALIKE.subn("\u2039\\1\u203a", text)
                escaped += n
            spans = self.find(text)
            if not spans:
                out.append(text)
                continue
            pieces: list[str] = []
            pos = 0
            for start, end, kind, key in spans:
                number = numbers.get((kind, key))
                if number is None:
                    number = numbers[(kind, key)] = last[kind] = last.get(kind, 0) + 1
                counts[kind] = counts.get(kind, 0) + 1
                pieces += (text[pos:start], "<", kind, "_", str(number), ">")
                pos = end
            pieces.append(text[pos:])
            out.append("".join(pieces))
        return Redacted(tuple(out), counts, escaped)

    def find(self, text: str) -> list[rec.Found]:
        """The identifiers of one text, without overlaps, in order."""
        found: list[rec.Found] = []
        if "@" in text:
            found += rec.emails(text)
        if "://" in text or "www." in text or "WWW." in text:
            found += rec.urls(text)
        # Each recogniser of numbers runs only where the text has digits enough for its type.
        digits = sum(map(text.count, "0123456789"))
        if digits:
            found += keyed.addresses(text)
        if digits >= 3:
            found += keyed.ids(text)
        if digits >= 4 and text.count(".") >= 3:
            found += rec.ipv4s(text)
        if digits >= 10:
            found += rec.ibans(text)
        if digits >= 13:
            found += rec.cards(text)
        if digits >= 7:  # last: it skips what the others found
            found += rec.phones(text, self.rules.phone_region, found)
        if text.count(":") >= 2:
            found += rec.ipv6s(text)
        if self._names is not None:
            found += [(m.start(), m.end(), "NAME", _SPACES.sub(" ", m.group().casefold()))
                      for m in self._names.finditer(text)]
        for pattern, kind in self._user:
            found += _user_matches(pattern, kind, text)
        return _resolve(found) if found else found


def _names_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """One pattern for every known name: whole words, any case, any spacing; longest first so
    "Jane Doe" wins over "Jane"."""
    if not names:
        return None
    alts = sorted({n.casefold() for n in names}, key=len, reverse=True)
    body = "|".join(r"\s+".join(map(re.escape, n.split())) for n in alts)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.I)


def _user_matches(pattern: re.Pattern[str], kind: str, text: str) -> list[rec.Found]:
    group = "value" if "value" in pattern.groupindex else 0
    out = []
    for m in pattern.finditer(text):
        start, end = m.span(group)
        if end > start:
            out.append((start, end, kind, _SPACES.sub(" ", m.group(group).casefold())))
    return out


def _resolve(found: list[rec.Found]) -> list[rec.Found]:
    """Keep the longest of overlapping findings (the lower rank at equal length), in order.
    Findings are swept in order of start into clusters that overlap; only within a cluster
    (rarely more than two) are they compared, so a text with thousands stays linear."""
    if len(found) == 1:
        return found
    found.sort()
    kept: list[rec.Found] = []
    cluster = [found[0]]
    reach = found[0][1]
    for f in found[1:]:
        if f[0] >= reach:
            kept += _longest(cluster)
            cluster, reach = [f], f[1]
        else:
            cluster.append(f)
            reach = max(reach, f[1])
    kept += _longest(cluster)
    return kept


def _longest(cluster: list[rec.Found]) -> list[rec.Found]:
    if len(cluster) == 1:
        return cluster
    cluster.sort(key=lambda f: (f[0] - f[1], RANK.get(f[2], USER_RANK), f[0]))
    kept: list[rec.Found] = []
    for f in cluster:
        if all(f[1] <= k[0] or f[0] >= k[1] for k in kept):
            kept.append(f)
    kept.sort()
    return kept
