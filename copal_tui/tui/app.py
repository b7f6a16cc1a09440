"""The copal Textual app: one app, three entry modes (browse, label, adjudicate).

Screens are registered by name and imported lazily (`SCREENS`), so starting the app loads only
what the first screen needs; litellm is never imported here (jobs import it in their worker
thread). The app owns one SQLite connection for the UI thread; workers open their own through
`worker_db`, which the app interrupts when it exits. The queue screens write through the app's
`writes` (copal_tui.tui.busy.WriteQueue), so a busy database never freezes the screen nor loses
a label, and every way of quitting goes through it.

A database that fails under the app (a corrupt page, the file gone, a failing disk) ends it with
the command line's one-line error and exit 2, never Textual's traceback: `_handle_exception`
and `run` (copal_tui.tui.failure).

Labelling is blind (`copal label`, any suite, terminal or browser): in label mode the app opens
no other screen at all, neither from a key, the palette nor a screen (`action_open` and
`check_action`), because every other screen shows the judge, other annotators' labels,
aggregates or adjudication. COPAL_BLIND=false only lets the label queue itself show the judge.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import threading
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from copal_tui.domain.suites import SUITES, load
from copal_tui.domain.suites import suite as suite_named
from copal_tui.tui.busy import WriteQueue
from copal_tui.tui.failure import database_failure
from copal_tui.tui.settings import Settings
from store.db import Database, StoreError, StoreRefused, connect
from store.schema_state import require_current

if TYPE_CHECKING:
    from textual.pilot import Pilot
    from textual.widget import AwaitMount


# Seconds a pilot waits at most for the first screen to mount.
FIRST_SCREEN_WAIT = 30.0


def _collect_again() -> None:
    """After the first screen is painted: Python's cyclic garbage collector back on, with
    everything loaded so far (textual, rich, copal's modules, objects that live as long as the
    app) moved out of its reach by `gc.freeze`. `copal tui` turns it off while it starts: on the
    100k benchmark store its 39 collections there (one over the whole heap) took 50-80 ms of
    the first paint and freed about 3,600 small objects. A no-op when the collector is on
    (tests, the Pilot)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()

# name -> "module:Class" (imported on first use): the app's own screens; a suite's screens
# are its descriptor's (`copal_tui.domain.suites`, see `screen_ref`).
SCREENS: dict[str, str] = {
    "jobs": "copal_tui.tui.screens.jobs:JobsScreen",
    "dashboard": "copal_tui.tui.screens.dashboard:DashboardScreen",
    "help": "copal_tui.tui.screens.help:HelpScreen",
    "too_small": "copal_tui.tui.screens.too_small:TooSmallScreen",
}

START = {"browse": "worlds", "label": "label", "adjudicate": "adjudicate"}
# `copal label --suite X` opens suite X's label screen (its descriptor's `label_screen`; the
# COPAL queue is the default).

# Screens reachable from the command palette, with a description.
PALETTE = [
    ("worlds", "Worlds", "browse worlds, their policies, clauses, compositions, items, runs"),
    ("label", "Label queue", "label responses against their contracts (blind)"),
    ("compass_label", "COMPASS label queue",
     "label COMPASS responses: refused or answered, compliant or not (blind)"),
    ("dialogue_review", "Dialogue review queue",
     "name the error type of each judge mistake on a dialogue turn"),
    ("dialogues", "Dialogues",
     "browse judged dialogues: turns, the truth per turn, each judge attempt's predictions"),
    ("adjudicate", "Adjudicate", "decide responses where annotators or the judge disagree"),
    ("jobs", "Jobs", "start, watch and cancel pipeline stages in the background"),
    ("dashboard", "Dashboard", "error matrix, facet atlas, paired contrast, judge validity"),
    ("cases", "Responses where judge and humans disagree",
     "the primary judge's fp and fn against the human reference; enter opens the response"),
]


def screen_ref(name: str) -> str:
    """The "module:Class" of the screen called `name`: the app's own, or a suite's."""
    if name in SCREENS:
        return SCREENS[name]
    for spec in SUITES.values():
        if name in spec.screens:
            return spec.screens[name]
    raise KeyError(name)


def screen_class(name: str) -> type[Screen[Any]]:
    found: type[Screen[Any]] = load(screen_ref(name))
    return found


class CopalApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "copal"
    BINDINGS = [
        Binding("question_mark", "help", "Keys", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("ctrl+w", "open('worlds')", "Worlds", show=False, id="app.worlds"),
        Binding("ctrl+j", "open('jobs')", "Jobs", show=False, id="app.jobs"),
        Binding("ctrl+d", "open('dashboard')", "Dashboard", show=False, id="app.dashboard"),
        # Not ctrl+g: the jobs screen binds it to starting a job.
        Binding("ctrl+l", "open('dialogues')", "Dialogues", show=False, id="dialogues.show"),
    ]

    def __init__(self, db_path: Path, *, mode: str = "browse", annotator: str | None = None,
                 settings: Settings | None = None, suite: str = "copal",
                 judge: str | None = None, campaign: str | None = None,
                 refresh: bool = False) -> None:
        super().__init__()
        spec = suite_named(suite)  # ValueError for an unknown suite
        self.label_screen = spec.label_screen
        self.adjudicate_screen = spec.adjudicate_screen
        self.db_path = Path(db_path)
        self.mode = mode
        self.suite = suite
        self.review_judge = judge  # `copal label --suite dialogue --judge J`: one judge only
        # `copal label --campaign NAME`: that campaign's frozen sample (its suite is `suite`).
        self.campaign = campaign
        # `copal label --refresh`: new subjects join this annotator's default queue once.
        self.refresh_queue = refresh
        self.annotator = annotator or _default_annotator()
        self.settings = settings or Settings.from_env()
        if self.settings.keymap:
            # An unknown binding id or a key given to two bindings is an error, not ignored.
            # Loaded only here: the check imports every screen, which start-up must not.
            from copal_tui.tui.keymap import check_keymap

            check_keymap(self.settings.keymap, type(self))
        self._db: Database | None = None
        self._too_small = False
        # The first Resize after the app's own start-up one: see `_on_resize`.
        self._start_echo = True
        self._started = False
        self._when_started: list[Callable[[], object]] = []
        # The first screen's mount, once it is pushed (see `on_mount` and `run_test`).
        self._first_pushed = asyncio.Event()
        self._first_mount: AwaitMount | None = None
        self._worker_conns: set[sqlite3.Connection] = set()
        self._worker_lock = threading.Lock()
        self.writes = WriteQueue(self)
        self.exit_note: str | None = None  # why the app exited non-zero (the CLI prints it)
        # The database failed under the app (copal_tui.tui.failure): `run` raises it.
        self.store_failure: StoreError | None = None

    @property
    def db(self) -> Database:
        """The UI thread's connection (workers must open their own with store.db.connect)."""
        if self._db is None:
            self._db = connect(self.db_path)
            require_current(self._db)
        return self._db

    def on_mount(self) -> None:
        self.theme = self.settings.theme
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        suite = f" {self.suite}" if self.mode != "browse" and self.suite != "copal" else ""
        if self.mode == "label" and self.campaign:
            suite += f" campaign {self.campaign}"
        self.sub_title = f"{self.db_path.name} - {self.mode}{suite}" + (
            f" as {self.annotator}" if self.mode != "browse" else "")
        start = {"label": self.label_screen,
                 "adjudicate": self.adjudicate_screen}.get(self.mode) or START[self.mode]
        kwargs = {"judge": self.review_judge} if start == "dialogue_review" else {}
        # Pushed once Textual has started: Textual runs `on_mount` inside its start-up batch
        # and throws away what is drawn before the batch ends, so a screen pushed here was laid
        # out and drawn once for nothing, and its rows waited for the batch to end (about 60
        # ms of the first paint on the 100k benchmark store).
        self.when_started(lambda: self._open_first(start, kwargs))

    def _open_first(self, start: str, kwargs: dict[str, Any]) -> None:
        try:
            self._first_mount = self.push_screen(self.make_screen(start, **kwargs))
        finally:
            self._first_pushed.set()
        self._check_size()  # after: the "too small" screen goes on top of the first one

    # A test's pilot (`run_test`) and an auto-pilot (`run_async`, the snapshots') start when
    # Textual has started, which is now before the first screen is mounted: they wait for it,
    # as they did when it mounted during the start. A real start has neither.

    async def _first_screen_mounted(self) -> None:
        # Mounted, then refreshed once, so what its mount left for after the first refresh (a
        # focus, say) has run before the first key. Bounded, and given up when the app fails
        # or stops first: the pilot then sees that instead of waiting.
        loop = asyncio.get_running_loop()
        end = loop.time() + FIRST_SCREEN_WAIT
        while not self._first_pushed.is_set():  # polled: a start may end without it
            if not self.is_running or self._exception_event.is_set() or loop.time() > end:
                return
            await asyncio.sleep(0.01)

        async def mounted_and_refreshed() -> None:
            if self._first_mount is not None:
                await self._first_mount
            refreshed = asyncio.Event()
            self.call_after_refresh(refreshed.set)
            await refreshed.wait()

        waits = {asyncio.ensure_future(mounted_and_refreshed()),
                 asyncio.ensure_future(self._exception_event.wait())}
        await asyncio.wait(waits, timeout=max(0.0, end - loop.time()),
                           return_when=asyncio.FIRST_COMPLETED)
        for wait in waits:
            wait.cancel()

    @asynccontextmanager
    async def run_test(self, **kwargs: Any) -> AsyncGenerator[Pilot[None], None]:
        async with super().run_test(**kwargs) as pilot:
            await self._first_screen_mounted()
            yield pilot

    async def run_async(self, **kwargs: Any) -> None:
        auto_pilot = kwargs.get("auto_pilot")
        if auto_pilot is not None:
            async def after_first_screen(pilot: Pilot[None]) -> None:
                await self._first_screen_mounted()
                await auto_pilot(pilot)

            kwargs["auto_pilot"] = after_first_screen
        return await super().run_async(**kwargs)

    def run(self, **kwargs: Any) -> Any:
        """Textual's `run`, then the database's failure, if it ended the app, raised as the
        one-line error the command line prints (every entry point runs the app this way)."""
        result = super().run(**kwargs)
        if self.store_failure is not None:
            raise self.store_failure
        return result

    def _handle_exception(self, error: Exception) -> None:
        # The one place Textual hands every unhandled exception (a handler's, a timer's, a
        # worker's): a damaged or unreadable database ends the app without a traceback.
        failure = database_failure(error, self.db_path)
        if failure is None:
            super()._handle_exception(error)
            return
        if self.store_failure is None:  # the first says why; later ones follow from it
            self.store_failure = failure
            self._return_code = 2 if isinstance(failure, StoreRefused) else 1
            self._exception_event.set()  # a pilot waiting for the first screen stops
            self._close_messages_no_wait()

    def when_started(self, callback: Callable[[], object]) -> None:
        """Run `callback` once Textual has started the app (at once if it has): see
        `on_mount`."""
        if self._started:
            callback()
        else:
            self._when_started.append(callback)

    def on_ready(self) -> None:
        # Ready is handled by the app's own message loop, which starts after the batch.
        self._started = True
        self.call_after_refresh(_collect_again)
        callbacks, self._when_started = self._when_started, []
        for callback in callbacks:
            callback()

    @contextmanager
    def worker_db(self) -> Iterator[Database]:
        """A connection for one thread worker (never the UI thread's), closed afterwards.

        If the app exits while the worker's query runs, `exit` interrupts it: a long aggregate
        (world statistics over 100,000 responses, a report) would otherwise keep the process
        alive after the screen is gone, because Python joins worker threads at exit.
        """
        db = connect(self.db_path)
        with self._worker_lock:
            self._worker_conns.add(db.conn)
        try:
            yield db
        finally:
            with self._worker_lock:
                self._worker_conns.discard(db.conn)
            db.conn.close()

    def exit(self, result: Any = None, return_code: int = 0,
             message: Any = None) -> None:
        with self._worker_lock:
            for conn in self._worker_conns:
                conn.interrupt()  # sqlite3 allows this from another thread
        super().exit(result, return_code, message)

    def on_unmount(self) -> None:
        if self._db is not None:
            self._db.conn.close()
            self._db = None

    def make_screen(self, name: str, **kwargs: Any) -> Screen[Any]:
        return screen_class(name)(**kwargs)

    def action_open(self, name: str, **kwargs: Any) -> None:
        if self.mode == "label":
            self.notify("Labelling is blind: other screens open in `copal tui`, not while "
                        "labelling.", severity="warning")
            return
        if self.mode != "browse" and name in ("worlds", "dashboard", "jobs", "dialogues",
                                              "cases"):
            # Annotators label blind: aggregate error rates would reveal the judge.
            self.notify(f"{name} is available in `copal tui`, not while labelling",
                        severity="warning")
            return
        self.push_screen(self.make_screen(name, **kwargs))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Hidden and inert while labelling (ctrl+w/j/d/l): see action_open.
        return not (action == "open" and self.mode == "label")

    async def action_quit(self) -> None:
        """Every way of quitting (q, ctrl+q, the palette) waits for unsaved labels first."""
        self.writes.quit()

    def action_help(self) -> None:
        if not isinstance(self.screen, screen_class("help")):
            self.push_screen(self.make_screen("help"))

    # ---------------------------------------------------------------- terminal size

    async def _on_resize(self, event: events.Resize) -> None:
        # Textual's own handler stops the Resize event (an `on_resize` here never runs after
        # start-up), so hook the private handler. Textual calls the handler of every class in
        # the MRO, so App's runs after this one by itself: calling it here as well stored the
        # event twice and every screen was laid out and repainted twice per resize.
        if self._start_echo and self._size is not None:  # not the app's own first Resize
            self._start_echo = False
            if event.size == self._size:
                # The terminal driver reports, as it starts, the size the app has already laid
                # out with; Textual would lay every screen out and repaint it in full again,
                # just as the first page of rows arrives. Later same-size reports are kept:
                # one is how the screen is repainted after a suspend (ctrl+z, fg).
                event.stop()
                event.prevent_default()  # App's handler is not called
                return
        if self.is_running and len(self.screen_stack) > 1:
            # Checked once the new size is laid out.
            self.call_after_refresh(self._check_size)

    def _check_size(self) -> None:
        small = self.size.width < self.settings.min_width or \
            self.size.height < self.settings.min_height
        if small and not self._too_small:
            self._too_small = True
            self.push_screen(self.make_screen("too_small"))
        elif not small and self._too_small:
            self._too_small = False
            if isinstance(self.screen, screen_class("too_small")):
                self.pop_screen()

    # ---------------------------------------------------------------- command palette

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.mode != "label":  # blind labelling: no way to any other screen
            for name, title, help_text in PALETTE:
                yield SystemCommand(title, help_text, lambda n=name: self.action_open(n))
        yield SystemCommand("Keys", "show every key binding of this screen", self.action_help)


def _default_annotator() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user database (containers): a neutral name
        return "annotator"


def make_app(db_path: Path, **kwargs: Any) -> CopalApp:
    """The app factory used by the CLI, the tests and the snapshot tests."""
    return CopalApp(db_path, **kwargs)
