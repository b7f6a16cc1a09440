"""Required cues of a dialogue guideline, for the offline dialogue heuristics. NOT a model.

A guideline's requirements are its positive imperative actions ("Ask for X and Y", "state that
Z", "offer W"): each action's object is split at commas and "and" into items, and an item is
present in a reply when the reply shares at least one of the item's own content words (stems
no sibling item has) with it. Actions under
a negation ("Do not ...", "Never ask for ...") are prohibitions and carry no required cue; a
condition ("If the user ..., ") only says when the rule applies. Actions joined by "or" ("state
the fee, or state that no fee applies") are alternatives: either one satisfies the requirement.
Plain word matching, deliberately simple: synonyms, figures standing for words ("£14.99" for
"the amount") and paraphrase are not recognised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from copal_tui.offline.text import clean, content_words, sentences

# Imperative action verbs that introduce something a reply must visibly do. Base forms only, so
# a condition's "the user asks for" or "says they" never counts as an action.
_ACTION = re.compile(
    r"\b(ask(?:\s+(?:them|the\s+user|the\s+customer))?(?:\s+(?:for|when|whether|which|"
    r"what|to))?|state(?:\s+that)?|say(?:\s+that)?|offer(?:\s+to)?|tell(?:\s+them)?(?:\s+to)?|"
    r"read\s+back|itemi[sz]e|introduce|direct|transfer|open|make|verify(?:\s+\w+\s+by)?|"
    r"confirm|give|explain|quote|provide|refer|end)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|never|don't|no)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_ALTERNATIVE = re.compile(r"(?:,\s*)?\bor\s*$", re.IGNORECASE)
_CONDITION = re.compile(r"^\s*(?:if|when|once|unless|whenever)\b", re.IGNORECASE)
_ITEM_SPLIT = re.compile(r",\s*(?:and\s+|then\s+)?|\s+and\s+(?:then\s+)?", re.IGNORECASE)
# An imperative opens a clause: at the start, or after a comma, colon or conjunction. Anywhere
# else the word is a noun or a quotation ("a retention offer", "the word 'confirm'").
_OPENS = re.compile(r"(?:^|[,:]|\b(?:and|then|or|also))\s*$", re.IGNORECASE)
# A prohibition inside an action's object ("offer the plan, and do not mention debt") ends it.
_OBJECT_END = re.compile(r",?\s*(?:and\s+)?\b(?:do not|don't|never)\b.*$", re.IGNORECASE | re.DOTALL)
_TRAILING = re.compile(r"[\s,]*\b(?:and|then|or)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Item:
    verb: str
    phrase: str
    words: frozenset[str]


# A requirement is met when every item of at least one of its alternatives is present.
Requirement = list[list[Item]]


def _segments(text: str) -> list[str]:
    out = []
    for part in re.split(r";|(?<=[.!?])\s+", clean(text)):
        part = part.strip().rstrip(".!?").strip()
        if part:
            out.append(part)
    return out


def _distinct(items: list[Item]) -> list[Item]:
    """Each item keeps the words no sibling item has ("the order number", "the email address
    used for the order" -> {number}, {email, address, use}): a shared word cannot show which
    item a reply gives. An item left with no word of its own keeps all of them."""
    out = []
    for k, i in enumerate(items):
        others = frozenset().union(*(o.words for j, o in enumerate(items) if j != k))
        own = i.words - others
        out.append(Item(i.verb, i.phrase, own or i.words))
    return out


def requirements(text: str) -> list[Requirement]:
    """The required actions of a guideline text, in order."""
    reqs: list[Requirement] = []
    for seg in _segments(text):
        matches = [m for m in _ACTION.finditer(seg) if _OPENS.search(seg[: m.start()])]
        conditional = bool(_CONDITION.match(seg))
        previous: int | None = None  # index in reqs of this segment's last requirement
        for k, m in enumerate(matches):
            end = matches[k + 1].start() if k + 1 < len(matches) else len(seg)
            before = seg[: m.start()]
            if conditional and "," not in before:
                continue  # a verb inside the condition itself
            if _NEGATION.search(before):
                continue  # a prohibition: nothing required to appear
            obj = _OBJECT_END.sub("", seg[m.end():end])
            obj = _TRAILING.sub("", obj).strip(" ,:")
            items = [Item(m.group(1).lower(), p.strip(), frozenset(content_words(p)))
                     for p in _ITEM_SPLIT.split(obj) if p.strip()]
            items = _distinct([i for i in items if i.words])
            if not items:
                continue
            between = seg[matches[k - 1].end(): m.start()] if k else ""
            if previous is not None and _ALTERNATIVE.search(between):
                reqs[previous].append(items)  # "..., or state that ...": another way to comply
            else:
                reqs.append([items])
                previous = len(reqs) - 1
    return reqs


def missing_items(text: str, reply: str) -> list[Item]:
    """Items of the guideline the reply does not show (the best alternative of each
    requirement, i.e. the one missing fewest items)."""
    have = frozenset(content_words(clean(reply)))
    out: list[Item] = []
    for req in requirements(text):
        gaps = min(([i for i in alt if not (i.words & have)] for alt in req), key=len)
        out.extend(gaps)
    return out


def droppable_items(text: str, reply: str) -> list[Item]:
    """Items the reply shows that a variant may drop, in guideline order. Items of a
    requirement with alternatives are left out: forbidding one way to comply while another
    remains only narrows the original, and the reply could still satisfy it."""
    have = frozenset(content_words(clean(reply)))
    return [i for req in requirements(text) if len(req) == 1 for i in req[0]
            if i.words & have]


_SEP = r"(?:,\s*(?:and|or|then)\s+|,\s*|\s+(?:and|or|then)\s+)"
_TIDY = (
    (re.compile(r"\s+([,.;:])"), r"\1"),
    (re.compile(r",\s*,"), ","),
    (re.compile(r"[,\s]*\b(?:and|then)?\s*([.;])"), r"\1"),
    (re.compile(r"^[\s,.:;]*(?:and|or|then)?\s*", re.IGNORECASE), ""),
    (re.compile(r"([.:;])\s*[.:;]"), r"\1"),
    (re.compile(r"\s{2,}"), " "),
)


def drop_item(text: str, item: Item) -> str:
    """The guideline text with one item removed (its whole action when it is the action's only
    item) and its prohibition added: a modified guideline no reply can follow while satisfying
    the original."""
    text = clean(text).strip()
    phrase = re.escape(item.phrase)
    alt = next((a for req in requirements(text) for a in req if item in a), [item])
    if len(alt) == 1:
        verb = r"\s+".join(map(re.escape, item.verb.split()))
        action = rf"\b{verb}\s+{phrase}"
        # Take the separator after the action when there is one ("open X, state Y" ->
        # "state Y"), else the one before it ("X, or state Y" -> "X").
        pattern = (rf"{action}{_SEP}" if re.search(rf"{action}{_SEP}", text, re.IGNORECASE)
                   else rf"(?:{_SEP})?{action}")
    elif alt[0] == item:
        pattern = rf"{phrase}{_SEP}"
    else:
        pattern = rf"{_SEP}{phrase}"
    cut = re.sub(pattern, "", text, count=1, flags=re.IGNORECASE)
    for rx, repl in _TIDY:
        cut = rx.sub(repl, cut)
    cut = cut.strip()
    if cut and not cut.endswith((".", "!", "?")):
        cut += "."
    tail = f"Do not {item.verb} {item.phrase}."
    if not requirements(cut) and not re.search(r"\b(?:not|never)\b", cut, re.IGNORECASE):
        return tail  # nothing of the original's actions is left to keep
    return f"{cut[:1].upper()}{cut[1:]} {tail}"


_DROPPED = re.compile(r"Do not (.+?)\.?\s*$", re.IGNORECASE | re.DOTALL)


def dropped_words(modified: str) -> frozenset[str]:
    """Content words of what a modified guideline forbids in its final "Do not ..." sentence."""
    last = sentences(clean(modified))
    m = _DROPPED.search(last[-1]) if last else None
    if m is None:
        return frozenset()
    body = _ACTION.sub("", m.group(1), count=1)
    return frozenset(content_words(body))


_SPLIT_REPLY = re.compile(r"(,\s*(?:and|or)\s+|\s+(?:and|or)\s+|,\s*)", re.IGNORECASE)


def remove_words(reply: str, words: frozenset[str]) -> str:
    """The reply without the clause that carries most of `words` (the whole sentence when the
    clause is the sentence); unchanged when no clause carries any of them."""
    sents = sentences(reply)
    best: tuple[int, int, int] | None = None  # (hits, sentence, clause)
    split: list[list[str]] = []
    for si, s in enumerate(sents):
        body = s.rstrip(".!?")
        parts = _SPLIT_REPLY.split(body)
        split.append(parts)
        for ci in range(0, len(parts), 2):
            hits = len(words & frozenset(content_words(parts[ci])))
            if hits and (best is None or hits > best[0]):
                best = (hits, si, ci)
    if best is None:
        return reply
    _, si, ci = best
    parts, s = split[si], sents[si]
    end = s[len(s.rstrip(".!?")):]
    if len(parts) == 1:
        kept = [x for k, x in enumerate(sents) if k != si]
    else:
        lo, hi = (ci - 1, ci + 1) if ci else (ci, ci + 2)
        rest = "".join(parts[:lo] + parts[hi:]).strip()
        rest = rest[:1].upper() + rest[1:]
        kept = [*sents[:si], rest + end, *sents[si + 1:]]
    return " ".join(kept).strip() or reply
