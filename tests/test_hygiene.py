"""Layering: the store and the domain load neither textual nor litellm (checked in a fresh
interpreter so nothing imported by other tests can hide a violation)."""

from __future__ import annotations

import subprocess
import sys

import pytest

MODULES = [
    "store", "store.db", "store.migrations", "store.reads", "store.writes", "store.labels",
    "copal_tui.domain", "copal_tui.domain.taxonomy", "copal_tui.domain.contract",
    "copal_tui.domain.schema", "copal_tui.domain.outputs",
]


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_no_ui_or_llm(module):
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'litellm'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


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
