"""Annotation: the one append-only log of labels, reviews and adjudications of every suite
(`annotations`), the queue's leases and walk, frozen campaigns, and per suite what a subject is
and what an annotator is shown for it (`labels` for COPAL, `compass_labels`, `dialogue_reviews`)."""
