"""Shared fixtures: a fresh migrated database (a copy of one `copal init` made once per worker)
and a CLI runner bound to it. Two things keep each worker's garbage collections short: the large
libraries are loaded and frozen once collected (`pytest_collection_finish`), and Textual's memo
of its widgets' style caches is emptied after each test (`_textual_styles_let_go`)."""

from __future__ import annotations

import gc
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir

# Never let a test reach a real provider or the network for litellm's cost map.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The suite-building stages have no default generator; the tests name the offline engine
# through the documented variables (subprocesses inherit them). Tests of the refusal unset them.
os.environ.setdefault("COPAL_GENERATOR", "offline/heuristic")
os.environ.setdefault("COPAL_PREFILTER", "offline/heuristic")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # The libraries the tests load in this process, loaded now and moved out of the cyclic
    # garbage collector's reach (gc.freeze), as copal_tui.metrics.validity does for its own:
    # litellm alone is some 350,000 objects, which every full collection would walk again
    # (0.4 s each; the tests that collect before comparing files do it twice per test).
    # Nothing a test makes is frozen: no test has run yet.
    import litellm  # noqa: F401
    import matplotlib  # noqa: F401
    import textual.app  # noqa: F401

    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _textual_styles_let_go() -> Iterator[None]:
    # Textual memoises `StylesCache.get_inner_outer` with an lru_cache on the method, so the
    # cache keeps the last 1,024 widgets' style caches alive, with every rendered line they
    # hold: some 300,000 objects after a few dozen app tests in one worker, which each full
    # garbage collection then walks (0.75 s each, and the tests that collect before comparing
    # files do it twice). Emptied after each test, they go with their app.
    yield
    styles = sys.modules.get("textual._styles_cache")
    if styles is not None:
        styles.StylesCache.get_inner_outer.cache_clear()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "copal.db"


@pytest.fixture
def cli(db_path: Path):
    runner = CliRunner()

    def run(*args: str, db: Path | None = None, input: str | None = None) -> Result:
        return runner.invoke(main, ["--db", str(db or db_path), *args], input=input,
                             catch_exceptions=False)

    return run


@pytest.fixture(scope="session")
def _initialised_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database `copal init` made, once per worker (after collection, so with every
    migration the test modules registered): the file alone, its connection closed."""
    path = tmp_path_factory.mktemp("initialised") / "copal.db"
    result = CliRunner().invoke(main, ["--db", str(path), "init"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert not Path(f"{path}-wal").exists(), "init left its connection open"
    return path


@pytest.fixture
def initialised(db_path: Path, _initialised_once: Path) -> Path:
    # A copy of what `copal init` made: the same file, without running every migration
    # again for each of the few hundred tests that start from an empty store.
    shutil.copyfile(_initialised_once, db_path)
    return db_path


@pytest.fixture
def samples() -> Path:
    return sample_worlds_dir()


@pytest.fixture
def world(cli, initialised: Path, samples: Path) -> Path:
    """The initialised store with the Meridian Bank sample world (policies and records)."""
    result = cli("import", str(samples / "meridian_bank.yaml"),
                 str(samples / "meridian_bank.jsonl"))
    assert result.exit_code == 0, result.output
    return initialised
