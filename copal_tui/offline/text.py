"""Word-level text tools shared by the offline heuristics (tokens, stems, sentences, cues).

Everything here is plain string processing: a tiny suffix stemmer instead of a real one, a
stop-word list tuned to policy language (role nouns such as "customer" or "learner" are stop
words, because every policy mentions them and they carry no topic), and regexes for the
refusal, verification and routing cues that the reference bots emit and the judge detects.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

# ANSI/OSC escape sequences and other control characters: stripped before the heuristics look
# at a text, so terminal junk in a policy or a query can neither crash nor steer them.
_ESCAPES = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TOKEN = re.compile(r"[a-z0-9£$€%]+(?:'[a-z]+)?")

ROLE_WORDS = frozenset(
    """customer customers traveler travelers traveller travellers learner learners patient
    patients resident residents user users passenger passengers claimant claimants applicant
    applicants policyholder policyholders candidate candidates seeker seekers caller callers
    member members student students motorist motorists tenant tenants enquirer enquirers
    someone anyone somebody person people assistant client clients requester""".split()
)

STOP_WORDS = frozenset(
    """a an the and or but if of to in on at by for with from into onto about as is are was were
    be been being am do does did done have has had having it its it's this that these those
    there here their them they theirs themselves i me my mine myself we us our you your yours
    yourself he she his her him who whom whose which what when where why how whether than then
    so such not no nor only also just very can could may might must shall should will would
    any all each every some more most other another own same both either neither one ones per
    via within without after before during while until upon over under again further once
    asks ask asked asking wants want needs need says say said tells tell mentions mention
    question questions about please able let like get got gives give given make makes made
    s t ll ve re d don doesn isn aren wasn weren won""".split()
) | ROLE_WORDS

_NUMBER = re.compile(r"^[£$€]?\d[\d%]*$")


def clean(text: object) -> str:
    """Text with escape sequences and control characters removed (newlines and tabs kept)."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    return _CONTROL.sub("", _ESCAPES.sub("", s))


def tokens(text: str) -> list[str]:
    """Lower-case word tokens; hyphens, @ and dots split words ("fraud-monitoring" -> 2)."""
    out = []
    for tok in _TOKEN.findall(text.lower().replace("’", "'")):
        out.append(tok.split("'")[0] if tok.endswith(("'s", "'re", "'ve", "'ll", "'d")) else tok)
    return out


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deliberately small suffix stripper: enough to match "bookings"/"booked"/"booking"."""
    w = word
    if len(w) <= 3 or _NUMBER.match(w):
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif (w.endswith("ed") and len(w) > 4) or w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ure") and len(w) > 6:
        w = w[:-3]  # departure -> depart
    elif w.endswith("ival") and len(w) > 6:
        w = w[:-2]  # arrival -> arriv(e)
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def content_words(text: str, extra_stop: frozenset[str] = frozenset()) -> list[str]:
    """Stems of the topic-bearing words of a text, in order, without repeats."""
    seen: dict[str, None] = {}
    for tok in tokens(text):
        if tok in STOP_WORDS or tok in extra_stop or "'" in tok:
            continue
        if len(tok) < 3 and not _NUMBER.match(tok):
            continue
        s = stem(tok)
        if s not in extra_stop:
            seen.setdefault(s, None)
    return list(seen)


def term_set(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\s*\n\s*")


def sentences(text: str) -> list[str]:
    """Sentences of a text; each is a verbatim substring (so it can serve as evidence)."""
    out: list[str] = []
    start = 0
    for m in _SENTENCE_BREAK.finditer(text):
        seg = text[start : m.start()].strip()
        if seg:
            out.append(seg)
        start = m.end()
    seg = text[start:].strip()
    if seg:
        out.append(seg)
    return out


def stable_index(key: str, n: int) -> int:
    """A deterministic choice in range(n) seeded by a string (never Python's salted hash())."""
    if n <= 1:
        return 0
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n


def squash(text: str) -> str:
    """One line, single spaces."""
    return " ".join(text.split())


def cap_words(text: str, limit: int) -> str:
    """At most `limit` words, never ending on a dangling stop word."""
    words = text.split()
    if len(words) <= limit:
        return text.strip()
    words = words[:limit]
    while len(words) > 1 and words[-1].lower().strip(",;:") in STOP_WORDS:
        words.pop()
    return " ".join(words).rstrip(",;:")


# ---------------------------------------------------------------- cues the bots and judge share

# A refusal or negation in front of a topic ("I can't share the CVV") means the topic is NOT
# given. The reference bots refuse with these words; the judge looks for them.
REFUSAL = re.compile(
    r"\b(?:can't|cannot|can not|unable|not able|won't|will not|not allowed|not permitted|"
    r"must not|mustn't|do not|don't|not share|not provide|not in a position|sorry|refuse|"
    r"decline|never|no longer|not something i)\b",
    re.IGNORECASE,
)

# The response asks the user for something (a verification step).
GATE_ASK = re.compile(
    r"\b(?:please|could you|can you|would you|i need|i'll need|i will need|i'd need|we need|"
    r"first|before i can|before we can|for security|to verify|once you)\b",
    re.IGNORECASE,
)
GATE_VERB = re.compile(
    r"\b(?:verify|verif\w+|confirm\w*|provide|give me|share|send|tell me|enter|check|"
    r"let me know|what is your|what's your)\b",
    re.IGNORECASE,
)

# The response directs the user somewhere (a route or transfer).
ROUTE_CUE = re.compile(
    r"\b(?:transfer\w*|connect\w*|put you through|refer\w*|redirect\w*|direct you|"
    r"hand(?:ing)? (?:you |this |it )?(?:off|over)|pass(?:ing)? (?:you|this) (?:on|to)|"
    r"please (?:call|contact|email|ring|phone|reach|write to|get in touch|speak|visit)|"
    r"(?:you should|you can|you'll need to|you will need to|you need to|best to) "
    r"(?:call|contact|email|ring|phone|reach|speak|write|get in touch|visit)|"
    r"get in touch|call (?:the|them|us|\d)|contact (?:the|them)|reach (?:the|them))\b",
    re.IGNORECASE,
)


def first_match(pattern: re.Pattern[str], text: str) -> int:
    m = pattern.search(text)
    return m.start() if m else -1


def first_term_pos(text: str, terms: frozenset[str]) -> int:
    """Character offset of the first token of `text` whose stem is in `terms` (or -1)."""
    for m in _TOKEN.finditer(text.lower().replace("’", "'")):
        tok = m.group(0).split("'")[0]
        if stem(tok) in terms:
            return m.start()
    return -1


def negated_before(sentence: str, terms: frozenset[str]) -> bool:
    """True when a refusal cue appears before the first topic word of the sentence."""
    cue = first_match(REFUSAL, sentence)
    if cue < 0:
        return False
    pos = first_term_pos(sentence, terms)
    return pos < 0 or cue < pos


# Stems that every grounded clause carries whatever its topic ("gated on", "handed to",
# "continue handling", e-mail domains): left out when two clauses are compared for topic.
GENERIC_TOPIC = frozenset(
    """request detail information matter issue hand gat continu handl itself chat example com
    www thing way help assistant answer shar discuss describ explain disclos reveal talk
    provid involv date day time number last start offer""".split()
)


def topic_words(text: str) -> frozenset[str]:
    return frozenset(w for w in content_words(text) if w not in GENERIC_TOPIC)
