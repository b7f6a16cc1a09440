"""What of an endpoint URL may be stored: the http(s) check of a models-file URL, and the
credentials a URL can carry, found and stripped.

A URL from a models file (`api_base`, an http target's `url`) may carry a key in any part:
`https://user:key@host` (user-info), `https://host/key/sk-.../v1` (path), `?key=sk-...` or
`?api_key=...` (query), `#token=...` (fragment). `public_url` is the URL with every such part
replaced by `[redacted]`, the form the call log and the cache key use; `url_secrets` lists the
values stripped, so that an error message quoting the URL is scrubbed of them too.

What counts as a credential: the user-info as a whole; a query or fragment parameter whose name
says so (key, token, secret, password, auth, signature, credential, session) or whose value looks
like a key; a path segment that looks like a key, or that follows a segment naming one
(`/key/<value>`). A value looks like a key when it starts as providers' keys do (`sk-`, `gsk_`,
`AIza`, ...), is a UUID, or is a long random-looking token: redacting a harmless value only
hides it from the log, while storing a key cannot be undone.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

REDACTED = "[redacted]"
HTTP_SCHEMES = ("http", "https")

_SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session|bearer",
                          re.IGNORECASE)
# A path segment naming a credential: the segment after it is one (`/key/<value>`).
_SECRET_SEGMENT = re.compile(r"(?:api[-_]?)?(?:keys?|tokens?|secrets?|passw(?:or)?d|auth|"
                             r"access[-_]?tokens?|sig(?:nature)?)", re.IGNORECASE)
_KEY_PREFIX = re.compile(r"(?:sk|pk|rk|gsk|xai|hf|ghp|gho|ghs|github_pat|xox[abpr]|glpat|"
                         r"nvapi|pplx|csk|r8)[-_]|AIza", re.IGNORECASE)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9_\-.~+/=]+")
_RUN = re.compile(r"[A-Za-z0-9]+")
# Shorter values are not scrubbed from other text (a user name such as "api" would mangle it);
# they are still dropped from the stored URL.
_MIN_SCRUB = 6


def http_url_problem(url: str) -> str | None:
    """Why `url` is not an endpoint copal may call (None when it is): http or https, with a
    host. Says which scheme it has, never the URL (it may carry a key)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        return "must be an http:// or https:// address with a host (it does not parse as a URL)"
    if parts.scheme.lower() not in HTTP_SCHEMES:
        scheme = f"{parts.scheme}:" if parts.scheme else "no scheme"
        return f"must be an http:// or https:// address with a host (not {scheme})"
    if not parts.hostname:
        return "must be an http:// or https:// address with a host (it has none)"
    return None


def looks_like_key(value: str) -> bool:
    """Whether a URL part looks like a credential (a provider key's prefix, a UUID, or a long
    random-looking token)."""
    if len(value) < 8:
        return False
    if _KEY_PREFIX.match(value) or _UUID.fullmatch(value):
        return True
    if len(value) < 20 or not _TOKEN.fullmatch(value):
        return False
    longest = max((m.group(0) for m in _RUN.finditer(value)), key=len, default="")
    # Words joined by separators (model and deployment names) have short runs; a key is one
    # long run of mixed letters and digits.
    return (len(longest) >= 16 and any(c.isdigit() for c in longest)
            and any(c.isalpha() for c in longest))


def _secret_param(name: str, value: str) -> bool:
    return bool(value) and (bool(_SECRET_NAME.search(name)) or looks_like_key(value))


def _redact(url: str) -> tuple[str, list[str]]:
    """(`url` with its credentials redacted, the credential values found); a URL that does not
    parse is redacted whole."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return REDACTED, [url]
    secrets: list[str] = []
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, _ = netloc.rpartition("@")
        secrets += [userinfo, *userinfo.split(":")]
        host = parts.hostname or ""
        netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    segments = parts.path.split("/")
    for i, seg in enumerate(segments):
        before = segments[i - 1] if i else ""
        if seg and (looks_like_key(unquote(seg)) or _SECRET_SEGMENT.fullmatch(before)):
            secrets.append(seg)
            segments[i] = REDACTED
    query, fragment = _params(parts.query, secrets), _params(parts.fragment, secrets)
    return urlunsplit((parts.scheme, netloc, "/".join(segments), query, fragment)), secrets


def _params(text: str, secrets: list[str]) -> str:
    """A query (or fragment) with each credential's value redacted (added to `secrets`)."""
    out = []
    for raw in text.split("&") if text else []:
        name, eq, value = raw.partition("=")
        plain_name, plain_value = unquote_plus(name), unquote_plus(value)
        if not eq and looks_like_key(plain_name):  # a bare `?sk-...`
            secrets += [name, plain_name]
            out.append(REDACTED)
        elif eq and _secret_param(plain_name, plain_value):
            secrets += [value, plain_value]
            out.append(f"{name}={REDACTED}")
        else:
            out.append(raw)
    return "&".join(out)


def public_url(url: str | None) -> str | None:
    """`url` with every credential it carries replaced by `[redacted]` (the user-info dropped);
    a URL that does not parse is redacted whole."""
    return _redact(url)[0] if url else url


def url_secrets(url: str | None) -> list[str]:
    """The credential values `url` carries (raw and decoded), longest first, for scrubbing
    other text that may quote the URL (an error message)."""
    found = _redact(url)[1] if url else []
    values = {v for s in found for v in (s, unquote(s), unquote_plus(s)) if len(v) >= _MIN_SCRUB}
    return sorted(values, key=len, reverse=True)
