"""`python -m copal_tui` runs the `copal` command."""

from copal_tui.cli import main

main()
