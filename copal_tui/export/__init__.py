"""Rendering of the report: JSON, CSV, Markdown, LaTeX, rich terminal tables, plots, manifest."""
