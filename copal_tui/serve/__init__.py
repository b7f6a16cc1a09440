"""`copal serve`: the terminal app in a browser, behind per-user secret tokens.

`auth` owns the tokens (kept only as sha256 digests), the user names they stand for and the
Origin rules; `server` owns the textual-serve subclass that checks every request and starts the
app for the token's user; `limits` the bounds (sessions, idle close, header deadline, open
connections) and the count of live sessions; `connections` the listening socket's guard;
`session` one session's app process and websocket relay; `log_filter` what the log may print;
`templates/` holds the pages, which load nothing from other hosts.

`ServeConfigError` is here, with no imports, so that `copal serve`'s options can name their
defaults (`limits.ServeLimits`) without loading the rest of the server.
"""


class ServeConfigError(ValueError):
    """A bad user name, names file, URL or limit given to `copal serve` (one line, for the CLI)."""
