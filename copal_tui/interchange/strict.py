"""Strict parsing shared by every importer: bounded nesting, no duplicate keys, no lone
surrogates (what is parsed is read with the maximum record size as its bound: `reading.py`).

The parsers recurse once per nesting level (json's scanner, PyYAML's composer in Python,
libyaml's composer in C), so a file nested 100,000 levels deep ends in a RecursionError or, in
C, can crash the interpreter. No file the importers read needs more than a few levels, so the
depth is checked before the recursive step and anything deeper than `MAX_DEPTH` is refused like
any other malformed input.

Both parsers also keep the last of two equal keys without a word, which would quietly drop a
policy, a guideline or a field. One helper (`first_duplicate`) finds the repeat for JSON objects
and YAML mappings alike; the error names the key and the line of its second occurrence.

A JSON `\\ud800` escape (YAML's too, in the pure-Python parser) decodes to a lone surrogate: half
of a UTF-16 pair, not a character, which no UTF-8 text (and so no SQLite text) can hold. It is
refused like any malformed input, naming where it is (`lone_surrogate`).

Problems become `ImportFailure`s (exit 2 in the CLI), except JSON syntax errors: each importer
words those itself, so `json.JSONDecodeError` propagates from `loads_json`.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from copal_tui.interchange.errors import ImportFailure, field_name

# The record bound is reading.py's; importable from here too, beside the other input rules.
from copal_tui.interchange.reading import MAX_RECORD_BYTES as MAX_RECORD_BYTES
from copal_tui.interchange.reading import record_lines as record_lines

# Generous: the deepest legitimate input, a conversation of the public CompliBench release,
# nests 7 levels; sample worlds and records 3.
MAX_DEPTH = 64

# ------------------------------------------------------------------ lone surrogates

# A lone surrogate in parsed text comes from an escape (UTF-8 input cannot hold one): JSON's
# \uD800 to \uDFFF, YAML's \u and \U. A document without such an escape is not walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]|\\U0000[dD][89a-fA-F]")
SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def may_hold_surrogate(text: str) -> bool:
    return _SURROGATE_ESCAPE.search(text) is not None


def lone_surrogate(value: Any) -> tuple[tuple[str | int, ...], str] | None:
    """(where, why) of the first lone surrogate in a parsed document: the keys and indexes of
    the string holding it (a name holding one: where its value sits), and the reason."""
    todo: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while todo:
        where, v = todo.pop()
        if isinstance(v, str):
            if m := _SURROGATE.search(v):
                return where, _surrogate_reason(m.group())
        elif isinstance(v, dict):
            for k, item in reversed(list(v.items())):
                if isinstance(k, str) and (m := _SURROGATE.search(k)):
                    return (*where, k), _surrogate_reason(m.group())
                todo.append(((*where, k), item))
        elif isinstance(v, list):
            todo.extend(((*where, i), item) for i, item in reversed(list(enumerate(v))))
    return None


def _surrogate_reason(ch: str) -> str:
    return (f"holds U+{ord(ch):04X}, a lone surrogate (half of a UTF-16 pair, not a "
            "character), which text cannot store")


# libyaml parses about four times faster than pure-Python PyYAML, which matters for a world of
# 30k policies; tests switch this off to check the pure-Python path too.
USE_LIBYAML: bool = bool(getattr(yaml, "__with_libyaml__", False))


class DuplicateKey(Exception):
    def __init__(self, key: Any, line: int | None = None, first: int | None = None) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


def first_duplicate(keys: Iterable[Any]) -> int | None:
    """Index of the first key equal to an earlier one, or None."""
    seen: set[Any] = set()
    for i, k in enumerate(keys):
        try:
            if k in seen:
                return i
            seen.add(k)
        except TypeError:
            continue  # an unhashable YAML key: the YAML constructor reports it itself
    return None


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for json.loads that refuses a repeated name."""
    # dict() and len() are C: a repeat shows as a shorter dict, and only then is it looked for
    # (this hook runs for every object of every record of an import).
    out = dict(pairs)
    if len(out) != len(pairs):
        i = first_duplicate(k for k, _ in pairs)
        raise DuplicateKey(pairs[i or 0][0])
    return out


# One decoder for every call: json.loads with a hook builds a new JSONDecoder each time, which
# cost more than the parse of a short record.
_DECODER = json.JSONDecoder(object_pairs_hook=unique_object)
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
# The scanner alone, for callers that check what surrounds the value themselves (a bulk load
# scanning line after line); the depth bound is theirs to keep.
SCAN = _SCAN


# ------------------------------------------------------------------ JSON

# Strings are skipped whole so brackets and quotes inside them do not count; JSON strings
# cannot hold a raw newline, so a newline token is always a line break.
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}\n,]')


def loads_json(text: str, path: Path | str, line: int | None = None) -> Any:
    """json.loads with the depth bound and duplicate names refused.

    `line` is the file line `text` sits on (one JSONL record); None for a whole file, whose
    lines are then counted in `text`.
    """
    deep = _too_deep(text)
    if deep is not None:
        raise ImportFailure(path, f"nested deeper than {MAX_DEPTH} levels",
                            line=line if line is not None else deep)
    if text.startswith("\ufeff"):  # what json.loads says; the shared decoder does not check
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        obj = _decode(text)
    except DuplicateKey as exc:
        key, where = exc.key, line
        if where is None:
            found = _duplicate_line(text)
            if found is not None:
                where, key = found
        raise ImportFailure(path, f"name {key!r} appears twice in one object", line=where,
                            field=str(key)) from None
    if may_hold_surrogate(text):
        bad = lone_surrogate(obj)
        if bad is not None:
            m = _SURROGATE_ESCAPE.search(text)
            where = line if line is not None or m is None else text.count("\n", 0, m.start()) + 1
            raise ImportFailure(path, bad[1], line=where, field=field_name(bad[0]) or None)
    return obj


_JSON_SPACE = " \t\n\r"


def _decode(text: str) -> Any:
    """`_DECODER.decode`, calling its C scanner directly: the two Python layers around it
    cost a third of the parse of a short record. Anything but one clean value (nothing, or
    more after it) goes through `decode` itself, for its error."""
    start = len(text) - len(text.lstrip(_JSON_SPACE)) if text[:1] in _JSON_SPACE else 0
    try:
        obj, end = _SCAN(text, start)
    except StopIteration:
        return _DECODER.decode(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return _DECODER.decode(text)
    return obj


def _too_deep(text: str) -> int | None:
    """Line where JSON nesting first exceeds MAX_DEPTH, or None."""
    # str.count is C-fast; most records and files have too few brackets to need the scan.
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth, line = 0, 1
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()[0]
        if c == "\n":
            line += 1
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif c in "]}":
            depth -= 1
    return None


def _duplicate_line(text: str) -> tuple[int, str] | None:
    """(line, name) of the first repeated name in a JSON document that json.loads accepted.

    Only called once a repeat is known to exist: object_pairs_hook sees no positions.
    """
    stack: list[set[str] | None] = []  # a set of names per open object, None per array
    line, prev = 1, ""
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        c = tok[0]
        if c == "\n":
            line += 1
            continue
        if c == "{":
            stack.append(set())
        elif c == "[":
            stack.append(None)
        elif c in "]}":
            if stack:
                stack.pop()
        elif c == '"' and stack and stack[-1] is not None and prev in ("{", ","):
            name = json.loads(tok)
            if name in stack[-1]:
                return line, name
            stack[-1].add(name)
        prev = c
    return None


# ------------------------------------------------------------------ YAML


class _TooDeep(Exception):
    def __init__(self, line: int | None) -> None:
        super().__init__(line)
        self.line = line


def _key(loader: Any, node: yaml.Node) -> Any:
    # A plain string key is its own text; only other keys (`yes`, `1`, `~`) need the
    # constructor, which would cost a third of the parse of a large world if used for all.
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
        return node.value
    return loader.construct_object(node, deep=True)


def _check_mapping(loader: Any, node: yaml.MappingNode) -> None:
    # Merge keys (`<<: *base`) may legitimately be overridden by the mapping's own keys; only
    # the keys written in the mapping itself must be unique.
    own = [k for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"]
    keys = [_key(loader, k) for k in own]
    i = first_duplicate(keys)
    if i is not None:
        first = own[keys.index(keys[i])]
        raise DuplicateKey(keys[i], own[i].start_mark.line + 1, first.start_mark.line + 1)


class _NoDuplicates:
    """Loader mixin: a mapping with a repeated key is an error, not a silent overwrite."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            _check_mapping(self, node)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class _PyLoader(_NoDuplicates, yaml.SafeLoader):
    """Pure-Python loader whose composer stops at MAX_DEPTH, before the recursion limit."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        # Only collections nest (and recurse); a scalar or an alias is a leaf.
        if not self.check_event(yaml.CollectionStartEvent):
            return super().compose_node(parent, index)
        if self._depth >= MAX_DEPTH:
            raise _TooDeep(self.peek_event().start_mark.line + 1)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_CSafeLoader: Any = getattr(yaml, "CSafeLoader", None)
# libyaml's composer is C: its depth is checked beforehand by `_c_depth`.
_CLoader: Any = None if _CSafeLoader is None else type("_CLoader", (_NoDuplicates, _CSafeLoader),
                                                      {})


def _c_depth(text: str) -> None:
    """libyaml composes nodes by C recursion, which no Python limit guards: walk the parse
    events first (libyaml's parser keeps its own stack) and stop at the first level too deep."""
    loader = _CSafeLoader(text)
    depth = 0
    try:
        while loader.check_event():
            ev = loader.get_event()
            if isinstance(ev, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _TooDeep(None if ev.start_mark is None else ev.start_mark.line + 1)
            elif isinstance(ev, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        loader.dispose()


@contextmanager
def paused_gc() -> Iterator[None]:
    """Cyclic garbage collection off while a large document is parsed.

    Parsing allocates hundreds of thousands of objects that all stay alive, and every collection
    walks them again for nothing, so parse time grows faster than the document with the
    collector on (measured in BENCHMARKS.md, "Large imports"). Nothing leaks: a cycle made
    meanwhile (a recursive YAML alias) is collected once the collector is back on.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_yaml(text: str, path: Path | str) -> tuple[Any, yaml.Node | None]:
    """The data of a one-document YAML text and its node tree (for error lines)."""
    libyaml = USE_LIBYAML and _CLoader is not None
    try:
        with paused_gc():
            if libyaml:
                _c_depth(text)
            loader = _CLoader(text) if libyaml else _PyLoader(text)
            try:
                node = loader.get_single_node()
                data = None if node is None else loader.construct_document(node)
            finally:
                loader.dispose()
    except _TooDeep as exc:
        raise ImportFailure(path, f"bad YAML: nested deeper than {MAX_DEPTH} levels",
                            line=exc.line) from None
    except DuplicateKey as exc:
        raise ImportFailure(path, f"bad YAML: key {exc.key!r} appears twice in one mapping "
                                  f"(first at line {exc.first})", line=exc.line,
                            field=str(exc.key)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1
        raise ImportFailure(path, f"bad YAML: {exc.problem or exc}", line=line) from None
    except yaml.YAMLError as exc:
        raise ImportFailure(path, f"bad YAML: {exc}") from None
    return data, node
