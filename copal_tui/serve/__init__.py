"""`copal serve`: the terminal app in a browser, behind per-user secret tokens.

`auth` owns the tokens (kept only as sha256 digests), the user names they stand for and the
Origin rules; `server` owns the textual-serve subclass that checks every request and starts the
app for the token's user; `templates/` holds the page, which loads nothing from other hosts.
"""
