"""Metrics of `copal report`: pure computation over plain Python values and numpy arrays.

No SQL here (that is `store/report/metrics_sql.py`) and no rendering (that is `copal_tui/export/`).
An undefined value is NaN with a stated reason next to it, never a silent 0.
"""
