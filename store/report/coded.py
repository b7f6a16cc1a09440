"""The report's two largest reads as integers: every response (its item as a count per item,
its model as a code) and every judgment (response, setting and verdict packed in one number).

Why integers: a million item ids and model names, read as text and looked up one by one in
Python, cost the report more than the scan itself; a judgment's setting compared as two
strings cost the judgments read a sixth. Both reads are answered from indexes alone (the
responses' (item_id, model, variant) index; the judgments' `idx_judgments_report`, migration
m012). `store.report.reads.BulkReads` runs them with the other reads of a report (their
types are in `copal_tui.domain.report_rows`); `copal_tui.metrics.frame` decodes them. The
conventions (a usable judgment, the target model `model#variant`, the char(30) and char(31)
separators) are those of `store.report.reads`.
"""

from __future__ import annotations

from collections.abc import Callable

from copal_tui.domain.report_rows import FACETS, OTHER_FACET, ResponseColumns
from store.db import Database


def distinct(db: Database, column: str, table: str) -> list[str]:
    """The distinct values of an indexed column, by one seek each (a skip scan of its
    index, where DISTINCT would walk every entry)."""
    out: list[str] = []
    value = db.execute(f"SELECT MIN({column}) FROM {table}").fetchone()[0]
    while value is not None:
        out.append(value)
        value = db.execute(f"SELECT MIN({column}) FROM {table} WHERE {column} > ?",
                           (value,)).fetchone()[0]
    return out


def response_columns(db: Database) -> ResponseColumns:
    """The responses as `ResponseColumns`, from the (item_id, model, variant) index alone. The
    model is coded by the models' sorted list (one skip scan of their index), read in the
    same transaction, so the codes and the list agree."""
    with db.atomic():
        models = distinct(db, "model", "responses")
        code = code_tree("r.model", len(models))
        row = db.execute(
            "SELECT a.items, a.counts, b.rowids, b.models, b.variants FROM "
            "(SELECT group_concat(item_id, char(30)) AS items, group_concat(n) AS counts FROM "
            "(SELECT item_id, COUNT(*) AS n FROM responses GROUP BY item_id ORDER BY item_id)) a, "
            "(SELECT group_concat(rowid) AS rowids, group_concat(code) AS models, "
            "group_concat(variant, char(30)) AS variants FROM "
            f"(SELECT r.rowid, ifnull({code}, -1) AS code, CASE WHEN r.variant <> 'base' "
            "THEN r.rowid || char(31) || r.variant END AS variant "
            "FROM responses r ORDER BY r.item_id, r.model, r.variant)) b",
            models).fetchone()
    return ResponseColumns(models, *row)


def code_tree(column: str, n: int, low: int = 0, leaf: Callable[[int], str] = str) -> str:
    """A SQL expression giving the position of `column` in a sorted list of values (NULL when
    absent), the values bound as the numbered parameters ?1, ?2, ...; a binary search of
    nested CASEs, so a row costs about log2(n) comparisons, not n. With `leaf`, the value at
    position k is the expression `leaf(k)` instead of k."""
    if n == 0:
        return "NULL"
    if n <= 2:
        return "CASE " + " ".join(f"WHEN {column} = ?{low + k + 1} THEN {leaf(low + k)}"
                                  for k in range(n)) + " END"
    half = n // 2
    return (f"CASE WHEN {column} < ?{low + half + 1} THEN {code_tree(column, half, low, leaf)} "
            f"ELSE {code_tree(column, n - half, low + half, leaf)} END")


def judgment_codes(db: Database, settings: list[tuple[str, str]]
                   ) -> tuple[str | None, str | None]:
    """Every judgment packed into one integer: (response rowid * S + setting) * 8 + status,
    with S = len(settings), the setting the index in `settings`, and status 0 = no error,
    1 = under-enforcement, 2 = over-enforcement, 3 = mixed, 4 = error of unknown direction
    (a bare error flag), 5 = failed or no verdict.

    From the same pass, the observed facet of every error judgment that names one (the
    report's `observed_facets`), as (response rowid * S + setting) * 16 + facet code, the code
    the position in FACETS plus one, or OTHER_FACET for a stored name that is not a facet's
    exact value (`store.report.facets.other_facets` reads those names when the report has
    some). Reading the facets here spares a second pass over the judgments, the report's
    largest read; the names are not read here, since a column for them cost the pass a third
    more even when it stayed empty.

    `settings` must be `judge_settings` read in the same transaction: a judge with one mode
    there is matched by its name alone."""
    if not settings:
        return None, None
    judges = sorted({judge for judge, _mode in settings})
    modes: dict[str, dict[str, int]] = {}
    for k, (judge, mode) in enumerate(settings):
        modes.setdefault(judge, {})[mode] = k

    def setting(k: int) -> str:
        """The setting of a judgment of judge k: its one mode's (`settings` is of the same
        snapshot), or by the mode (a CHECK-constrained name, written as a quoted literal)."""
        found = modes[judges[k]]
        if len(found) == 1:
            return str(next(iter(found.values())))
        quoted = ((m.replace("'", "''"), v) for m, v in found.items())
        return "CASE j.mode " + " ".join(f"WHEN '{m}' THEN {v}" for m, v in quoted) + " END"

    # The setting by a binary search on the judge (its mode only when it has two): two string
    # comparisons per judgment cost the read a sixth.
    sid = code_tree("j.judge", len(judges), leaf=setting)
    key = f"(r.rowid * {len(settings)} + {sid})"
    status = ("CASE WHEN j.failure IS NOT NULL OR j.error IS NULL THEN 5 WHEN j.error = 0 THEN 0 "
              "WHEN j.direction = 'under_enforcement' THEN 1 "
              "WHEN j.direction = 'over_enforcement' THEN 2 "
              "WHEN j.direction = 'mixed' THEN 3 ELSE 4 END")
    code = ("CASE j.facet " + " ".join(f"WHEN '{name}' THEN {k + 1}"
                                        for k, name in enumerate(FACETS))
            + f" ELSE {OTHER_FACET} END")
    # CROSS JOIN fixes the order: scan the responses' id index and seek each response's
    # judgments in the (response_id, judge, mode) index, one seek per response; the planner's
    # choice (scan judgments, seek each response) makes one per judgment and was slower.
    row = db.execute(
        f"SELECT group_concat({key} * 8 + {status}), "
        f"group_concat(CASE WHEN j.error = 1 AND j.facet IS NOT NULL THEN {key} * 16 + {code} "
        "END) FROM responses r CROSS JOIN judgments j ON j.response_id = r.id",
        judges,
    ).fetchone()
    return row[0], row[1]
