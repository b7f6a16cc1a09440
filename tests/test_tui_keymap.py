"""COPAL_KEYMAP mistakes are errors: an unknown binding id or a remapped key that collides with
another binding exits 2 naming it, before the terminal is taken over; a good keymap works."""

from __future__ import annotations

import pytest

from copal_tui.tui.app import make_app
from copal_tui.tui.settings import SettingsError


def test_unknown_binding_id_exits_2(cli, initialised, monkeypatch):
    monkeypatch.setenv("COPAL_KEYMAP", '{"label.sumbit": "ctrl+s"}')
    result = cli("label", "--annotator", "ana")
    assert result.exit_code == 2
    assert "label.sumbit" in result.stderr and "unknown binding id" in result.stderr


def test_a_collision_exits_2_naming_both(cli, initialised, monkeypatch):
    # `c` is the queue's "correct"; giving it to submit as well would make one key do two things.
    monkeypatch.setenv("COPAL_KEYMAP", '{"queue.submit": "c"}')
    result = cli("label", "--annotator", "ana")
    assert result.exit_code == 2
    assert "queue.submit" in result.stderr and "label.correct" in result.stderr


def test_a_good_keymap_is_accepted(initialised, monkeypatch):
    monkeypatch.setenv("COPAL_KEYMAP", '{"app.help": "f1"}')
    app = make_app(initialised, mode="label", annotator="ana")
    assert app.settings.keymap == {"app.help": "f1"}


def test_collision_with_an_app_key(initialised, monkeypatch):
    # ctrl+d opens the dashboard from anywhere (outside label mode); a screen binding remapped
    # onto it would shadow it on that screen.
    monkeypatch.setenv("COPAL_KEYMAP", '{"queue.submit": "ctrl+d"}')
    with pytest.raises(SettingsError, match="app.dashboard"):
        make_app(initialised, mode="label", annotator="ana")
