"""Where a report's figures come from and what the exports' manifest checks: the runs that
wrote the rows in scope (every suite), what each suite's rows say besides (its descriptor's
`Report.provenance` read: models its rows name in a role, rows imported without a run), the
database's quick_check, and what the interchange export leaves out.
Read after the report's bulk reads (`store.report.reads`), which these queries do not slow.
"""

from __future__ import annotations

from copal_tui.domain.report_rows import ProvenanceExtras, SuiteExtras
from copal_tui.domain.run_manifest import RunManifest
from copal_tui.domain.suites import SUITES, load
from store.db import Database
from store.report.scope import all_rows, world_scope


def judgments_in_scope(worlds: list[str] | None) -> str:
    """The judgments in scope, aliased `j`: joined up to their items only when a scope names
    worlds. Unscoped, the joins would cost a seek per judgment (seconds at a million responses)
    and filter nothing out."""
    if not worlds:
        return "judgments j"
    return "judgments j JOIN responses r ON r.id = j.response_id JOIN items i ON i.id = r.item_id"


def runs_involved(db: Database, worlds: list[str] | None) -> list[tuple[str, str, str, str]]:
    """(id, stage, status, manifest JSON) of every run that wrote a row in scope."""
    w_where, w_params = world_scope(worlds, "world_id")
    i_where, i_params = world_scope(worlds, "i.world_id")
    responses = "responses r JOIN items i ON i.id = r.item_id" if worlds else "responses r"
    judgments = judgments_in_scope(worlds)
    return all_rows(
        db,
        f"""
        WITH used AS (
            SELECT run_id FROM clauses WHERE run_id IS NOT NULL{w_where}
            UNION SELECT run_id FROM compositions WHERE run_id IS NOT NULL{w_where}
            UNION SELECT run_id FROM items i WHERE run_id IS NOT NULL{i_where}
            UNION SELECT r.run_id FROM {responses} WHERE r.run_id IS NOT NULL{i_where}
            UNION SELECT j.run_id FROM {judgments} WHERE j.run_id IS NOT NULL{i_where}
        )
        SELECT id, stage, status, manifest FROM runs WHERE id IN (SELECT run_id FROM used)
        ORDER BY started_at, id
        """,
        (*w_params, *w_params, *i_params, *i_params, *i_params),
    )


def quick_check(db: Database) -> str:
    rows = [r[0] for r in db.execute("PRAGMA quick_check").fetchall()]
    return "; ".join(str(r) for r in rows)


def unexported_counts(db: Database) -> list[tuple[str, int]]:
    """Rows the interchange export leaves out: failed responses and failed judgments."""
    return all_rows(db, "SELECT 'responses', COUNT(*) FROM responses WHERE failure IS NOT NULL OR "
                    "text IS NULL UNION ALL SELECT 'judgments', COUNT(*) FROM judgments "
                    "WHERE failure IS NOT NULL OR error IS NULL")


def provenance_runs(db: Database, worlds: list[str] | None) -> list[RunManifest]:
    """Every run that wrote a row in scope, in every suite, plus the selection and verification
    runs (they update rows without stamping a run on them) whose options name a world in scope
    or every world. The report's provenance and the export's manifest both read this."""
    w_where, w_params = world_scope(worlds, "world_id")
    q_where, q_params = world_scope(worlds, "q.world_id")
    p_where, p_params = world_scope(worlds, "p.world_id")
    used = list(runs_involved(db, worlds))
    used += all_rows(
        db,
        f"""
        WITH used AS (
            SELECT run_id FROM compass_queries WHERE run_id IS NOT NULL{w_where}
            UNION SELECT r.run_id FROM compass_responses r JOIN compass_queries q
                  ON q.id = r.query_id WHERE r.run_id IS NOT NULL{q_where}
            UNION SELECT j.run_id FROM compass_judgments j JOIN compass_responses r
                  ON r.id = j.response_id JOIN compass_queries q ON q.id = r.query_id
                  WHERE j.run_id IS NOT NULL{q_where}
            UNION SELECT run_id FROM dialogues WHERE run_id IS NOT NULL
            UNION SELECT run_id FROM dialogue_attempts WHERE run_id IS NOT NULL
            UNION SELECT j.run_id FROM traffic_judgments j JOIN traffic_pairs p
                  ON p.id = j.pair_id WHERE j.run_id IS NOT NULL{p_where}
        )
        SELECT id, stage, status, manifest FROM runs WHERE id IN (SELECT run_id FROM used)
        ORDER BY started_at, id
        """,
        (*w_params, *q_params, *q_params, *p_params),
    )
    for row in all_rows(db, "SELECT id, stage, status, manifest FROM runs WHERE stage IN "
                            "('select', 'compass_verify') AND status <> 'running' "
                            "ORDER BY started_at, id"):
        named = RunManifest.read(*row).option("worlds")
        if not named or not worlds or set(named) & set(worlds):
            used.append(row)
    return [RunManifest.read(*row) for row in {row[0]: row for row in used}.values()]


def provenance_extras(db: Database, worlds: list[str] | None) -> ProvenanceExtras:
    """What every suite's rows in scope say besides their runs (each suite's `Report.provenance`
    read, in registration order): the models they name in a role, by suite, and the rows no run
    wrote (imported from files), {"<suite>:<what>": count}."""
    models: dict[str, dict[str, list[str]]] = {}
    imported: dict[str, int] = {}
    for name, spec in SUITES.items():
        if spec.report is None or spec.report.provenance is None:
            continue
        found: SuiteExtras = load(spec.report.provenance)(db, worlds)
        models[name] = found.models
        imported.update((f"{name}:{what}", n) for what, n in found.imported.items())
    return ProvenanceExtras(models, imported)
