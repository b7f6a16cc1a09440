"""What is loaded when, checked in a fresh interpreter so nothing imported by other tests can hide
it: `copal --help` loads no litellm, and the TUI's start loads none of the metric libraries
(scikit-learn, scipy, krippendorff). Which package may import which is not listed here: the
import-linter contracts in pyproject.toml check it over whole packages."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_cli_help_does_not_import_litellm():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from copal_tui.cli import main\n"
        "r = CliRunner().invoke(main, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print('litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# scikit-learn, scipy and krippendorff take a second or more to import: only the report loads
# them (its modules import them while its reads run), never the TUI's start or the metric
# modules the TUI's widgets import.
METRIC_LIBRARIES = ("sklearn", "scipy", "krippendorff")
_LOADED = (f"bad = sorted({{m.split('.')[0] for m in sys.modules}} & {set(METRIC_LIBRARIES)!r})\n"
           "print(','.join(bad))\n")


@pytest.mark.parametrize("module", [
    "copal_tui.cli", "copal_tui.commands.tui_cmds", "copal_tui.tui.app",
    "copal_tui.tui.screens.dashboard", "copal_tui.tui.widgets.dashboard_sections",
    "copal_tui.metrics.rates", "copal_tui.metrics.classify", "copal_tui.metrics.intervals",
    "copal_tui.services.report",
])
def test_tui_path_imports_no_metric_library(module):
    code = f"import importlib, sys\nimportlib.import_module({module!r})\n{_LOADED}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_tui_start_loads_no_metric_library(initialised):
    # The app as `copal tui` builds it, run headless until its first screen is mounted.
    code = (
        "import asyncio, sys\n"
        "from copal_tui.tui.app import make_app\n"
        "async def main():\n"
        f"    async with make_app({str(initialised)!r}).run_test(size=(120, 40)) as pilot:\n"
        "        await pilot.pause()\n"
        "        print(type(pilot.app.screen).__name__)\n"
        "asyncio.run(main())\n"
        f"{_LOADED}"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["WorldsScreen", ""]


def test_the_report_modules_do_load_them():
    # The check above would pass vacuously if the names were wrong: the report loads all three.
    code = f"import sys\nimport copal_tui.metrics.copal_sections\n{_LOADED}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ",".join(sorted(METRIC_LIBRARIES))
