"""Widgets, one per file."""
