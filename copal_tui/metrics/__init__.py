"""Metrics of `copal report`: computation over the report's typed reads
(`copal_tui.domain.report_rows.ReportReads`), plain Python values and numpy arrays into the
typed report (`document.ReportDocument`).

Pure: no database, no SQL (the reads are `store/report/`, started by the report's service,
`copal_tui.services.report`) and no rendering (that is `copal_tui/export/`); the import-linter
contract "The metrics are pure" checks it. An undefined figure is a `Metric` without a value and
with a stated reason, never a silent 0.
"""
