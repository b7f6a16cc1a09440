"""Checking `COPAL_KEYMAP` before the app starts: every binding id it names must exist, and no
remapped key may collide with another binding that is active at the same time.

Textual's own `set_keymap` silently ignores an id it does not know and lets a later binding
shadow an earlier one, so a typo in the keymap ("label.sumbit") or a key given twice would leave
an annotator with a key that does nothing. Both are configuration errors: `SettingsError`, one
line naming the id or the two colliding ids, exit status 2 from the CLI.

The bindings are read from the classes (the app, every screen and widget module of the TUI), not
from a running app, so the check costs nothing when no keymap is set and needs no terminal.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterable, Mapping
from typing import Any

from textual.binding import Binding

from copal_tui.tui.settings import SettingsError

# Keys that mean the same to the terminal (Textual's spellings of one key press).
_ALIASES = {"?": "question_mark", "esc": "escape", "return": "enter", "/": "slash"}


def _keys(spec: str) -> list[str]:
    return [_ALIASES.get(k.strip(), k.strip()) for k in spec.split(",") if k.strip()]


def _classes(app: type[Any]) -> list[type[Any]]:
    """The app class and every class with BINDINGS in the TUI's screens and widgets."""
    from copal_tui.tui import screens, widgets

    found: list[type[Any]] = [app]
    for package in (screens, widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for _name, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module.__name__ and cls.__dict__.get("BINDINGS"):
                    found.append(cls)
    return found


def _own(cls: type[Any]) -> list[Binding]:
    out = []
    for b in cls.__dict__.get("BINDINGS", []):
        if isinstance(b, Binding):
            out.append(b)
        elif isinstance(b, tuple) and len(b) >= 2:
            out.append(Binding(b[0], b[1]))
    return out


def _bindings(cls: type[Any]) -> list[Binding]:
    """The bindings a class has once its bases' are merged in, as Textual merges them (the
    labelling screens get their common keys from their base): base classes first, a class
    with `inherit_bindings=False` starting over."""
    from textual.dom import DOMNode

    out: list[Binding] = []
    for base in reversed(cls.__mro__):
        if isinstance(base, type) and issubclass(base, DOMNode):
            if not base._inherit_bindings:
                out.clear()
            out.extend(_own(base))
    return out if issubclass(cls, DOMNode) else _own(cls)


def check_keymap(keymap: Mapping[str, str], app: type[Any],
                 classes: Iterable[type[Any]] | None = None) -> None:
    """Raise SettingsError for an unknown binding id or a key that two active bindings share
    once the keymap is applied (within one screen or widget, or between it and `app`, the app
    class; `classes` replaces the screens' and widgets' classes)."""
    if not keymap:
        return
    classes = list(_classes(app) if classes is None else classes)
    known = {b.id for cls in classes for b in _bindings(cls) if b.id}
    unknown = sorted(set(keymap) - known)
    if unknown:
        raise SettingsError(f"COPAL_KEYMAP: unknown binding id(s) {', '.join(unknown)} (the keys "
                            "screen, ?, lists every id)")

    def effective(b: Binding) -> list[str]:
        return _keys(keymap[b.id] if b.id and b.id in keymap else b.key)

    app_cls = classes[0]
    app_keys: dict[str, Binding] = {}
    for b in _bindings(app_cls):
        for k in effective(b):
            app_keys.setdefault(k, b)
    for cls in classes:
        seen: dict[str, Binding] = {}
        for b in _bindings(cls):
            for k in effective(b):
                other = seen.get(k)
                if other is not None and other.id != b.id and (b.id in keymap
                                                               or other.id in keymap):
                    raise SettingsError(_collision(k, other, b, cls))
                seen[k] = b  # a subclass's binding replaces its base's on the same key
                if cls is app_cls:
                    continue
                shadowed = app_keys.get(k)
                if shadowed is not None and (b.id in keymap or shadowed.id in keymap):
                    raise SettingsError(_collision(k, shadowed, b, cls))


def _collision(key: str, a: Binding, b: Binding, cls: type[Any]) -> str:
    return (f"COPAL_KEYMAP: key {key!r} would do two things on {cls.__name__}: "
            f"{a.id or a.action} and {b.id or b.action}")
