"""Every id, name and filter value a command takes is checked against the store: one that names
nothing is exit 2 with one line naming the closest names, and nothing is run, recorded or
written; an option a command would ignore is refused the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir
from tests.db_support import copy_db, query_rows
from tests.sample_store_support import build_judged_store, copal, ok


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_judged_store(tmp_path_factory.mktemp("filters"))


@pytest.fixture
def store(judged: Path, tmp_path: Path) -> Path:
    """A copy of the judged store, for a test that might write to it."""
    return copy_db(judged, tmp_path / "copy.db")


def count(db: Path, table: str) -> int:
    return int(query_rows(db, f"SELECT COUNT(*) FROM {table}")[0][0])


def refused(result, *names: str) -> str:
    """The one error line of a refused command, which names each of `names`."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def test_a_misspelled_world_runs_nothing_and_names_the_world(store):
    runs = count(store, "runs")
    refused(copal(store, "run", "ground", "--world", "lumen_telecom"), "lumen-telecom")
    refused(copal(store, "run", "compass", "--world", "nosuch", "--model", "offline/refuse-all",
                  "--judge", "offline/judge"), "--world nosuch")
    assert count(store, "runs") == runs  # no empty run recorded


def test_judge_given_a_model_judges_that_models_responses_only(store):
    judgments, runs = count(store, "judgments"), count(store, "runs")
    # A model with no stored response is refused, naming the ones that have some.
    refused(copal(store, "run", "judge", "--model", "sample/assistant-z", "--judge",
                  "offline/judge"), "--model sample/assistant-z", "sample/assistant-a")
    assert (count(store, "judgments"), count(store, "runs")) == (judgments, runs)
    mine = int(query_rows(store, "SELECT COUNT(*) FROM responses WHERE model = ?",
                          ("sample/assistant-a",))[0][0])
    assert 0 < mine < count(store, "responses")
    ok(copal(store, "run", "judge", "--model", "sample/assistant-a", "--judge",
             "offline/heuristic"))
    new = query_rows(store, "SELECT r.model FROM judgments j JOIN responses r "
                            "ON r.id = j.response_id WHERE j.judge = 'offline/heuristic'")
    assert len(new) == mine and {m for (m,) in new} == {"sample/assistant-a"}


def test_an_option_no_stage_of_the_run_reads_is_refused(store):
    runs = count(store, "runs")
    refused(copal(store, "run", "ground", "--world", "lumen-telecom", "--budget", "3"),
            "--budget", "select")
    refused(copal(store, "run", "dialogue_judge", "--judge", "offline/judge", "--world",
                  "lumen-telecom"), "--world")
    assert count(store, "runs") == runs


def test_every_option_of_run_says_which_stages_read_it():
    from copal_tui.commands.run_checks import read_by

    ctx = main.make_context("copal", ["run", "--help"], resilient_parsing=True)
    run = main.get_command(ctx, "run")
    assert run is not None
    table = read_by()
    # The stage names and the database are every stage's; every other option is in the table,
    # so a new option cannot be ignored by a stage without the run refusing it.
    unlisted = {p.name for p in run.params} - set(table) - {"stages", "db_path"}
    assert not unlisted


def test_dialogue_filters_that_match_nothing_record_no_run(store):
    refused(copal(store, "run", "dialogue_judge", "--judge", "offline/judge", "--dialogue",
                  "clinic/conversation_0001"), "clinic/conversation_00001")
    refused(copal(store, "run", "dialogue_judge", "--judge", "offline/judge", "--domain",
                  "clinc"), "clinic")
    refused(copal(store, "run", "dialogue_judge", "--judge", "offline/judge", "--domain",
                  "telecom", "--dialogue", "clinic/conversation_00001"), "no dialogue")
    assert not query_rows(store, "SELECT * FROM runs WHERE stage = 'dialogue_judge'")
    assert count(store, "dialogue_attempts") == 0


@pytest.mark.parametrize(("args", "close"), [
    (("--pattern", "scope_restrictoin"), "scope_restriction"),
    (("--facet", "skiped_gate"), "skipped_gate"),
    (("--model", "sample/assistant-x"), "sample/assistant-a"),
    (("--world", "harbour-clinics"), "harbor-clinics"),
    (("--judge", "offline/jugde"), "offline/judge"),
])
def test_cases_filters_that_match_nothing_are_errors(judged, args, close):
    refused(copal(judged, "cases", *args), args[0], close)


def test_cases_filters_that_match_something_still_list_it(judged):
    result = ok(copal(judged, "cases", "--pattern", "scope_restriction", "--model",
                      "sample/assistant-a", "--format", "jsonl"))
    assert result.stdout.count("\n") >= 1


def test_cases_cells_that_contradict_disagree_are_refused(judged):
    refused(copal(judged, "cases", "--cell", "tp", "--disagree"), "--disagree")


def test_report_and_export_names_come_with_close_matches(judged):
    refused(copal(judged, "report", "--world", "skyline_air"), "skyline-air")
    refused(copal(judged, "report", "--judge", "offline/jugde"), "offline/judge")
    refused(copal(judged, "report", "--reference-judge", "offline/jugde@contract"),
            "offline/judge")


def test_the_store_export_refuses_the_report_options_it_would_ignore(judged, tmp_path):
    out = tmp_path / "store.jsonl"
    refused(copal(judged, "export", "--format", "jsonl", "--out", str(out), "--seed", "3"),
            "--seed")
    assert not out.exists()


def test_campaign_filters_and_names_are_checked(store):
    refused(copal(store, "campaign", "create", "c", "--world", "lumen_telecom"), "lumen-telecom")
    refused(copal(store, "campaign", "create", "c", "--model", "sample/asistant-b"),
            "sample/assistant-b")
    refused(copal(store, "campaign", "create", "c", "--pattern", "selective-disclosure"),
            "selective_disclosure")
    assert not query_rows(store, "SELECT * FROM campaigns WHERE name = 'c'")
    ok(copal(store, "campaign", "create", "first", "--size", "2"))
    refused(copal(store, "campaign", "show", "frist"), "first")
    refused(copal(store, "label", "--campaign", "frist"), "first")


def test_label_names_a_dialogue_judge_close_to_a_typo(store):
    ok(copal(store, "import", "--from", "complibench-judge", "--judge", "sample-judge",
             str(sample_worlds_dir() / "complibench")))
    refused(copal(store, "label", "--suite", "dialogue", "--judge", "sample-jugde"),
            "--judge sample-jugde", "sample-judge")
