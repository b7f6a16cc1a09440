"""Small deterministic text helpers shared by the composition filter and selection.

Content words: lower-cased alphabetic tokens, stop words removed, crude suffix stripping so
"refunds"/"refund" and "verifying"/"verify" meet. No NLP dependency on purpose: the filter must
be fast, deterministic and explainable.
"""

from __future__ import annotations

import re
from functools import lru_cache

STOP = frozenset(
    """a an the and or but if when whenever while for of to in on at by with from into about as
    is are be been being was were do does did done not no nor any all each every some such this
    that these those it its they them their there here than then so very can could may might must
    should would will shall only also just own other others more most less least same who whom
    whose which what where why how your you our we us me my he she his her him i assistant
    customer customers user users caller callers asks ask asked asking question questions request
    requests requested via per under over after before until within without against between
    ever never always whether someone something anything everything""".split()
)

_TOKEN = re.compile(r"[a-zA-Z][a-zA-Z'-]+")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    w = word.lower().strip("'-")
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            base = w[: -len(suffix)]
            return base + ("y" if suffix in ("ies", "ied") else "")
    return w


def content_words(text: str) -> frozenset[str]:
    return frozenset(
        stem(t) for t in _TOKEN.findall(text or "") if t.lower() not in STOP and len(t) > 2
    )


def overlap(a: str, b: str) -> frozenset[str]:
    return content_words(a) & content_words(b)
