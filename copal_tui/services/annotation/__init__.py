"""Annotation as a service over the annotation log: the one queue every suite's label screen
uses (`queue`), what differs between suites (`suites`), adjudication (`adjudication`),
labelling campaigns (`campaigns`) and what the label screens read (`views`)."""
