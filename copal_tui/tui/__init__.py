"""The Textual app. Only this package (and the CLI entry commands) imports textual."""
