"""Screens, one per file; registered by name in copal_tui.tui.app.SCREENS."""
