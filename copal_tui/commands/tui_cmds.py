"""Interactive commands: `copal tui` (researcher), `copal label [--suite compass|traffic|
dialogue [--judge J]] [--campaign NAME] [--refresh]` (annotator, reviewer of judge mistakes),
`copal adjudicate` (adjudicator) and `copal serve` (the same app in a browser, behind one secret
URL per user; the server itself is copal_tui.serve).

The database is checked (exists, no pending migrations) before the terminal is taken over, so a
problem is one line on stderr rather than a broken screen.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING

import click

from copal_tui.commands.context import SuiteChoice, db_path, open_db
from copal_tui.serve import ServeConfigError
from copal_tui.serve.limits import ServeLimits  # light: the serve options' defaults

if TYPE_CHECKING:
    from store.db import Database


def _run(ctx: click.Context, mode: str, annotator: str | None, suite: str = "copal",
         judge: str | None = None, campaign: str | None = None,
         refresh: bool = False) -> None:
    # No cyclic garbage collection until the first screen is painted: the app turns it back
    # on then (`_collect_again` in the app says what it cost the start).
    gc.disable()
    try:
        _start(ctx, mode, annotator, suite, judge, campaign, refresh)
    finally:
        gc.enable()


def _start(ctx: click.Context, mode: str, annotator: str | None, suite: str,
           judge: str | None, campaign: str | None, refresh: bool) -> None:
    db = open_db(ctx)
    try:
        if judge is not None:
            from copal_tui.commands.suite_filters import check_filters

            check_filters(db, suite, {"judges": (judge,)})
        if campaign is not None:
            suite = _campaign_suite(db, campaign)
    finally:
        db.conn.close()
    from copal_tui.tui.app import make_app
    from store.db import StoreError

    app = make_app(db_path(ctx), mode=mode, annotator=annotator, suite=suite, judge=judge,
                   campaign=campaign, refresh=refresh)
    crash: BaseException | None = None
    try:
        app.run()
    except StoreError:
        raise  # the database failed under the app: the CLI's one line (copal_tui.tui.failure)
    except Exception as exc:  # noqa: BLE001 - Textual catches its own; this is a crash too
        import traceback

        traceback.print_exc()
        crash = exc
    # Textual keeps the exception that ended the app (its traceback is printed above) and
    # sets return code 1; a deliberate non-zero exit leaves its reason in `exit_note`.
    crash = crash or getattr(app, "_exception", None)
    code = 1 if crash is not None else (app.return_code or 0)
    if code:
        if crash is not None:
            first = (str(crash).strip().splitlines() or [""])[0]
            why = f"stopped on an error: {type(crash).__name__}: {first}"[:300]
        else:
            why = app.exit_note or f"exited with code {code}"
        click.echo(f"copal {ctx.info_name or mode}: {why}", err=True)
        ctx.exit(code)


def _campaign_suite(db: Database, name: str) -> str:
    from copal_tui.commands.choices import require_known
    from copal_tui.services.launch import campaign_names, campaign_suite

    require_known("--campaign", [name], campaign_names(db), "a campaign",
                  none_yet="`copal campaign create NAME` draws one")
    suite = campaign_suite(db, name)
    assert suite is not None, "the campaigns named are sampled ones, each of a suite"
    return suite




@click.command()
@click.pass_context
def tui(ctx: click.Context) -> None:
    """Browse worlds, items, responses, judgments and labels; run jobs; see the dashboard."""
    _run(ctx, "browse", None)


@click.command()
@click.option("--annotator", default=None, help="Your name (default: the OS user name).")
@click.option("--suite", type=SuiteChoice(), default="copal", show_default=True,
              help="What to label: COPAL contract items, COMPASS responses (refused or "
                   "answered, compliant or violating), dialogue (the error type of each "
                   "judge mistake on a dialogue turn), or traffic (a deployed chatbot's "
                   "de-identified pairs: policy category and error).")
@click.option("--judge", default=None,
              help="With --suite dialogue: review this judge's mistakes only.")
@click.option("--campaign", default=None,
              help="Label exactly this campaign's frozen sample (`copal campaign create`); "
                   "the suite follows from the campaign.")
@click.option("--refresh", is_flag=True,
              help="Let subjects added since you started (a pipeline run, an import) join "
                   "your default queue; without it your queue stays as it was frozen.")
@click.pass_context
def label(ctx: click.Context, annotator: str | None, suite: str, judge: str | None,
          campaign: str | None, refresh: bool) -> None:
    """The label queue (blind for COPAL, COMPASS and traffic)."""
    if judge is not None:
        from copal_tui.commands.suite_filters import refuse_filters

        refuse_filters(suite, {"judges": (judge,)})  # the suite's queue must draw by judge
    if campaign is not None and (judge is not None or suite != "copal" or refresh):
        raise click.UsageError("--campaign names the whole queue: it takes no --suite, "
                               "--judge or --refresh")
    _run(ctx, "label", annotator, suite, judge, campaign, refresh)


@click.command()
@click.option("--adjudicator", "annotator", default=None,
              help="Your name (default: the OS user name).")
@click.option("--suite", type=SuiteChoice(), default="copal", show_default=True,
              help="Whose disagreements: COPAL responses (annotators, or the reference and "
                   "the judge), or traffic pairs (annotators on category or error).")
@click.pass_context
def adjudicate(ctx: click.Context, annotator: str | None, suite: str) -> None:
    """Decide subjects where annotators disagree, or the reference and the judge disagree."""
    _require_adjudication(suite)
    _run(ctx, "adjudicate", annotator, suite)


def _require_adjudication(suite: str) -> None:
    """Exit 2 for a suite without adjudication, naming those with it."""
    from copal_tui.domain.suites import SUITES

    if SUITES[suite].adjudicate_screen is None:
        having = ", ".join(n for n, s in SUITES.items() if s.adjudicate_screen)
        raise click.BadParameter(f"suite {suite} has no adjudication (suites with one: "
                                 f"{having})", param_hint="--suite")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback puts the server on the network "
                   "(every request still needs a token).")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--public-url", default=None,
              help="The URL browsers use when it is not http://HOST:PORT (a tunnel to another "
                   "port, a wildcard --host); printed URLs and the Origin check use it.")
@click.option("--mode", type=click.Choice(["browse", "label", "adjudicate"]), default="browse",
              show_default=True)
@click.option("--suite", type=SuiteChoice(), default="copal", show_default=True,
              help="With --mode label: which label queue; with --mode adjudicate: whose "
                   "disagreements.")
@click.option("--annotator", "annotators", multiple=True,
              help="A user to print a URL for (repeatable): an annotator with --mode label "
                   "(required), an adjudicator with --mode adjudicate (default: one URL for "
                   "you, the operator).")
@click.option("--annotators-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A file of annotator names, one per line (# comments allowed).")
@click.option("--max-sessions-per-url", "sessions_per_token", type=click.IntRange(min=1),
              default=ServeLimits.sessions_per_token, show_default=True,
              help="App sessions (browser tabs, each an app process) one URL may have open; "
                   "one more gets a page saying why.")
@click.option("--max-sessions", "sessions_total", type=click.IntRange(min=1),
              default=ServeLimits.sessions_total, show_default=True,
              help="App sessions open at once, all URLs together.")
@click.option("--idle-minutes", type=click.FloatRange(min=0, min_open=True),
              default=ServeLimits.idle_close_s / 60, show_default=True,
              help="Close a session after this long without input from its browser.")
@click.option("--header-timeout", "header_timeout_s", type=click.FloatRange(min=0, min_open=True),
              default=ServeLimits.header_timeout_s, show_default=True,
              help="Seconds a connection has to send a request's headers (after it opens, and "
                   "between requests); then it is closed.")
@click.option("--max-connections", type=click.IntRange(min=1),
              default=ServeLimits.max_connections, show_default=True,
              help="Open connections at once; one more gets 503 and is closed.")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, public_url: str | None, mode: str,
          suite: str, annotators: tuple[str, ...], annotators_file: str | None,
          sessions_per_token: int, sessions_total: int, idle_minutes: float,
          header_timeout_s: float, max_connections: int) -> None:
    """Serve the app in a browser (textual-serve) behind one secret URL per user.

    Prints one URL per user (tab-separated after the name); its token is kept only hashed and
    only until the server stops. The app behind each URL runs as that URL's user.
    """
    try:
        limits = ServeLimits(sessions_per_token=sessions_per_token,
                             sessions_total=sessions_total, idle_close_s=idle_minutes * 60,
                             header_timeout_s=header_timeout_s, max_connections=max_connections)
    except ServeConfigError as exc:
        raise click.UsageError(str(exc)) from None
    open_db(ctx, write=mode != "browse").conn.close()
    if suite != "copal" and mode == "browse":
        raise click.UsageError("--suite only applies to --mode label or adjudicate")
    if mode == "adjudicate":
        _require_adjudication(suite)
    from copal_tui.serve.auth import is_wildcard, plan_grants, read_names_file

    if public_url is None and is_wildcard(host):
        raise click.UsageError(f"--host {host} listens everywhere: give --public-url, the "
                               "address browsers use (it is what the Origin check accepts)")
    try:
        from copal_tui.serve.server import CopalServer
    except ImportError:
        raise click.ClickException(
            "textual-serve is not installed (it is a dependency of copal: reinstall)") from None
    try:
        names = list(annotators)
        if annotators_file is not None:
            names += read_names_file(Path(annotators_file))
        grants = plan_grants(mode, names)
        server = CopalServer(db_path(ctx), mode=mode, suite=suite, host=host, port=port,
                             public_url=public_url, limits=limits)
    except ServeConfigError as exc:
        raise click.UsageError(str(exc)) from None
    for grant in grants:
        click.echo(f"{grant.user or 'operator'}\t{server.issue(grant)}")
    click.echo("copal serve: give each URL to its user only; they stop working when the server "
               "stops.", err=True)
    try:
        server.serve()
    except ServeConfigError as exc:  # raised before serving anything: the address is unusable
        raise click.UsageError(str(exc)) from None


COMMANDS = [tui, label, adjudicate, serve]
