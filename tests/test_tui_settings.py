"""TUI settings from COPAL_* variables: coercion, bounds, JSON keymaps, one-line errors."""

from __future__ import annotations

import pytest

from copal_tui.tui.settings import Settings, SettingsError


def test_defaults_when_nothing_is_set():
    s = Settings.from_env({"HOME": "/x", "COPAL_DB": "/tmp/a.db"})  # COPAL_DB is not a setting
    assert s == Settings()
    assert s.overlap == 2 and s.blind is True and s.keymap == {}


def test_environment_values_are_coerced():
    s = Settings.from_env({"COPAL_OVERLAP": "3", "copal_blind": "false",
                           "COPAL_LEASE_MINUTES": "2.5",
                           "COPAL_KEYMAP": '{"label.submit": "ctrl+s"}'})
    assert (s.overlap, s.blind, s.lease_minutes) == (3, False, 2.5)
    assert s.keymap == {"label.submit": "ctrl+s"}


@pytest.mark.parametrize(("env", "needle"), [
    ({"COPAL_OVERLAP": "0"}, "COPAL_OVERLAP"),
    ({"COPAL_OVERLAP": "eleven"}, "COPAL_OVERLAP"),
    ({"COPAL_PAGE_SIZE": "5"}, "COPAL_PAGE_SIZE"),
    ({"COPAL_LEASE_MINUTES": "0"}, "COPAL_LEASE_MINUTES"),
    ({"COPAL_BLIND": "perhaps"}, "COPAL_BLIND"),
    ({"COPAL_KEYMAP": "{not json"}, "COPAL_KEYMAP"),
    ({"COPAL_KEYMAP": '["a", "b"]'}, "COPAL_KEYMAP"),
])
def test_bad_values_name_the_variable(env, needle):
    with pytest.raises(SettingsError, match=needle):
        Settings.from_env(env)


def test_explicit_values_are_checked_too():
    assert Settings(page_size=10).page_size == 10
    with pytest.raises(SettingsError):
        Settings(overlap=99)


def test_cli_reports_a_bad_setting_in_one_line(cli, initialised, monkeypatch):
    monkeypatch.setenv("COPAL_OVERLAP", "0")
    result = cli("label", "--annotator", "ana")
    assert result.exit_code == 2
    assert "COPAL_OVERLAP" in result.stderr and "Traceback" not in result.stderr
