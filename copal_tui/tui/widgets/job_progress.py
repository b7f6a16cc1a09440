"""The live view of one job: a line per stage with a bar, done/total, failures, calls, cache hits,
cost and status, under a line naming the job.

Everything shown is built as Rich `Text` (model names and error messages go through `safe`): a
model name typed by the user or an exception message is never read as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from copal_tui.pipeline.base import Progress
from copal_tui.tui.job_manager import Job
from copal_tui.tui.safe import one_line, safe

BAR_WIDTH = 10
STATUS_STYLE = {"running": "bold", "starting": "bold", "cancelling": "bold yellow",
                "done": "green", "failed": "bold red", "cancelled": "yellow",
                "interrupted": "yellow"}
# Marks beside the status so it never depends on colour alone.
STATUS_MARK = {"done": "\u2713", "failed": "\u2717", "cancelled": "\u25a0",
               "cancelling": "\u2026", "running": "\u25b6", "starting": "\u2026"}


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    if total <= 0:
        return "\u2591" * width
    filled = min(width, round(width * done / total))
    return "\u2588" * filled + "\u2591" * (width - filled)


# Fixed-width columns (75 cells: fits the panel at 80 columns); the header names them once.
HEADER = (f"{'stage':<8} {'status':<11} {'progress':<10} {'done':>9} {'fail':>5} {'calls':>6} "
          f"{'cache hits':>10} {'cost':>9}")


def stage_line(p: Progress, label: str | None = None) -> Text:
    line = Text(f"{label or p.stage:<8} ", style="bold")
    status = f"{STATUS_MARK.get(p.status, '')}{p.status}" if label is None else ""
    line.append(f"{status:<11} ", style=STATUS_STYLE.get(p.status, ""))
    line.append(bar(p.done, p.total) if label is None else " " * BAR_WIDTH,
                style="cyan" if p.status == "running" else "")
    line.append(f" {f'{p.done}/{p.total}':>9} ")
    line.append(f"{p.failures:>5}", style="bold red" if p.failures else "")
    line.append(f" {p.calls:>6} {p.cache_hits:>10} {f'${p.cost:.4f}':>9}")
    return line


def job_text(job: Job | None, start_key: str = "ctrl+g") -> Text:
    if job is None:
        return Text(f"No job in this session. Set one up under New job; {start_key} starts it.",
                    style="dim")
    head = Text(f"Job {job.id} ", style="bold")
    head.append(f"{STATUS_MARK.get(job.status, '')}{job.status}",
                style=STATUS_STYLE.get(job.status, ""))
    head.append(f"   {' > '.join(job.stages)}")
    who = [f"worlds {', '.join(job.opts.worlds) if job.opts.worlds else 'all'}"]
    if job.opts.models and "respond" in job.stages:
        who.append(f"models {', '.join(job.opts.models)}")
    if job.opts.judges and "judge" in job.stages:
        who.append(f"judges {', '.join(job.opts.judges)} ({', '.join(job.opts.copal.modes)})")
    lines = [head, safe(one_line(" \u00b7 ".join(who), 150), style="dim")]
    started = [job.progress[s] for s in job.stages if s in job.progress]
    if started:
        lines.append(Text(HEADER, style="dim"))
        lines += [stage_line(p) for p in started]
    if len(started) > 1:
        lines.append(stage_line(Progress(
            "total", "", done=sum(p.done for p in started), total=sum(p.total for p in started),
            failures=sum(p.failures for p in started), calls=sum(p.calls for p in started),
            cache_hits=sum(p.cache_hits for p in started), cost=sum(p.cost for p in started),
            status=job.status), label="total"))
    queued = [s for s in job.stages if s not in job.progress]
    if queued:
        lines.append(Text(f"{'queued' if not job.final else 'not run'}: {', '.join(queued)}",
                          style="dim"))
    if job.error:
        lines.append(safe(one_line(job.error, 300), style="bold red"))
    return Text("\n").join(lines)


class JobProgressView(Static):
    """Shows the job it is given (`show(job)`); renders nothing live by itself."""

    DEFAULT_CSS = """
    JobProgressView {
        height: auto;
        max-height: 9;
        padding: 0 1;
        border: round $primary 40%;
        border-title-color: $text;
        overflow-y: auto;
    }
    """

    start_key = "ctrl+g"

    def on_mount(self) -> None:
        self.border_title = "Job"
        self.show(None)

    def show(self, job: Job | None) -> None:
        self.job = job
        self.update(job_text(job, self.start_key))
