"""Artifacts: the rows each suite's method produces and the importers load (COPAL worlds to
judgments in `writes`/`reads`, COMPASS queries to verdicts, judged dialogues), with the
interchange lookups that check an import against what is stored."""
