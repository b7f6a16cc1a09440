"""SQLite store for copal. Imports neither textual nor litellm; all SQL lives in this package."""
