"""User settings for the TUI (pydantic-settings): environment variables `COPAL_*`.

`COPAL_KEYMAP='{"label.submit": "ctrl+s", "app.help": "f1"}'` remaps any binding by its id;
`COPAL_OVERLAP=3` sets how many annotators label each response; `COPAL_BLIND=false` shows the
judge while labelling (off by default: annotators label blind).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="COPAL_", extra="ignore")

    keymap: dict[str, str] = Field(default_factory=dict, description="binding id -> keys")
    theme: str = "textual-dark"
    overlap: int = Field(default=2, ge=1, le=10)
    lease_minutes: float = Field(default=30, gt=0)
    blind: bool = True
    page_size: int = Field(default=100, ge=10, le=2000)
    min_width: int = 80
    min_height: int = 24
