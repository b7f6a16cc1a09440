"""Metrics of `copal report`: computation over plain Python values and numpy arrays into the
typed report (`document.ReportDocument`).

No SQL here (that is `store/report/`) and no rendering (that is `copal_tui/export/`). An
undefined figure is a `Metric` without a value and with a stated reason, never a silent 0.
"""
