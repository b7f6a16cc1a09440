"""A fourth suite, as a new suite would be written: a descriptor and the modules it names,
nothing else in copal edited. "Policy review": an annotator reads one policy of a world and
says whether it is clear enough to ground (a subject is "world/policy", a label `PolicyReview`).

It has no stages, prompts or report sections of its own; its table is COPAL's `policies`.
`tests/test_fourth_suite.py` registers it and drives copal's own CLI, queue and app."""

from __future__ import annotations

import hashlib

import click
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from copal_tui.domain.annotation.payloads import LabelPayload
from copal_tui.domain.suites import Suite
from copal_tui.services.annotation.suites import Filters, Rules
from store.annotation.campaigns import Candidate
from store.db import Database, StoreError, connect

NAME = "policy_review"


class PolicyReview(LabelPayload):
    """The label: is the policy clear enough to ground, and why not."""

    clear: bool
    note: str | None = None


class PolicyReviewRules(Rules[PolicyReview]):
    """Subjects are the policies, by world then position; what was shown is the policy text."""

    name = NAME

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        worlds = set(filters.worlds)
        return [Candidate(subject=f"{world}/{pid}", stratum=world) for world, pid in db.execute(
            "SELECT world_id, id FROM policies ORDER BY world_id, position").fetchall()
            if not worlds or world in worlds]

    def require(self, db: Database, subject: str) -> None:
        if self._text(db, subject) is None:
            raise StoreError(f"unknown policy {subject!r}")

    def label(self, db: Database, subject: str,
              label: PolicyReview) -> tuple[PolicyReview, str | None]:
        text = self._text(db, subject)
        if text is None:
            raise StoreError(f"unknown policy {subject!r}")
        return label, hashlib.sha256(text.encode("utf-8")).hexdigest()

    @staticmethod
    def _text(db: Database, subject: str) -> str | None:
        world, _, pid = subject.partition("/")
        row = db.execute("SELECT text FROM policies WHERE world_id = ? AND id = ?",
                         [world, pid]).fetchone()
        return None if row is None else str(row[0])


class PolicyReviewScreen(Screen[None]):
    """The suite's label screen (the test only opens it)."""

    def compose(self) -> ComposeResult:
        yield Static("Policy review", id="policy-review")


@click.command("policy-review-count")
@click.pass_context
def count_command(ctx: click.Context) -> None:
    """How many policies there are to review (a command the suite adds to `copal`)."""
    db = connect(ctx.obj["db_path"])
    click.echo(f"{db.execute('SELECT COUNT(*) FROM policies').fetchone()[0]} policies")


SPEC = Suite(
    name=NAME, title="Policy review", short="policy review", tables=("policies",),
    commands={"policy-review-count": f"{__name__}:count_command"},
    subject="a policy of a world (world_id/policies.id)",
    payload=f"{__name__}:PolicyReview", annotation=f"{__name__}:PolicyReviewRules",
    label_screen=NAME, screens={NAME: f"{__name__}:PolicyReviewScreen"},
)
