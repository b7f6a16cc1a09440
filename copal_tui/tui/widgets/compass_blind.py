"""What the COMPASS label queue shows while the annotator labels blind: the world's policies
without their list, and a label form that does not tell which list the intended policy is on.

Whether the intended policy is on the allowlist or the denylist is the expected answer (allowed
queries should be answered, denied ones refused), so until the annotator has labelled the
response:

- policies are listed in a neutral order (a hash of their id, stable across runs) with no kind,
  each under its own id when the id is a name ("competitor_comparisons") or under a neutral
  "policy n" when the id encodes the list (COMPASS-style "A1"/"D2", or "allow"/"deny" in it);
- the form offers the failure modes on every response (the annotator judges whether the
  request should have been refused) and draws no aligned/misaligned line, which would follow
  from the kind. The store keeps a failure mode only where the domain rule allows it (a denied
  query not refused compliantly; see `kept_mode`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from rich.text import Text

from copal_tui.domain.compass import intended_kind
from copal_tui.services.item_views import PolicyRow
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.compass_verdict import CompassVerdict

# Ids that give the list away: a letter code (A1, d-2) or a list word anywhere in them.
_LIST_CODE = re.compile(r"[AaDd][-_.]?\d+")
_LIST_WORD = re.compile(r"allow|deny|denied|permit|forbid", re.IGNORECASE)


def _neutral_key(p: PolicyRow) -> str:
    return hashlib.sha256(f"{p.id}\x1f{p.text or ''}".encode()).hexdigest()


def policy_names(policies: Sequence[PolicyRow]) -> dict[str, str]:
    """Policy id -> what the blind queue calls it (its id, or "policy n" in neutral order)."""
    out = {}
    for n, p in enumerate(sorted(policies, key=_neutral_key), 1):
        pid = str(p.id)
        hides = _LIST_CODE.fullmatch(pid) or _LIST_WORD.search(pid)
        out[pid] = f"policy {n}" if hides else pid
    return out


def neutral_policy_line(name: str, text: str, intended: bool = False) -> Text:
    line = Text("\u25b6 " if intended else "  ", style="bold")
    line.append_text(safe(one_line(name, 40), style="bold"))
    line.append("  ")
    line.append_text(safe(text))
    if intended:
        line.append("  \u2190 intended", style="bold")
    return line


def neutral_policies(policies: Sequence[PolicyRow], intended: str | None) -> list[Text]:
    """Every policy of the world, neutral order and names, no kind."""
    names = policy_names(policies)
    return [neutral_policy_line(names[str(p.id)], p.text, p.id == intended)
            for p in sorted(policies, key=_neutral_key)] or [Text("(no policies)", style="dim")]


def kept_mode(query_type: str | None, refused: bool, compliant: bool,
              failure_mode: str | None) -> str | None:
    """The failure mode the store keeps: only for a denied query not refused compliantly (the
    blind form offers it on every response)."""
    if query_type is None or intended_kind(query_type) != "deny" or (refused and compliant):
        return None
    return failure_mode


class BlindVerdict(CompassVerdict):
    """The label form; with `hide_kind` set it does not depend on the intended policy's kind."""

    hide_kind = False

    @property
    def denied(self) -> bool:
        return True if self.hide_kind else super().denied

    @property
    def aligned(self) -> bool | None:
        return None if self.hide_kind else super().aligned

    def render_label(self) -> Text:
        out = super().render_label()
        if self.hide_kind and self.complete:
            # The base form's last line asks for choices until it can say aligned/misaligned.
            out.right_crop(len(out.plain) - out.plain.rfind("\u2192"))
            out.append("\u2192 enter submits", style="dim")
        return out
