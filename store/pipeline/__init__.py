"""Pipeline bookkeeping: runs with their manifests, claims and heartbeats, the model call log and
cache, each stage's work list (what is still to do, for resumability) and the jobs screen's reads."""
