"""Prompt templates: loading `prompts/<task>.md`, rendering model messages, the task trailer.

This module owns the text every model sees and the machine-readable trailer that ends the user
message of every structured task:

    COPAL-TASK: <task>
    INPUT:
    ```json
    <input as json.dumps(indent=2, ensure_ascii=False, sort_keys=True)>
    ```

Real models read the trailer as their input; the offline engine finds task and input with
`parse_trailer`. A template's version is the sha256 of its file bytes (recorded in run
manifests and in the call cache key), so editing a prompt invalidates cached answers.

Untrusted text (policy text, queries, chatbot responses) only ever travels inside the JSON of
the trailer; the templates refer to it as data. Two deliberate exceptions: the target chatbot's
system prompt, which by design carries the world context and the policy inventory, and a task
with a layout (a suite's `prompt_layouts`), whose user message lays its input out as text
blocks because the reference it reproduces does (CompliBench's judge sees the guideline
document and the conversation as text). Such a template has no trailer; its placeholders are
the layout's fields, filled by `layout.values(input)`, and `parse_layout` reads a rendered
message back (the offline engine's way in).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from copal_tui import resources
from copal_tui.domain.suites import SUITES, load
from copal_tui.domain.taxonomy import Pattern

CHATBOT_TASK = "chatbot_system"
# Target-chatbot texts: rendered from world fields by render_chatbot, never with a trailer.
# chatbot_explicit_refusal is the block the COMPASS `explicit-refusal` variant appends to the
# base system prompt.
CHATBOT_TASKS: tuple[str, ...] = (CHATBOT_TASK, "chatbot_explicit_refusal")
# Every task: the target-chatbot texts every suite shares, then each suite's own as its
# descriptor names them (copal_tui.domain.suites).
TASKS: tuple[str, ...] = CHATBOT_TASKS + tuple(
    task for suite in SUITES.values() for task in suite.prompts)
STRUCTURED_TASKS: tuple[str, ...] = tuple(t for t in TASKS if t not in CHATBOT_TASKS)
# task -> "module:attribute" of its layout (a text-block user message, no trailer).
LAYOUTS: dict[str, str] = {task: ref for suite in SUITES.values()
                           for task, ref in suite.prompt_layouts.items()}

# Placeholders a template may use. Structured templates get nothing derived from untrusted
# text except through $trailer (JSON, at the very end of the user message); only the chatbot
# template interpolates world fields, by design.
_STRUCTURED_FIELDS = frozenset({"task", "trailer"})
_CHATBOT_FIELDS = frozenset({"name", "industry", "use_case", "context", "policies", "query"})

CHATBOT_HEADERS: tuple[str, ...] = (
    "## Role and service context",
    "## Policies",
    "## Limits",
    "## Response actions",
)

# Pattern definitions as the templates print them (a test checks they agree). The facet
# list the templates print is taxonomy.FACET_DEFINITIONS, the same text the pipeline passes
# as `facet_definition`, so a model sees one definition per facet.
PATTERN_DEFINITIONS: dict[Pattern, str] = {
    Pattern.SCOPE_RESTRICTION: (
        "one clause licenses part of the request (PERMIT or DISCLOSE) while another "
        "prohibits or withholds a nested or neighbouring part of it (PROHIBIT or WITHHOLD); "
        "correct handling answers the licensed part and leaves out the restricted part."
    ),
    Pattern.PREREQUISITE_GATING: (
        "content or help is licensed (PERMIT or DISCLOSE) but only once a prerequisite is met "
        "(REQUIRE_GATE: verification, consent, a reference, an eligibility check); correct "
        "handling asks for the prerequisite first and gives the gated part only after it."
    ),
    Pattern.SELECTIVE_DISCLOSURE: (
        "one record or answer mixes fields that may be revealed (DISCLOSE) with fields that "
        "must be held back (WITHHOLD); correct handling releases the licensed fields and "
        "withholds the protected ones."
    ),
    Pattern.WORKFLOW_TRANSFER: (
        "the default path would continue the conversation (PERMIT) but the situation requires "
        "a handoff to a named team, channel or procedure (ROUTE); correct handling switches "
        "to that route and stops the default path."
    ),
}


class TemplateError(ValueError):
    """A template file is malformed or a render request is invalid."""


class Layout(Protocol):
    """How a task's input becomes its user message's text blocks, and back: `fields` are the
    template's placeholders, `end` what follows the template's last line."""

    fields: tuple[str, ...]
    end: str

    def values(self, input: Mapping[str, Any]) -> dict[str, str]: ...

    def read(self, values: Mapping[str, str]) -> dict[str, Any]: ...


def layout(task: str) -> Layout | None:
    ref = LAYOUTS.get(task)
    return None if ref is None else load(ref)


@dataclass(frozen=True)
class Template:
    task: str
    text: str
    version: str  # sha256 hex of the file bytes
    system: str = field(init=False)
    user: str = field(init=False)

    def __post_init__(self) -> None:
        system, user = _split_sections(self.task, self.text)
        chatbot = self.task in CHATBOT_TASKS
        laid_out = layout(self.task)
        allowed = (_CHATBOT_FIELDS if chatbot else _STRUCTURED_FIELDS if laid_out is None
                   else frozenset(laid_out.fields))
        for name, section in (("system", system), ("user", user)):
            tpl = string.Template(section)
            if not tpl.is_valid():
                raise TemplateError(f"{self.task}: invalid $placeholder in [{name}] section")
            unknown = set(tpl.get_identifiers()) - allowed
            if unknown:
                raise TemplateError(
                    f"{self.task}: unknown placeholder(s) {', '.join(sorted(unknown))} "
                    f"in [{name}] section (allowed: {', '.join(sorted(allowed))})"
                )
        # The offline engine and the brief rely on the trailer being the very end.
        if laid_out is not None:
            found = string.Template(user).get_identifiers()
            if found != list(laid_out.fields):
                raise TemplateError(f"{self.task}: the [user] section must hold the layout's "
                                    f"fields once each, in order: {', '.join(laid_out.fields)}")
        elif not chatbot and not user.endswith("$trailer"):
            raise TemplateError(f"{self.task}: the [user] section must end with $trailer")
        # The chatbot's user message is the test query verbatim, nothing added.
        if chatbot and user != "$query":
            raise TemplateError(f"{self.task}: the [user] section must be exactly $query")
        object.__setattr__(self, "system", system)
        object.__setattr__(self, "user", user)


def _split_sections(task: str, text: str) -> tuple[str, str]:
    """Split a template into its [system] and [user] sections (marker lines on their own)."""
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() in ("[system]", "[user]")]
    names = [lines[i].strip() for i in marks]
    if names != ["[system]", "[user]"]:
        raise TemplateError(
            f"{task}: expected one [system] line then one [user] line, found {names or 'none'}"
        )
    if any(line.strip() for line in lines[: marks[0]]):
        raise TemplateError(f"{task}: text before the [system] line")
    system = "\n".join(lines[marks[0] + 1 : marks[1]]).strip()
    user = "\n".join(lines[marks[1] + 1 :]).strip()
    if not system or not user:
        raise TemplateError(f"{task}: empty [system] or [user] section")
    return system, user


def _path(task: str) -> Path:
    # Resolved on every call, through the module attribute, so tests can point elsewhere.
    if task not in TASKS:
        raise TemplateError(f"unknown prompt task {task!r} (known: {', '.join(TASKS)})")
    return resources.prompts_dir() / f"{task}.md"


def template(task: str) -> Template:
    """Load one template. The file is read on every call (a few KB), so an edit is never
    missed; parsing is memoised on the bytes because the pipeline renders thousands of calls."""
    return _parsed(task, _path(task).read_bytes())


@functools.lru_cache(maxsize=64)
def _parsed(task: str, raw: bytes) -> Template:
    return Template(task=task, text=raw.decode("utf-8"), version=hashlib.sha256(raw).hexdigest())


def versions() -> dict[str, str]:
    """sha256 of every template file, by task (recorded in run manifests)."""
    return {task: hashlib.sha256(_path(task).read_bytes()).hexdigest() for task in TASKS}


def dump_input(input: Mapping[str, Any]) -> str:
    """The canonical JSON of a task input, exactly as it appears in the trailer."""
    return json.dumps(input, indent=2, ensure_ascii=False, sort_keys=True)


def trailer(task: str, input: Mapping[str, Any]) -> str:
    return f"COPAL-TASK: {task}\nINPUT:\n```json\n{dump_input(input)}\n```"


# The trailer must close the message. JSON dumped with indent=2 never puts "COPAL-TASK:" or a
# bare ``` at the start of a line (strings are escaped onto one line), so the last line that
# starts with "COPAL-TASK: " is the real trailer even when the input quotes a fake one.
_TRAILER_AT = re.compile(r"^COPAL-TASK: ", re.MULTILINE)
_TRAILER = re.compile(r"COPAL-TASK: ([A-Za-z0-9_.-]+)\nINPUT:\n```json\n(.*)\n```\s*", re.DOTALL)


def parse_trailer(text: str) -> tuple[str, dict[str, Any]] | None:
    """Find the task and input in a user message; None when there is no valid trailer."""
    starts = [m.start() for m in _TRAILER_AT.finditer(text)]
    for start in reversed(starts):
        m = _TRAILER.fullmatch(text, start)
        if m is None:
            continue
        try:
            value = json.loads(m.group(2))
        except ValueError:
            return None
        return (m.group(1), value) if isinstance(value, dict) else None
    return None


def render(
    task: str, input: Mapping[str, Any], *, using: Template | None = None
) -> list[dict[str, str]]:
    """Messages for a structured task. Pass `using` to render from a template loaded once
    (so the text matches the version recorded for the run)."""
    if task in CHATBOT_TASKS:
        raise TemplateError("the chatbot prompt is rendered with render_chatbot()")
    if not isinstance(input, Mapping):
        raise TemplateError(f"{task}: input must be a JSON object, got {type(input).__name__}")
    tpl = using or template(task)
    if tpl.task != task:
        raise TemplateError(f"template for {tpl.task!r} passed to render({task!r})")
    laid_out = layout(task)
    if laid_out is not None:
        # substitute() is single-pass: a "$..." inside a block is never expanded.
        return [{"role": "system", "content": tpl.system},
                {"role": "user", "content": string.Template(tpl.user).substitute(
                    laid_out.values(input)) + laid_out.end}]
    values = {"task": task, "trailer": trailer(task, input)}
    # substitute() is single-pass: a "$..." inside the input JSON is never expanded.
    return [
        {"role": "system", "content": string.Template(tpl.system).substitute(values)},
        {"role": "user", "content": string.Template(tpl.user).substitute(values)},
    ]


def parse_layout(system: str, user: str) -> tuple[str, dict[str, Any]] | None:
    """Task and input of a message pair rendered through a layout: the task whose template has
    exactly this system text, its input read back from the blocks; None when none matches.
    The first block ends where the text after it first appears, each later one where the text
    after it last appears (so only the first block may not contain the text that follows it)."""
    for task in LAYOUTS:
        tpl = template(task)
        if tpl.system != system:
            continue
        laid_out = layout(task)
        assert laid_out is not None
        pattern = _layout_pattern(tpl.user + laid_out.end)
        m = pattern.fullmatch(user)
        return (task, laid_out.read(m.groupdict())) if m else None
    return None


@functools.lru_cache(maxsize=16)
def _layout_pattern(text: str) -> re.Pattern[str]:
    parts = re.split(r"\$(\w+)", text)  # literal, name, literal, name, ..., literal
    regex = re.escape(parts[0])
    for k in range(1, len(parts), 2):
        regex += f"(?P<{parts[k]}>.*{'?' if k == 1 else ''})" + re.escape(parts[k + 1])
    return re.compile(regex, re.DOTALL)


def _one_line(text: str) -> str:
    # A policy is one list line; folding its newlines also stops a policy from forging a
    # "## ..." header that the offline reference bots would parse as a new block.
    return " ".join(str(text).split())


def policy_lines(policies: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"- {_one_line(p['id'])} ({_one_line(p['kind'])}): {_one_line(p['text'])}"
             for p in policies]
    return "\n".join(lines) if lines else "(no policies)"


def render_chatbot(
    world: Mapping[str, Any],
    policies: Sequence[Mapping[str, Any]],
    query: str,
    *,
    using: Template | None = None,
) -> list[dict[str, str]]:
    """The target chatbot's messages: four-block system prompt, then the query verbatim.
    With `using` a chatbot_explicit_refusal template, the system message is that block."""
    tpl = using or template(CHATBOT_TASK)
    if tpl.task not in CHATBOT_TASKS:
        raise TemplateError(f"template for {tpl.task!r} passed to render_chatbot()")
    try:
        values = {
            "name": _one_line(world["name"]),
            "industry": _one_line(world["industry"]),
            # The template adds the full stop after the use case.
            "use_case": _one_line(world["use_case"]).rstrip("."),
            "context": str(world["context"]).strip("\n"),
            "policies": policy_lines(policies),
            "query": query,
        }
    except KeyError as exc:
        raise TemplateError(f"chatbot prompt: world or policy lacks field {exc}") from None
    return [
        {"role": "system", "content": string.Template(tpl.system).substitute(values)},
        {"role": "user", "content": string.Template(tpl.user).substitute(values)},
    ]
