"""Who may use `copal serve`: secret tokens, the user each one stands for, and allowed Origins.

A token is `secrets.token_urlsafe(32)` (256 random bits), printed once inside its URL and kept
only as its sha256 digest, in memory, for the life of the server: restarting the server
invalidates every URL, which is the intended way to revoke one. Nothing is written to the
database, so a copy of the database never carries a credential.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from copal_tui.serve import ServeConfigError

MODES = ("browse", "label", "adjudicate")
MAX_NAME = 64
# Longer than any token we issue (43 characters); anything longer is refused before hashing.
MAX_TOKEN = 128


@dataclass(frozen=True)
class Grant:
    """What one token allows: the app mode and the user it runs as (None: the operator)."""

    mode: str
    user: str | None


def _digest(token: str) -> bytes:
    # "replace" so that odd input from a client hashes to something that matches nothing.
    return hashlib.sha256(token.encode("utf-8", "replace")).digest()


@dataclass(frozen=True)
class TokenMatch:
    """A presented token that was issued: its digest (what counts its sessions) and grant."""

    digest: bytes
    grant: Grant


class TokenStore:
    """Issued tokens, by sha256 digest only; a lookup compares every digest in constant time."""

    def __init__(self) -> None:
        self._grants: dict[bytes, Grant] = {}

    def issue(self, grant: Grant) -> str:
        token = secrets.token_urlsafe(32)
        self._grants[_digest(token)] = grant
        return token

    def match(self, token: str | None) -> TokenMatch | None:
        """The issued token a presented one is, or None."""
        if not token or len(token) > MAX_TOKEN:
            return None
        presented = _digest(token)
        found = None
        # No early exit: the time taken does not depend on which entry (if any) matches.
        for stored, grant in self._grants.items():
            if hmac.compare_digest(stored, presented):
                found = TokenMatch(stored, grant)
        return found

    def check(self, token: str | None) -> Grant | None:
        """The grant of a presented token, or None."""
        found = self.match(token)
        return None if found is None else found.grant

    def digests(self) -> list[bytes]:
        """What is stored (for inspection): digests, never tokens."""
        return list(self._grants)

    def __len__(self) -> int:
        return len(self._grants)


def check_name(raw: str) -> str:
    """A user name as it will be recorded on labels; refuses what would be ambiguous."""
    name = raw.strip()
    if not name:
        raise ServeConfigError("an annotator name is empty")
    if len(name) > MAX_NAME:
        raise ServeConfigError(f"annotator name longer than {MAX_NAME} characters: {name[:20]}...")
    if not name.isprintable():
        raise ServeConfigError(f"annotator name has control characters: {name!r}")
    return name


def read_names_file(path: Path) -> list[str]:
    """One name per line; blank lines and lines starting with `#` are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ServeConfigError(f"cannot read annotators file {path}: {exc}") from None
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def plan_grants(mode: str, names: Iterable[str]) -> list[Grant]:
    """The grants to issue: one per named user, or one for the operator.

    Label mode needs named annotators (a label without its author is useless); adjudicate takes
    names or runs as the operator; browse has no user, so names are refused rather than ignored.
    """
    if mode not in MODES:
        raise ServeConfigError(f"unknown mode {mode!r}")
    checked: list[str] = []
    for raw in names:
        name = check_name(raw)
        if name in checked:
            raise ServeConfigError(f"annotator {name!r} is given twice")
        checked.append(name)
    if mode == "label" and not checked:
        raise ServeConfigError("--mode label needs --annotator NAME or --annotators-file PATH")
    if mode == "browse" and checked:
        raise ServeConfigError("--mode browse has no annotators (one operator URL is printed)")
    if not checked:
        return [Grant(mode, None)]
    return [Grant(mode, name) for name in checked]


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def url_host(host: str) -> str:
    """A host as written in a URL (IPv6 addresses in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _origin(scheme: str, host: str, port: int) -> str:
    default = {"http": 80, "https": 443}[scheme]
    # Browsers leave the default port out of the Origin header.
    return f"{scheme}://{url_host(host)}" + ("" if port == default else f":{port}")


def allowed_origins(public_url: str) -> frozenset[str]:
    """The Origin values a browser sends from the served page.

    The page's own origin; when that is a loopback name, the other loopback spellings of the
    same port too (127.0.0.1, localhost, [::1]), since they all reach the same server.
    """
    parts = urlsplit(public_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServeConfigError(f"not an http(s) URL: {public_url!r}")
    try:
        port = parts.port or {"http": 80, "https": 443}[parts.scheme]
    except ValueError:
        raise ServeConfigError(f"bad port in {public_url!r}") from None
    hosts = {parts.hostname.lower()}
    if is_loopback(parts.hostname):
        hosts |= {"127.0.0.1", "localhost", "::1"}
    return frozenset(_origin(parts.scheme, h, port) for h in hosts)
