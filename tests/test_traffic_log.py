"""Reading a deployed chatbot's log: each layout's pairs, and bad input named by file, line
and reason (nothing read past it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.traffic_log import MAX_TEXT_CHARS, Fields, read_pairs


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_pairs_with_field_names_of_ones_own(tmp_path: Path):
    log = _write(tmp_path, "log.jsonl", json.dumps({"q": "hi", "a": "hello"}) + "\n\n"
                 + json.dumps({"q": "x", "a": "y"}) + "\n")
    got = [(p.line, p.query, p.response) for p in read_pairs(log, "auto", Fields("q", "a"))]
    assert got == [(1, "hi", "hello"), (3, "x", "y")]


def test_each_assistant_turn_of_a_transcript_is_a_pair_with_its_context(tmp_path: Path):
    messages = [{"role": "system", "content": "s"}, {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
                {"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2"}]
    log = _write(tmp_path, "chats.jsonl", json.dumps({"messages": messages}) + "\n")
    pairs = list(read_pairs(log))
    # The greeting answers no query; each answer's context is every turn before its query.
    assert [(p.query, p.response, p.turn) for p in pairs] == [("q1", "a1", 3), ("q2", "a2", 5)]
    assert pairs[1].context == [("system", "s"), ("assistant", "hello"), ("user", "q1"),
                                ("assistant", "a1")]


def test_csv_rows_and_their_first_lines(tmp_path: Path):
    log = _write(tmp_path, "log.csv", 'id,query,response\n1,"two\nlines",ok\n2,b,c\n')
    assert [(p.line, p.query) for p in read_pairs(log)] == [(2, "two\nlines"), (4, "b")]


@pytest.mark.parametrize(("name", "content", "where", "why"), [
    ("a.jsonl", '{"query": "q", "response": "r"}\n{"query": "q"}\n', ":2:", "response"),
    ("b.jsonl", '{"query": "q", "response": "r"}\nnot json\n', ":2:", "not valid JSON"),
    ("c.jsonl", '{"query": 3, "response": "r"}\n', ":1:", "must be text"),
    ("d.jsonl", "", "d.jsonl:", "no record"),
    ("e.jsonl", b'{"query": "\xff", "response": "r"}\n', ":1:", "not UTF-8"),
    ("f.jsonl", b'\x00\x01binary', ":1:", "binary"),
    ("g.jsonl", json.dumps({"query": "x" * (MAX_TEXT_CHARS + 1), "response": "r"}) + "\n",
     ":1:", "over the limit"),
    ("h.csv", "query,answer\nq,a\n", ":1:", "'response'"),
    ("i.csv", "query,response\nq,a,extra\n", ":2:", "columns"),
    ("j.jsonl", '{"messages": [{"role": "user"}]}\n', ":1:", "content"),
])
def test_bad_input_names_the_line_and_the_reason(tmp_path: Path, name, content, where, why):
    log = _write(tmp_path, name, content)
    with pytest.raises(ImportFailure) as failed:
        list(read_pairs(log))
    assert where in str(failed.value) and why in str(failed.value), str(failed.value)
