"""Reading the public CompliBench layout: conversations and judge outputs, parsed and
checked into plain dataclasses. No SQL here (the importer stores them), no UI, no models.

A conversation file holds `assistant_guidelines` ("Category 1: Universal Compliance" {key:
text}, "Category 2: Intent Triggered Guidelines" {intent: {"Phase k": text}}, "Category 3:
Condition Triggered Guidelines" {key: text}), `message_list` (turns {turn_index, role, content},
assistant turns also {category, key, phase}), `mistakes` ({turn_index, guidance category,
guidance key, guideline_phase, guideline, evidence}: they override the tags of the same turn and
make it a violation) and optionally `cat2_overrides`/`cat3_overrides` (original vs modified
guideline text, kept as given). Its id is `<folder name>/<file stem>`, its domain the folder name.

A judge output file `<stem>_usage.json` (attempt 1) or `<stem>_usage_attempt<k>.json` (attempt
k) next to the conversation holds {turn_guidelines: [{turn_index, guideline_used:
{guidance_category, guidance_key, guideline_phase, is_violation, judge_reason}}]}.

Every problem is an ImportFailure naming the file and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copal_tui.domain.dialogue import CATEGORIES, Guideline, norm_category, norm_key, norm_phase
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.reading import read_document
from copal_tui.interchange.strict import loads_json

USAGE = re.compile(r"^(?P<stem>.+?)_usage(?:_attempt(?P<k>\d+))?$")
# The speakers of the layout; anything else (a typo, "system") has no place in the turn-level
# truth and is refused rather than stored as a third kind of turn.
ROLES = ("user", "assistant")
# The keys `parse_conversation` reads: a JSON object with neither is not a conversation.
CONVERSATION_KEYS = ("assistant_guidelines", "message_list")
_UNREAD = object()


@dataclass(frozen=True)
class GuidelineEntry:
    category: int
    key: str
    phase: int | None
    text: str


@dataclass(frozen=True)
class Turn:
    turn_index: int
    role: str
    content: str
    guideline: Guideline | None = None  # assistant turns only
    violation: bool = False
    guideline_text: str | None = None   # from a mistake: the (modified) guideline followed
    evidence: str | None = None


@dataclass
class Conversation:
    id: str
    domain: str
    path: Path
    guidelines: list[GuidelineEntry]
    turns: list[Turn]
    overrides: dict[str, Any] = field(default_factory=dict)
    raw_sha256: str = ""


@dataclass(frozen=True)
class JudgeTurn:
    turn_index: int
    guideline: Guideline | None
    violation: bool
    reason: str | None


@dataclass(frozen=True)
class JudgeOutput:
    conversation_id: str
    attempt: int
    path: Path
    turns: list[JudgeTurn]


def _load(path: Path) -> Any:
    try:
        # A conversation or judge output is one record: refused past the maximum record size.
        text = read_document(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailure(path, f"not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise ImportFailure(path, "empty file")
    try:
        return loads_json(text, path)
    except json.JSONDecodeError as exc:
        raise ImportFailure(path, f"not JSON ({exc.msg})", line=exc.lineno) from None


def _obj(path: Path, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ImportFailure(path, f"must be an object, not {type(value).__name__}", field=where)
    return value


def _text(path: Path, value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ImportFailure(path, f"must be text, not {type(value).__name__}", field=where)
    return value


def _guidelines(path: Path, doc: dict[str, Any]) -> list[GuidelineEntry]:
    out: list[GuidelineEntry] = []
    for name, entries in doc.items():
        where = f"assistant_guidelines.{name}"
        try:
            cat = norm_category(name)
        except ValueError as exc:
            raise ImportFailure(path, str(exc), field=where) from None
        assert cat is not None
        for key, value in _obj(path, entries, where).items():
            if cat == 2:
                for phase, text in _obj(path, value, f"{where}.{key}").items():
                    try:
                        n = norm_phase(phase)
                    except ValueError as exc:
                        raise ImportFailure(path, str(exc), field=f"{where}.{key}") from None
                    out.append(GuidelineEntry(2, key, n, _text(path, text,
                                                               f"{where}.{key}.{phase}")))
            else:
                out.append(GuidelineEntry(cat, key, None, _text(path, value, f"{where}.{key}")))
    return out


def _guideline(path: Path, where: str, category: Any, key: Any, phase: Any) -> Guideline:
    try:
        return Guideline.of(category, key, phase)
    except ValueError as exc:
        raise ImportFailure(path, str(exc), field=where) from None


def _index(path: Path, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ImportFailure(path, "turn_index must be an integer", field=where)
    return value


def conversation_id(path: Path) -> tuple[str, str]:
    """(id, domain) of a conversation file: `<folder name>/<file stem>` and the folder name."""
    domain = path.resolve().parent.name
    return f"{domain}/{path.stem}", domain


def parse_conversation(path: Path, data: Any = _UNREAD) -> Conversation:
    """The conversation in `path` (`data`: its JSON, when the caller has read it already)."""
    import hashlib

    data = _obj(path, _load(path) if data is _UNREAD else data, "(top level)")
    for required in ("assistant_guidelines", "message_list"):
        if required not in data:
            raise ImportFailure(path, "missing", field=required)
    guidelines = _guidelines(path, _obj(path, data["assistant_guidelines"],
                                        "assistant_guidelines"))
    known = {(g.category, norm_key(g.key), g.phase) for g in guidelines}
    mistakes: dict[int, dict[str, Any]] = {}
    for k, m in enumerate(data.get("mistakes") or []):
        m = _obj(path, m, f"mistakes[{k}]")
        mistakes[_index(path, m.get("turn_index"), f"mistakes[{k}].turn_index")] = m
    turns: list[Turn] = []
    seen: set[int] = set()
    messages = data["message_list"]
    if not isinstance(messages, list) or not messages:
        raise ImportFailure(path, "must be a non-empty list", field="message_list")
    for k, msg in enumerate(messages):
        where = f"message_list[{k}]"
        msg = _obj(path, msg, where)
        idx = _index(path, msg.get("turn_index"), f"{where}.turn_index")
        if idx in seen:
            raise ImportFailure(path, f"turn_index {idx} appears twice", field=where)
        seen.add(idx)
        role = _text(path, msg.get("role"), f"{where}.role")
        if role not in ROLES:
            raise ImportFailure(path, f"turn {idx} has the unknown role {role!r} (a turn is "
                                "'user' or 'assistant')", field=f"{where}.role")
        content = _text(path, msg.get("content", ""), f"{where}.content")
        if role != "assistant":
            turns.append(Turn(idx, role, content))
            continue
        m = mistakes.pop(idx, None)
        if m is not None:
            g = _guideline(path, f"mistakes[turn {idx}]", m.get("guidance category"),
                           m.get("guidance key"), m.get("guideline_phase"))
            turns.append(Turn(idx, role, content, g, True, m.get("guideline"),
                              m.get("evidence")))
            continue
        g = _guideline(path, where, msg.get("category"), msg.get("key"), msg.get("phase"))
        # Only workflow guidelines are looked up by phase (a Category 1 or 3 tag carries -1).
        if g.category is not None and (g.category, norm_key(g.key),
                                       g.phase if g.category == 2 else None) not in known:
            raise ImportFailure(path, f"guideline {CATEGORIES[g.category]} / {g.key} / phase "
                                f"{g.phase} is not in assistant_guidelines", field=where)
        turns.append(Turn(idx, role, content, g))
    if mistakes:
        raise ImportFailure(path, f"mistakes name turns that are not assistant turns: "
                            f"{sorted(mistakes)}", field="mistakes")
    cid, domain = conversation_id(path)
    overrides: dict[str, Any] = {k: data[k] for k in ("cat2_overrides", "cat3_overrides")
                                 if k in data}
    return Conversation(cid, domain, path, guidelines, sorted(turns, key=lambda t: t.turn_index),
                        overrides, hashlib.sha256(read_document(path)).hexdigest())


def judge_target(path: Path) -> tuple[str, int] | None:
    """(conversation id, attempt) of a judge output file, or None if the name is not one."""
    m = USAGE.match(path.stem)
    if m is None:
        return None
    domain = path.resolve().parent.name
    return f"{domain}/{m.group('stem')}", int(m.group("k") or 1)


def parse_judge_output(path: Path) -> JudgeOutput:
    target = judge_target(path)
    if target is None:
        raise ImportFailure(path, "a judge output is named <stem>_usage.json or "
                            "<stem>_usage_attempt<k>.json")
    data = _obj(path, _load(path), "(top level)")
    rows = data.get("turn_guidelines")
    if not isinstance(rows, list):
        raise ImportFailure(path, "must be a list", field="turn_guidelines")
    turns: list[JudgeTurn] = []
    seen: set[int] = set()
    for k, row in enumerate(rows):
        where = f"turn_guidelines[{k}]"
        row = _obj(path, row, where)
        idx = _index(path, row.get("turn_index"), f"{where}.turn_index")
        if idx in seen:
            raise ImportFailure(path, f"turn_index {idx} appears twice", field=where)
        seen.add(idx)
        used = _obj(path, row.get("guideline_used"), f"{where}.guideline_used")
        verdict = used.get("is_violation")
        if isinstance(verdict, str) and verdict.lower() in ("true", "false"):
            verdict = verdict.lower() == "true"
        if not isinstance(verdict, bool):
            raise ImportFailure(path, "is_violation must be true or false",
                                field=f"{where}.guideline_used.is_violation")
        has_guideline = any(used.get(f) not in (None, "") for f in
                            ("guidance_category", "guidance_key"))
        g = _guideline(path, f"{where}.guideline_used", used.get("guidance_category"),
                       used.get("guidance_key"), used.get("guideline_phase")) \
            if has_guideline else None
        reason = used.get("judge_reason")
        turns.append(JudgeTurn(idx, g, verdict, None if reason is None else str(reason)))
    cid, attempt = target
    return JudgeOutput(cid, attempt, path, turns)


def looks_like_conversation(data: Any) -> bool:
    """Whether a JSON document has the shape of a conversation: an object holding a
    conversation key, or a bare list of turns (objects with a role). Such a file is parsed, and
    refused when malformed; any other document (the release's manifests: {source_ablation,
    removed_ids, ...}) is not a conversation and is skipped."""
    if isinstance(data, dict):
        return any(k in data for k in CONVERSATION_KEYS)
    return isinstance(data, list) and bool(data) and all(
        isinstance(t, dict) and "role" in t for t in data)


def load_conversations(root: Path) -> tuple[list[Conversation], list[Path]]:
    """The conversations under a file or folder, sorted, and the files skipped as not
    conversations (readme files, manifests). A file named on its own must be a conversation.

    Judge outputs are left out silently (`--from complibench-judge` reads them), and so are
    dot files and folders (editor and OS droppings such as macOS `._x.json`).
    """
    if root.is_file():
        return [parse_conversation(root)], []
    if not root.is_dir():
        raise ImportFailure(root, "no such file or folder")
    found: list[Conversation] = []
    skipped: list[Path] = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or any(part.startswith(".") for part in p.relative_to(root).parts):
            continue
        if p.suffix != ".json":
            skipped.append(p)
        elif judge_target(p) is None:
            data = _load(p)
            if looks_like_conversation(data):
                found.append(parse_conversation(p, data))
            else:
                skipped.append(p)
    if not found:
        raise ImportFailure(root, "no conversation files (*.json) found"
                            + (f" ({len(skipped)} other file(s))" if skipped else ""))
    return found, skipped


def conversation_files(root: Path) -> list[Path]:
    """Conversation files under a file or folder (judge outputs and other files left out)."""
    return [c.path for c in load_conversations(root)[0]]


def judge_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise ImportFailure(root, "no such file or folder")
    files = sorted(p for p in root.rglob("*.json") if judge_target(p) is not None)
    if not files:
        raise ImportFailure(root, "no judge output files (*_usage*.json) found")
    return files
