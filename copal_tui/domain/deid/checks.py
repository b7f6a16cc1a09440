"""The checks that turn a look-alike into an identifier: card numbers' Luhn digit, IBANs' length
and mod-97, IP addresses, and whether a URL carries a credential.

Each is a pure function of the candidate's text; the recognisers (`recognisers.py`) find the
candidates and call these, so a number that only looks like a card, an account string that only
looks like an IBAN, or a help-page link stays in the text.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlsplit

# The IBAN length of each country that issues them (the IBAN registry): the length check
# rejects most look-alikes before mod-97 does.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}


def luhn_ok(digits: str) -> bool:
    """Whether a string of ASCII digits passes the Luhn check (every payment card does)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_ok(digits: str) -> bool:
    """A payment card number: 13 to 19 digits, a card network's first digit (2 to 6: Mastercard,
    Amex, Diners, JCB, Visa, Discover, UnionPay, Maestro) and the Luhn digit."""
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_ok(digits)


def iban_ok(compact: str) -> bool:
    """An IBAN without spaces, upper case: its country's length and the mod-97 check."""
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact.isascii():
        return False
    moved = compact[4:] + compact[:4]
    try:
        return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1
    except ValueError:
        return False


def ip_ok(text: str) -> str | None:
    """The address in its canonical form when `text` is an IPv4 or IPv6 address, else None."""
    try:
        return ipaddress.ip_address(text).compressed
    except ValueError:
        return None


# A query or fragment key that names a credential ("token", "api_key", "sessionid", "sig",
# "X-Amz-Signature", "reset_code", "password"...).
_SECRET_KEY = re.compile(
    r"token|key|sess|sid|auth|code|secret|pass|pwd|sig|jwt|otp|nonce|cred|bearer|saml|"
    r"reset|magic|invite|verif|confirm|activat|login|access|hash|ticket|state", re.I)
# A path segment after which the next segment is a one-time secret (/reset/Q7fd91).
_SECRET_SEGMENT = {"reset", "verify", "verification", "confirm", "magic", "login", "invite",
                   "unsubscribe", "token", "tokens", "auth", "session", "sessions", "activate",
                   "activation", "share", "s", "t", "l", "r", "download", "dl", "otp", "sso"}
_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
_PIECES = re.compile(r"[-_.~+]")
# A change from a digit to a non-digit or back.
_ALTERNATION = re.compile(r"(?<=[0-9])[^0-9]|(?<=[^0-9])[0-9]")


def looks_random(value: str) -> bool:
    """A value that reads as a key rather than words: a UUID, a JWT, 20+ hex digits, or a run
    of 12+ characters where letters and digits alternate at least three times (`Q7fd91kP2x`;
    a slug like `summer-sale-2024` or a name like `iphone15promax` is words)."""
    if _UUID.search(value) or value.startswith("eyJ"):
        return True
    for piece in _PIECES.split(value):
        if len(piece) < 12:
            continue
        if len(piece) >= 20 and all(c in "0123456789abcdefABCDEF" for c in piece):
            return True
        if len(_ALTERNATION.findall(piece)) >= 3:
            return True
    return False


def url_has_secret(url: str) -> bool:
    """Whether a URL carries a token, key, session or credential: user-info, a credential-named
    or random-looking query or fragment value, or a random-looking path segment (or any segment
    after one like /reset/ or /magic/)."""
    try:
        parts = urlsplit(url if "://" in url else "http://" + url)
    except ValueError:
        return True  # malformed (an unclosed IPv6 bracket): no way to tell, so not kept
    if "@" in parts.netloc:
        return True
    for pairs in (parts.query, parts.fragment):
        if not pairs:
            continue
        parsed = parse_qsl(pairs, keep_blank_values=True)
        if not parsed and looks_random(pairs):
            return True
        for key, value in parsed:
            if (value and _SECRET_KEY.search(key)) or looks_random(value) \
                    or (not value and looks_random(key)):
                return True
    segments = [s for s in parts.path.split("/") if s]
    for i, seg in enumerate(segments):
        if looks_random(seg):
            return True
        if seg.lower() in _SECRET_SEGMENT and i + 1 < len(segments) \
                and len(segments[i + 1]) >= 6:
            return True
    return False
