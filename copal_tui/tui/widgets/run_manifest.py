"""One run's record: counters, options, counts, errors, then the whole manifest as JSON.

Error reasons can quote a model's raw answer, so every value goes through `safe` (shown
literally, escapes stripped); nothing here is markup.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from copal_tui.tui.safe import one_line, safe

if TYPE_CHECKING:
    from copal_tui.services.jobs import RunDetail

OPTION_KEYS = ("worlds", "models", "judges", "modes", "generator", "budget", "variants",
               "concurrency")


def _value(v: Any) -> str:
    if v is None:
        return "all"  # only `worlds` is ever None: every world
    if isinstance(v, list):
        return ", ".join(str(x) for x in v) or "-"
    return str(v)


def manifest_text(run: RunDetail | None) -> Text:
    if run is None:
        return Text("Choose a run to see its manifest.", style="dim")
    out = Text()

    def line(label: str, value: str, style: str = "") -> None:
        out.append(f"{label:<12}", style="bold")
        out.append_text(safe(value, style=style))
        out.append("\n")

    line("run", run.id)
    line("stage", f"{run.stage}   status {run.status}")
    line("started", run.started_at)
    line("finished", run.finished_at or "-")
    line("counters", f"calls {run.calls}  cache hits {run.cache_hits}  "
                     f"failures {run.failures}  cost ${run.cost:.4f}")
    manifest = run.manifest
    if not isinstance(manifest, dict):
        out.append("manifest (unreadable):\n", style="bold red")
        out.append_text(safe(str(manifest)))
        return out
    opts = manifest.get("options") or {}
    for key in OPTION_KEYS:
        if key in opts:
            line(key, _value(opts[key]))
    counts = manifest.get("counts") or {}
    if counts:
        line("counts", "  ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    line("versions", f"copal {manifest.get('tool_version', '?')}  schema "
                     f"{manifest.get('schema_version', '?')}  litellm "
                     f"{manifest.get('litellm_version') or '-'}")
    errors = manifest.get("errors") or []
    total = manifest.get("error_count", len(errors))
    if errors:
        out.append(f"errors ({total}{', first 50 shown' if total > len(errors) else ''}):\n",
                   style="bold red")
        for err in errors:
            out.append("  ")
            out.append_text(safe(one_line(f"{err.get('unit', '?')}: {err.get('reason', '')}",
                                          300)))
            out.append("\n")
    out.append("manifest\n", style="bold")
    out.append_text(safe(json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True),
                         style="dim"))
    return out


class RunManifest(VerticalScroll):
    """Scrollable (focus it and use the arrows or page keys)."""

    DEFAULT_CSS = """
    RunManifest {
        height: 1fr;
        border: round $primary 40%;
        padding: 0 1;
    }
    RunManifest:focus {
        border: round $accent;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(manifest_text(None), id="run-manifest-text")

    def on_mount(self) -> None:
        self.border_title = "Manifest"

    def show(self, run: RunDetail | None) -> None:
        self.query_one("#run-manifest-text", Static).update(manifest_text(run))
        self.scroll_home(animate=False)
