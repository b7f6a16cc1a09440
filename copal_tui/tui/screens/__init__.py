"""Screens, one per file; registered by name: the app's own in copal_tui.tui.app.SCREENS, a
suite's in its descriptor (copal_tui.domain.suites)."""
