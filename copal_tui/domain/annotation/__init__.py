"""What an annotation is, in two modules kept apart so that reading the annotation log never
loads pydantic: `subjects` (the roles and actions of the log, how each suite names a
subject, the check every write passes) and `payloads` (the pydantic model each kind of event
carries, loaded by writers only). Import from the modules; this package re-exports nothing."""
