"""The suites copal runs, one descriptor each (`Suite`), in one registry (`SUITES`).

A suite's name is its key everywhere: `--suite` on the command line, the `suite` column of the
annotation log and of campaigns, a pipeline stage's suite, the report's provenance. Each layer
finds a suite's part through its descriptor, never through a list of its own:

- the pipeline runs `stages` (each names the function that does its work);
- the prompt registry loads `prompts` (`prompts/<task>.md`), a task named in
  `prompt_layouts` rendered through its layout;
- the annotation queue takes its subjects and label rules from `annotation`, and a label is
  the `payload` model; campaigns and `copal label` take from `annotation` the filters they
  draw by (`Rules.draws_by`), `copal campaign show` the annotators' agreement;
- the report reads, builds, exports and prints its sections through `report` (a `Report`);
- the app opens `screens` by name, the label queue on `label_screen`, adjudication on
  `adjudicate_screen`; the world screen adds `world_tab`;
- the command line adds `commands` (loaded when named), and `copal run` its `run_options`.

A part named "module:attribute" is imported on first use, so naming a suite loads none of its
code: `copal --help` and the app's start-up stay cheap, and this module imports nothing above
the domain. Adding a suite is a new descriptor registered with `register` and the modules it
names; its own tables come from its migration steps (`tables` lists them).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

PIPELINE = "copal_tui.pipeline"


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: its name, its suite (set when the suite is registered), its entry
    point ("module:function", its `execute(run)`) and what it needs to start."""

    name: str
    entry: str
    needs_generator: bool = False
    needs_models: bool = False
    needs_judges: bool = False
    suite: str = ""

    @property
    def options(self) -> type[Any]:
        """The options model of the stage's suite (the field of the run's `Options` named
        after the suite)."""
        ref = suite(self.suite).options
        if ref is None:
            raise ValueError(f"suite {self.suite!r} has stages but names no options")
        found: type[Any] = load(ref)
        return found

    def execute(self) -> Any:
        """The stage's `execute(run)` coroutine function (its module imported now)."""
        return load(self.entry)


@dataclass(frozen=True)
class Report:
    """How a suite's figures enter `copal report` and its exports. Each part is a
    "module:function" reference, loaded when a report is built:

    - `read(db, worlds)`: the suite's rows, read in the store beside the report's other reads
      (`store.report.reads.BulkReads`);
    - `build(given, rows)`: its sections (a `copal_tui.metrics.document.SuiteSections` model),
      or None when the store has nothing for it (the report then leaves them out);
    - `tables(doc, sections)`: its tables for the CSV, Markdown and LaTeX exports;
    - `terminal(console, doc, sections)`: how `copal report` prints it (None: each of its
      tables as the terminal shows any table);
    - `dashboard`: "module:Class" of its tab in the app's dashboard, a widget with a `TITLE`
      and `show(doc, sections)` (None: no tab);
    - `provenance(db, worlds)`: what its rows in scope say of where they come from besides the
      runs that wrote them (`copal_tui.domain.report_rows.SuiteExtras`: the models they name in
      a role no run records, the rows imported without a run), read in the store beside the
      runs (`store.report.provenance`) and named in its provenance (None: nothing).

    `sections` names its keys in the report's JSON (the provenance lists them);
    `export_tables` the prefixes of its tables' names (their notes carry its heuristic caveat).
    COPAL's sections are the report's own fields (every report has them, the other suites
    compare against them, and its judges give the report's primary judge, first among its
    judges in its provenance), so its descriptor names no `read` or `build`."""

    sections: tuple[str, ...]
    export_tables: tuple[str, ...] = ()
    read: str | None = None
    build: str | None = None
    tables: str | None = None
    terminal: str | None = None
    dashboard: str | None = None
    provenance: str | None = None


@dataclass(frozen=True)
class Suite:
    """What one suite is made of (see the module docstring for who reads which part)."""

    name: str
    title: str
    short: str  # its name in a sentence ("the COMPASS stages")
    tables: tuple[str, ...]
    subject: str  # what one annotation subject is, in words
    payload: str  # "module:Class" of its label payload model
    # "module:Class" of its annotation rules (copal_tui.services.annotation.suites.Rules).
    annotation: str
    label_screen: str  # the name (in `screens`) of its label queue screen
    # The name (in `screens`) of the screen where an adjudicator decides its disagreements
    # (`copal adjudicate --suite`); None: the suite has no adjudication.
    adjudicate_screen: str | None = None
    screens: Mapping[str, str] = field(default_factory=dict)  # name -> "module:Class"
    # "module:attribute" of its tab on the world screen (`copal_tui.tui.widgets.world_tab.
    # WorldTab`: its columns, filters, page read, count, and what enter and `r` do on a row);
    # None: no tab.
    world_tab: str | None = None
    stages: tuple[Stage, ...] = ()
    # "module:Class" of the options its stages read (the field of `Options` named `name`).
    options: str | None = None
    # command name -> "module:attribute" of a click command the suite adds to `copal`.
    commands: Mapping[str, str] = field(default_factory=dict)
    # `copal import --from` name -> "module:attribute" of a source of its files
    # (`copal_tui.commands.suite_import.Importer`); the first suite's first is the default.
    importers: Mapping[str, str] = field(default_factory=dict)
    # "module:attribute" of its part of `copal run` (`copal_tui.commands.suite_run.SuiteRun`:
    # its options, which stages read them, how they set `options`, its scope check).
    run_options: str | None = None
    # "module:attribute" of its part of `copal demo` (`copal_tui.commands.suite_demo.
    # SuiteDemo`: the samples it imports, its offline runs, its table of the summary).
    demo: str | None = None
    # "module:attribute" of the click command that lists the subjects behind its figures
    # (`copal cases --suite <name>`); None: it lists none.
    cases: str | None = None
    # Whether `copal run <name>` is shorthand for all its stages, in order. The shorthand needs
    # --world or --all: a whole suite is built per world, hundreds of calls per target, and
    # never for every world by default.
    run_alias: bool = False
    prompts: tuple[str, ...] = ()
    # task -> "module:attribute" of the layout of those of its prompts whose user message is
    # laid out as text blocks instead of ending with the JSON trailer (`copal_tui.prompts`).
    prompt_layouts: Mapping[str, str] = field(default_factory=dict)
    # stage -> {option in its runs' manifests (dotted: a suite's own options): the value a run
    # that did not record it used}: the choices behind its figures, named in the report's
    # provenance (where copal offers a way besides the reference's, which way was taken).
    provenance_options: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # stage -> {option in its runs' manifests (dotted): (the provenance's role its value names a
    # model or way in, a list field of `SuiteProvenance`; the value a run that recorded the
    # option's parent but not the option used)}: roles a stage's options give besides the
    # models it calls (COMPASS's allowed-edge writer).
    provenance_roles: Mapping[str, Mapping[str, tuple[str, str]]] = field(default_factory=dict)
    report: Report | None = None  # its part of `copal report` and the exports

    def stage_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stages)


def run_aliases() -> dict[str, tuple[str, ...]]:
    """{suite name: its stages} of the suites `copal run` takes by name (`Suite.run_alias`)."""
    return {s.name: s.stage_names() for s in _REGISTRY.values() if s.run_alias}


def load(ref: str) -> Any:
    """The attribute a "module:attribute" reference names, imported now."""
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


_REGISTRY: dict[str, Suite] = {}
SUITES: Mapping[str, Suite] = MappingProxyType(_REGISTRY)


def register(suite: Suite) -> Suite:
    """Add `suite` to `SUITES`; ValueError when its name or a stage's name is taken."""
    if suite.name in _REGISTRY:
        raise ValueError(f"a suite named {suite.name!r} is already registered")
    taken = {s.name for other in _REGISTRY.values() for s in other.stages}
    clash = sorted(taken & set(suite.stage_names()))
    if clash:
        raise ValueError(f"suite {suite.name!r}: stage(s) {', '.join(clash)} already exist")
    if suite.run_alias and suite.name in taken | set(suite.stage_names()):
        raise ValueError(f"suite {suite.name!r}: `copal run {suite.name}` would name a stage")
    if suite.stages and suite.options is None:
        raise ValueError(f"suite {suite.name!r} has stages but names no options model")
    stray = sorted(set(suite.prompt_layouts) - set(suite.prompts))
    if stray:
        raise ValueError(f"suite {suite.name!r}: layout(s) for {', '.join(stray)}, which are "
                         "not among its prompts")
    for kind, name in (("label", suite.label_screen), ("adjudicate", suite.adjudicate_screen)):
        if name is not None and name not in suite.screens:
            raise ValueError(f"suite {suite.name!r}: {kind} screen {name!r} is not one of its "
                             "screens")
    suite = replace(suite, stages=tuple(replace(s, suite=suite.name) for s in suite.stages))
    _REGISTRY[suite.name] = suite
    return suite


def unregister(name: str) -> None:
    """Remove a suite (for a test that registers one of its own)."""
    _REGISTRY.pop(name, None)


def suite(name: str) -> Suite:
    """The suite named `name`; ValueError naming the known ones."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; one of {', '.join(_REGISTRY)}") from None


def suite_of_stage(stage: str) -> Suite | None:
    for found in _REGISTRY.values():
        if stage in found.stage_names():
            return found
    return None


def _pipeline(module: str) -> str:
    return f"{PIPELINE}.{module}:execute"


def _stages(*specs: tuple[str, str]) -> tuple[Stage, ...]:
    """Stages from (name, needs) pairs: needs has "g" (a generator), "m" (targets), "j"
    (judges)."""
    return tuple(Stage(name, _pipeline(name), needs_generator="g" in flags,
                       needs_models="m" in flags, needs_judges="j" in flags)
                 for name, flags in specs)


_PAYLOADS = "copal_tui.domain.annotation.payloads"
_RULES = "copal_tui.services.annotation"
_SCREENS = "copal_tui.tui.screens"

_RUN = "copal_tui.commands.run_"
_IMPORT = "copal_tui.commands.import_"
_DEMO = "copal_tui.commands.demo_"

COPAL = register(Suite(
    name="copal", title="COPAL composed policies", short="COPAL",
    importers={"copal": f"{_IMPORT}copal:WORLDS"},
    options=f"{PIPELINE}.options:CopalOptions", run_options=f"{_RUN}copal:RUN",
    demo=f"{_DEMO}copal:DEMO",
    cases="copal_tui.commands.cases_cmds:cases_command",
    tables=("worlds", "policies", "clauses", "compositions", "items", "responses", "judgments"),
    # Ablation items are selected before `respond` and `judge` so the baselines are answered
    # and judged like COPAL's own suite.
    stages=_stages(("ground", "g"), ("compose", "g"), ("generate", "g"), ("select", "g"),
                   ("project", "g"), ("ablate", "g"), ("respond", "m"), ("judge", "j")),
    prompts=("grounding", "composition", "generation", "screening", "mapping", "projection",
             "projection_screening", "judge_contract", "judge_full_policy",
             "planner_clause_only", "planner_no_facet", "planner_raw_policy"),
    subject="a target's response to a test item (responses.id)",
    payload=f"{_PAYLOADS}:CopalLabel", annotation=f"{_RULES}.suites:Copal",
    label_screen="label", adjudicate_screen="adjudicate",
    screens={"worlds": f"{_SCREENS}.worlds:WorldsScreen",
             "world": f"{_SCREENS}.world:WorldScreen",
             "item": f"{_SCREENS}.item:ItemScreen",
             "label": f"{_SCREENS}.label_queue:LabelQueueScreen",
             "adjudicate": f"{_SCREENS}.adjudicate:AdjudicateScreen",
             "cases": f"{_SCREENS}.cases:CasesScreen"},
    report=Report(sections=("error_rates", "overall", "facet_atlas", "one_sided",
                            "paired_contrast", "ablation", "controls", "judge_validity",
                            "judge_sensitivity", "corrected_error_rates", "observed_facets"),
                  provenance="store.report.copal_provenance:extras"),
))

COMPASS = register(Suite(
    name="compass", title="COMPASS single-policy suite", short="COMPASS",
    importers={"compass": f"{_IMPORT}compass:SCENARIOS",
               "compass-judged": f"{_IMPORT}compass:JUDGED"},
    options=f"{PIPELINE}.options:CompassOptions", run_options=f"{_RUN}compass:RUN",
    demo=f"{_DEMO}compass:DEMO",
    run_alias=True,
    tables=("compass_queries", "compass_responses", "compass_judgments"),
    # compass_generate writes base queries, verifies them and writes edge queries from the
    # kept denied-base ones (edges need kept bases); compass_verify verifies whatever is
    # still pending.
    stages=_stages(("compass_generate", "g"), ("compass_verify", "g"), ("compass_respond", "m"),
                   ("compass_judge", "j")),
    prompts=("compass_generate_org", "compass_generate_base", "compass_generate_denied_short",
             "compass_generate_denied_long", "compass_generate_edge", "compass_rewrite_edge",
             "compass_verify_reference", "compass_verify_denylist", "compass_verify",
             "compass_verify_edge", "compass_prefilter", "compass_reference", "compass_judge",
             "compass_judge_with_query"),
    subject="a target's response to a COMPASS query (compass_responses.id)",
    payload=f"{_PAYLOADS}:CompassLabel", annotation=f"{_RULES}.compass_rules:Compass",
    label_screen="compass_label",
    screens={"compass_query": f"{_SCREENS}.compass_query:CompassQueryScreen",
             "compass_label": f"{_SCREENS}.compass_label:CompassLabelScreen"},
    world_tab=f"{_SCREENS}.world_compass_tab:TAB",
    # A run recorded before an option existed built its suite copal's earlier way.
    provenance_options={
        "compass_generate": {"compass.base_writer": "per-policy", "compass.matcher": "copal",
                             "compass.denied_edge_writer": "rotation",
                             "compass.allowed_edge_policy": "allowlist"},
        "compass_verify": {"compass.matcher": "copal"}},
    # A run recorded before `edge_writer` was an option wrote its allowed edges as variants.
    provenance_roles={"compass_generate": {"compass.edge_writer": ("edge_writer", "variants")}},
    report=Report(sections=("pas", "pas_failure_modes", "pas_vs_composed",
                            "pas_judge_validity", "compass_summary"),
                  export_tables=("pas", "compass"),
                  read="store.report.compass:compass_rows",
                  build="copal_tui.metrics.compass_sections:build",
                  tables="copal_tui.export.suite_tables:compass_report_tables",
                  terminal="copal_tui.export.suite_terminal:print_compass",
                  provenance="store.report.compass_provenance:extras"),
))

DIALOGUE = register(Suite(
    name="dialogue", title="CompliBench dialogue judging", short="dialogue",
    importers={"complibench": f"{_IMPORT}dialogue:CONVERSATIONS",
               "complibench-judge": f"{_IMPORT}dialogue:JUDGE_OUTPUTS"},
    options=f"{PIPELINE}.options:DialogueOptions", run_options=f"{_RUN}dialogue:RUN",
    demo=f"{_DEMO}dialogue:DEMO",
    tables=("dialogues", "dialogue_guidelines", "dialogue_turns", "dialogue_attempts",
            "dialogue_predictions", "dialogue_variants"),
    # Variants before the judge, so a run of both judges the new variant dialogues too.
    stages=_stages(("dialogue_variants", "gj"), ("dialogue_judge", "j")),
    prompts=("dialogue_variant", "dialogue_refine", "dialogue_regenerate", "dialogue_judge",
             "dialogue_judge_copal", "dialogue_judge_binary", "dialogue_compliance_judge",
             "dialogue_content_judge"),
    # The judges see the conversation as CompliBench's judge does: text blocks, not JSON.
    prompt_layouts=dict.fromkeys(("dialogue_judge", "dialogue_judge_copal",
                                  "dialogue_judge_binary"),
                                 "copal_tui.domain.dialogue_layout:JUDGE_LAYOUT"),
    subject="one judge's verdict on one turn: [dialogue, judge, attempt, turn]",
    payload=f"{_PAYLOADS}:DialogueReview", annotation=f"{_RULES}.dialogue_rules:Dialogue",
    label_screen="dialogue_review",
    screens={"dialogues": f"{_SCREENS}.dialogues:DialoguesScreen",
             "dialogue": f"{_SCREENS}.dialogue:DialogueScreen",
             "dialogue_review": f"{_SCREENS}.dialogue_review:DialogueReviewScreen"},
    commands={"delete-attempts": "copal_tui.commands.store_cmds:delete_attempts"},
    provenance_options={"dialogue_judge": {"dialogue.judge_prompt": "copal"}},
    report=Report(sections=("dialogue_judging", "dialogue_error_taxonomy"),
                  export_tables=("dialogue",),
                  read="store.report.dialogue:report_rows",
                  build="copal_tui.metrics.dialogue_sections:build",
                  tables="copal_tui.export.suite_tables:dialogue_tables",
                  provenance="store.report.dialogue_provenance:extras"),
))

TRAFFIC = register(Suite(
    name="traffic", title="Real-traffic audit", short="traffic",
    options=f"{PIPELINE}.options:TrafficOptions", run_options=f"{_RUN}traffic:RUN",
    demo=f"{_DEMO}traffic:DEMO",
    cases="copal_tui.commands.traffic_cases:cases",
    tables=("traffic_imports", "traffic_pairs", "traffic_judgments", "traffic_key"),
    stages=_stages(("traffic_judge", "j")),
    prompts=("traffic_judge",),
    subject="a de-identified pair of a deployed chatbot's log (traffic_pairs.id)",
    payload="copal_tui.domain.traffic:TrafficLabel",
    annotation="copal_tui.services.traffic_annotation:Traffic",
    label_screen="traffic_label", adjudicate_screen="traffic_adjudicate",
    screens={"traffic_label": f"{_SCREENS}.traffic_label:TrafficLabelScreen",
             "traffic_adjudicate": f"{_SCREENS}.traffic_adjudicate:TrafficAdjudicateScreen"},
    commands={"traffic": "copal_tui.commands.traffic_cmds:traffic"},
    report=Report(sections=("traffic_audit", "traffic_agreement", "traffic_labeller",
                            "traffic_corrected", "public_probes"),
                  export_tables=("traffic", "public_probes"),
                  read="store.report.traffic:report_rows",
                  build="copal_tui.metrics.traffic_sections:build",
                  tables="copal_tui.export.traffic_tables:traffic_tables",
                  dashboard="copal_tui.tui.widgets.dashboard_traffic_pane:TrafficPane"),
))
