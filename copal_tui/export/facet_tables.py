"""The report's `observed_facets` section as tables: target facet (rows) x observed facet
(columns) counts of errors, from the judge and from the human reference, and their agreement.

Facet names are long (`protected_field_leakage`) and a table has thirteen count columns, so
every facet is written as a two-letter code with a legend beside the table (`FACET_CODES`): with
codes the terminal table (copal_tui.export.facet_terminal) fits 80 columns. In the exports' tables
the full target facet name stays in its row and the legend is the note.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.taxonomy import Facet
from copal_tui.export.table import Table, cols
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.rates import UNMAPPED

NONE_GIVEN = "none_given"  # the column of errors without an observed facet
FACET_CODES: dict[str, str] = {
    Facet.BOUNDARY_OVERREACH: "BO", Facet.OVER_REFUSAL: "OR", Facet.SEMANTIC_LEAKAGE: "SL",
    Facet.SKIPPED_GATE: "SG", Facet.WRONG_SCOPE_GATE: "WS", Facet.PRE_GATE_LEAKAGE: "PG",
    Facet.PROTECTED_FIELD_LEAKAGE: "PF", Facet.ALL_WITHHOLDING: "AW",
    Facet.BLURRED_DISCLOSURE: "BD", Facet.MISSED_TRANSFER: "MT", Facet.WRONG_ROUTE: "WR",
    Facet.LATENT_CONTINUATION: "LC", NONE_GIVEN: "NG", UNMAPPED: "UN",
}
SOURCES = (("judge", "judge_table"), ("human", "human_table"))


def code(name: str) -> str:
    """A facet's code; a name without one (not a facet) is shown whole."""
    return FACET_CODES.get(name, name)


def legend_entries(names: list[str]) -> list[str]:
    return [f"{code(n)} = {n.replace('_', ' ')}" for n in names]


def observed_section(doc: ReportDocument) -> dict[str, Any] | None:
    """The section in its JSON layout (the facet tables read that layout), None without one."""
    section = doc.observed_facets
    return None if section is None else section.to_dict()


def judge_setting(section: dict[str, Any]) -> str:
    """The section's judge setting as a phrase (`J (contract)`)."""
    judge = section.get("judge")
    return "no judge setting" if judge is None else f"{judge} ({section['mode']})"


def facet_tables(doc: ReportDocument) -> list[Table]:
    """The section's tables for the exports; none when the report has no such section."""
    section = observed_section(doc)
    if section is None:
        return []
    columns = list(section["columns"])
    setting = [section.get("judge") or "", section.get("mode") or ""]
    unmapped = [r["target_facet"] for r in section["human_table"]["rows"]
                if r["target_facet"] == UNMAPPED]
    pivot = Table(
        "observed_facets",
        "Observed facet (columns) of errors by target facet (rows): "
        f"judge {judge_setting(section)} and the human reference",
        [*cols("judge:str mode:str source:str target_facet:str errors:int"),
         *((code(c), "int") for c in columns)],
        display=["source", "target_facet", "errors", *(code(c) for c in columns)],
        note=f"{section['scope']}; {section['reference']}. "
             f"{'; '.join(legend_entries([*columns, *unmapped]))}")
    pivot.rows = [[*setting, source, row["target_facet"], row["errors"],
                   *(row["counts"][c] for c in columns)]
                  for source, key in SOURCES for row in section[key]["rows"]]
    a, human = section["agreement"], section["human_table"]
    agreement = Table(
        "observed_facet_agreement",
        "Observed facet: judge vs human reference on responses both call errors",
        cols("judge:str mode:str n_both_errors:int n_compared:int n_agree:int "
              "agreement:float kappa:float kappa_reason:str error_ties_excluded:int "
              "facet_ties_excluded:int"),
        display=["judge", "mode", "n_both_errors", "n_compared", "n_agree", "agreement",
                 "kappa"],
        note="compared: both gave a facet; agreement = agree / compared; Cohen's kappa over "
             "the compared responses")
    agreement.rows.append([*setting, a["n_both_errors"], a["n_compared"], a["n_agree"],
                           a["agreement"], a["kappa"], str(a.get("kappa_reason") or ""),
                           human["error_ties_excluded"], human["facet_ties_excluded"]])
    return [pivot, agreement]
