"""Click subcommands of `copal`, grouped by area; `copal_tui.cli` registers them."""
