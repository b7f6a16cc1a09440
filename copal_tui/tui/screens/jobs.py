"""The jobs screen: set up and start pipeline stages, watch the running job, cancel it, and read
past runs with their manifests.

The job itself lives in the app's JobManager (a thread worker calling run_stages with its own
connection and a cancel event), so leaving this screen does not stop it and coming back shows it
again. The screen only renders what the manager reports: one coalesced `JobUpdated` message at a
time. The UI thread never imports the runner, the stages or litellm.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Button, Header, Input, SelectionList, TabbedContent, TabPane

from copal_tui.services import jobs
from copal_tui.tui.job_manager import Job, JobError, JobManager, JobUpdated
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.job_form import JobForm
from copal_tui.tui.widgets.job_progress import JobProgressView
from copal_tui.tui.widgets.run_list import RunList
from copal_tui.tui.widgets.run_manifest import RunManifest
from copal_tui.tui.widgets.screen_commands import ScreenCommands


class JobsScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    # Short descriptions and `b` first so the footer shows every key at 80 columns (in a
    # field, where b types a letter, the footer shows esc instead).
    BINDINGS = [
        Binding("ctrl+g", "start_job", "Start", id="jobs.start"),
        # priority: works from any field (an Input would otherwise take ctrl+x as "cut").
        Binding("ctrl+x", "cancel_job", "Cancel", id="jobs.cancel", priority=True),
        Binding("ctrl+n", "tab('new')", "New job", id="jobs.new"),
        Binding("ctrl+o", "tab('runs')", "Runs", id="jobs.runs"),
        Binding("slash", "focus_filter", "Filter", show=False, id="jobs.filter"),
        Binding("ctrl+r", "reload_runs", "Reload", show=False, id="jobs.reload"),
        Binding("b,escape", "back", "Back", id="jobs.back"),
    ]
    DEFAULT_CSS = """
    JobsScreen TabbedContent {
        height: 1fr;
    }
    JobsScreen TabPane {
        padding: 0;
    }
    JobsScreen #run-list {
        height: 1fr;
    }
    JobsScreen #run-manifest {
        height: 1fr;
    }
    """

    def __init__(self, stages: list[str] | None = None, worlds: list[str] | None = None,
                 tab: str = "new") -> None:
        super().__init__()
        self.preset_stages = stages
        self.preset_worlds = worlds
        self.initial_tab = tab if tab in ("new", "runs") else "new"
        # run id -> last status seen, to reload the run list only when a run starts or ends.
        self._seen: dict[str, str] = {}
        self._announced: set[int] = set()

    @property
    def manager(self) -> JobManager:
        return JobManager.of(self.app)

    def compose(self) -> ComposeResult:
        choices = jobs.job_choices(self.app.db)  # type: ignore[attr-defined]
        yield Header()
        yield JobProgressView(id="job-progress")
        with TabbedContent(initial=self.initial_tab, id="jobs-tabs"):
            with TabPane("New job", id="new"):
                yield JobForm(worlds=choices.worlds, models=choices.models,
                              judges=choices.judges,
                              preset_stages=self.preset_stages,
                              preset_worlds=self.preset_worlds, id="job-form")
            with TabPane("Runs", id="runs"):
                yield RunList(page_size=self.app.settings.page_size,  # type: ignore[attr-defined]
                              id="run-list")
                yield RunManifest(id="run-manifest")
        yield Footer()

    def key_for(self, binding_id: str) -> str:
        """The key bound to `binding_id` now (after any keymap), as the footer shows it."""
        for active in self.active_bindings.values():
            if active.binding.id == binding_id:
                return self.app.get_key_display(active.binding)
        return "?"

    def on_mount(self) -> None:
        self.title = "copal \u00b7 jobs"
        self.manager.subscribe(self)
        latest = self.manager.latest()
        if latest is not None:
            if latest.final:
                self._announced.add(latest.id)  # told already, when it ended
            self._show(latest)
        self._focus_tab(self.initial_tab)
        self.call_after_refresh(self._name_start_key)

    def _name_start_key(self) -> None:
        # After the first refresh: the keymap is applied to the binding chain only by then.
        view = self.query_one(JobProgressView)
        view.start_key = self.key_for("jobs.start")
        view.show(view.job)

    def on_unmount(self) -> None:
        self.manager.unsubscribe(self)

    # ---------------------------------------------------------------- job updates

    def on_job_updated(self, message: JobUpdated) -> None:
        job = self.manager.snapshot(message.job_id, self)
        if job is not None:
            self._show(job)

    def _show(self, job: Job) -> None:
        self.query_one(JobProgressView).show(job)
        changed = False
        for p in job.progress.values():
            if self._seen.get(p.run_id) != p.status:
                self._seen[p.run_id] = p.status
                changed = True
        if changed:
            # A run row appeared or finished: the list and the open manifest are stale.
            self.query_one(RunList).reload()
        if job.final and job.id not in self._announced:
            self._announced.add(job.id)
            if job.status == "done":
                self.notify(f"Job {job.id} done")
            else:
                self.notify(f"Job {job.id} {job.status}",
                            severity="warning" if job.status == "cancelled" else "error")

    # ---------------------------------------------------------------- actions

    def action_start_job(self) -> None:
        """Start the job the form describes; if the form is wrong, say which field and why
        (the error stays until that field is fixed) and focus the field. Nothing starts."""
        form = self.query_one(JobForm)
        try:
            stages, opts = form.request()
            job = self.manager.start(stages, opts)
        except JobError as exc:
            self.query_one(TabbedContent).active = "new"  # the form, if on the runs tab
            form.show_error(exc)
            self.app.bell()
            return
        form.show_error("")
        self._show(self.manager.snapshot(job.id) or job)

    def action_cancel_job(self) -> None:
        job = self.manager.cancel()
        if job is None:
            self.notify("No job is running.", severity="warning")

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name
        self._focus_tab(name)

    def _focus_tab(self, name: str) -> None:
        target = self.query_one(RunList).table if name == "runs" else \
            self.query_one("#job-stages", SelectionList)
        # Focus now and again after the layout settles: hiding the other pane moves focus to
        # the next visible widget (the runs filter), which would otherwise win.
        target.focus()
        self.call_after_refresh(target.focus)

    def action_focus_filter(self) -> None:
        self.action_tab("runs")
        self.call_after_refresh(lambda: self.query_one("#runs-filter", Input).focus())

    def action_reload_runs(self) -> None:
        self.query_one(RunList).reload()

    def action_back(self) -> None:
        # Never pop down to the app's blank default screen (the bottom of the stack).
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    # ---------------------------------------------------------------- widget events

    @on(Button.Pressed, "#job-start")
    @on(JobForm.Submitted)
    def _start_pressed(self) -> None:
        # The Start button, or Enter in a field: starts only if the form is valid.
        self.action_start_job()

    @on(RunList.Chosen)
    def _run_chosen(self, event: RunList.Chosen) -> None:
        run = None if event.run_id is None else jobs.run_detail(
            self.app.db, event.run_id)  # type: ignore[attr-defined]
        self.query_one(RunManifest).show(run)
