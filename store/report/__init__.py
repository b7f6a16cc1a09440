"""Report: the bulk aggregate reads behind `copal report` and `copal export` for every suite, and
the provenance of the figures (which runs and models wrote the rows in scope)."""
