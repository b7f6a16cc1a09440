"""Where the shipped data lives: `prompts/` and `sample_worlds/`.

In a wheel they are under `copal_tui/_data/` (see pyproject's force-include); in a source
checkout or editable install they sit at the repository root.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"copal data folder {name!r} not found (broken install?)")


def prompts_dir() -> Path:
    return data_dir("prompts")


def sample_worlds_dir() -> Path:
    return data_dir("sample_worlds")
