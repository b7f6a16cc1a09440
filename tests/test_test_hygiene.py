"""The tests themselves: every test checks something, no fixed sleep stands in for waiting on an
event, and no assertion measures wall-clock time.

Each file `tests/*.py` is parsed with `ast` (nothing is imported or run) and three rules apply:

- `no-assertion`: a test function must assert: an `assert` statement on something other than
  a constant (`assert True` checks nothing; `assert snap_compare(...)`
  for a snapshot: the fixture returns whether it matched, it does not fail by itself),
  `pytest.raises` / `warns` / `fail`, an `assert*` method, a `raise AssertionError`, or a call
  to a helper of the test modules that does one of these (followed transitively);
- `sleep-then-assert`: `time.sleep(x)`, `asyncio.sleep(x)` or a Pilot's `pause(x)` with a
  delay (a positive literal, or any name or expression: `sleep(DELAY)` waits just as blindly)
  followed by an `assert`, directly or after plain statements that do not wait (reading a
  row, then asserting on it, is the same bet): what the assert needs may or may not have
  happened by then, so such a test passes or fails with the machine's load. Poll the condition
  in a bounded loop or wait on an event instead;
- `clock-assertion`: an `assert` comparing a value taken from a clock (`time.time()`,
  `time.monotonic()`, `time.perf_counter()`, an event loop's `time()`, or a variable computed
  from one): a duration is a benchmark's business (`benchmarks/`), a test on a shared machine
  must not depend on it. The give-up check of a polling loop (an assert inside a loop that also
  sleeps) is not a measurement and is allowed.

Exceptions are listed in ALLOWED with the reason; an entry that no longer matches a finding
fails too, so the list cannot outlive what it excuses.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# (file, function, rule) -> why the finding is justified. Keep each reason specific.
#
# Empty on purpose. The one candidate was test_llm_http.py's Retry-After test (a retry must
# wait at least the server's delay); it now asserts the delay the client chose, and the gap
# between the two requests' arrivals as the stub recorded them, a lower bound that a slow
# machine can only widen. Its rpm test asserts the waits the limiter asked for on a frozen
# clock, and its timeout test the answer that was used, not how long the call took.
ALLOWED: dict[tuple[str, str, str], str] = {}

CLOCK_FUNCTIONS = {"time", "monotonic", "perf_counter", "time_ns", "monotonic_ns",
                   "perf_counter_ns"}
SLEEPS = {"sleep", "pause"}
ASSERTING_CALLS = {"raises", "warns", "fail", "deprecated_call"}


@dataclass(frozen=True)
class Finding:
    file: str
    function: str
    rule: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.function}: {self.rule}"


# ------------------------------------------------------------------ helpers over the AST


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_clock_call(node: ast.AST) -> bool:
    """`time.monotonic()` and friends, a bare imported `monotonic()`, or `<loop>.time()`."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in CLOCK_FUNCTIONS - {"time"}
    if not isinstance(func, ast.Attribute) or func.attr not in CLOCK_FUNCTIONS:
        return False
    owner = func.value
    if isinstance(owner, ast.Name):
        return owner.id == "time" or "loop" in owner.id.lower()
    # asyncio.get_running_loop().time() / get_event_loop().time()
    return (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Attribute | ast.Name)
            and (_call_name(owner) or "").endswith("_loop"))


def _delay(call: ast.Call) -> bool:
    """A sleep or pause with a delay: a positive number literal, or a name or expression
    (whatever its value, it stands in for waiting on something). sleep(0) and a bare pause()
    only yield to the loop."""
    if _call_name(call) not in SLEEPS:
        return False
    args = list(call.args) + [k.value for k in call.keywords if k.arg in ("delay", "seconds")]
    if not args:
        return False
    if isinstance(args[0], ast.Constant):
        return isinstance(args[0].value, int | float) and args[0].value > 0
    return True


WAIT_WORDS = ("sleep", "pause", "wait", "until", "join", "settle")


def _waits(stmt: ast.stmt) -> bool:
    """Whether a statement may wait for something: a block (a loop, a branch, a `with`), an
    `await`, or a call named like a wait. Only statements that do not wait may sit between a
    sleep and the assert it stands in for."""
    if not isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign):
        return True
    for node in ast.walk(stmt):
        if isinstance(node, ast.Await):
            return True
        if isinstance(node, ast.Call) and any(w in (_call_name(node) or "").lower()
                                              for w in WAIT_WORDS):
            return True
    return False


def _after_sleep(block: list[ast.stmt]) -> Iterator[ast.Assert]:
    """Each assert reached from a sleep of the block through statements that do not wait."""
    for i, stmt in enumerate(block):
        call = _statement_call(stmt)
        if call is None or not _delay(call):
            continue
        for nxt in block[i + 1:]:
            if isinstance(nxt, ast.Assert):
                yield nxt
                break
            if _waits(nxt):
                break


def _checks_something(node: ast.Assert) -> bool:
    return not isinstance(node.test, ast.Constant)


def _statement_call(stmt: ast.stmt) -> ast.Call | None:
    """The call of an expression statement (`f(...)` or `await f(...)`), if it is one."""
    if not isinstance(stmt, ast.Expr):
        return None
    value = stmt.value.value if isinstance(stmt.value, ast.Await) else stmt.value
    return value if isinstance(value, ast.Call) else None


def _statement_lists(nodes: list[ast.AST]) -> Iterator[list[ast.stmt]]:
    for child in nodes:
        for name in ("body", "orelse", "finalbody"):
            block = getattr(child, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and the methods of module-level classes."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (n for n in node.body
                        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


# ------------------------------------------------------------------ rule: no-assertion


class Modules:
    """Every test module's functions by name, and what each module imports from the others,
    so a call to a helper can be followed to the helper's body."""

    def __init__(self, sources: dict[str, str]) -> None:
        # Keyed by module stem ("tui_label_support"), as the imports name them.
        self.trees = {name.removesuffix(".py"): ast.parse(src, filename=name)
                      for name, src in sources.items()}
        self.defs = {name: {f.name: f for f in _functions(tree)}
                     for name, tree in self.trees.items()}
        self.imports: dict[str, dict[str, tuple[str, str | None]]] = {}
        for name, tree in self.trees.items():
            # local name -> (module stem, function name or None for a whole module)
            table: dict[str, tuple[str, str | None]] = {}
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module in ("tests", None):
                    for alias in node.names:  # from tests import support_module
                        table[alias.asname or alias.name] = (alias.name, None)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    stem = node.module.removeprefix("tests.")
                    if node.module.startswith("tests.") or node.level:
                        for alias in node.names:
                            table[alias.asname or alias.name] = (stem, alias.name)
            self.imports[name] = table
        self._memo: dict[tuple[str, str], bool] = {}

    def _resolve(self, module: str, call: ast.Call) -> tuple[str, str] | None:
        func, table = call.func, self.imports[module]
        if isinstance(func, ast.Name):
            if func.id in self.defs[module]:
                return module, func.id
            stem, name = table.get(func.id, ("", None))
            return (stem, name) if name else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            stem, name = table.get(func.value.id, ("", ""))
            return (stem, func.attr) if name is None else None
        return None

    def asserts(self, module: str, fn: ast.AST) -> bool:
        for node in ast.walk(fn):
            if isinstance(node, ast.Assert) and _checks_something(node):
                return True
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id == "AssertionError":
                    return True
            if isinstance(node, ast.Call):
                name = _call_name(node) or ""
                if name in ASSERTING_CALLS or name.startswith("assert"):
                    return True
                target = self._resolve(module, node)
                if target and self._helper_asserts(*target):
                    return True
        return False

    def _helper_asserts(self, module: str, name: str) -> bool:
        key = (module, name)
        if key not in self._memo:
            self._memo[key] = False  # a recursive helper does not assert through itself
            fn = self.defs.get(module, {}).get(name)
            self._memo[key] = fn is not None and self.asserts(module, fn)
        return self._memo[key]


# ------------------------------------------------------------------ rule: clock-assertion


def _clock_names(nodes: list[ast.AST]) -> set[str]:
    """Names assigned from a clock reading, directly or through another such name."""
    tainted: set[str] = set()
    assigns = [n for n in nodes if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)]
    changed = True
    while changed:
        changed = False
        for node in assigns:
            if node.value is None or not _reads_clock(node.value, tainted):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in tainted:
                        tainted.add(name.id)
                        changed = True
    return tainted


def _reads_clock(node: ast.AST, tainted: set[str]) -> bool:
    return any(_is_clock_call(n) or (isinstance(n, ast.Name) and n.id in tainted)
               for n in ast.walk(node))


def _polling_asserts(nodes: list[ast.AST]) -> set[int]:
    """ids of the asserts inside a loop that also sleeps: a poll's give-up check."""
    out: set[int] = set()
    for loop in nodes:
        if isinstance(loop, ast.For | ast.AsyncFor | ast.While):
            calls = [n for n in ast.walk(loop) if isinstance(n, ast.Call)]
            if any(_call_name(c) in SLEEPS for c in calls):
                out.update(id(n) for n in ast.walk(loop) if isinstance(n, ast.Assert))
    return out


# ------------------------------------------------------------------ the scan


def scan(sources: dict[str, str]) -> list[Finding]:
    """Every finding in `sources` (file name -> Python source)."""
    modules = Modules(sources)
    found: list[Finding] = []
    for stem, tree in modules.trees.items():
        file = f"{stem}.py"
        for fn in _functions(tree):
            if fn.name.startswith("test") and not modules.asserts(stem, fn):
                found.append(Finding(file, fn.name, "no-assertion", fn.lineno))
            nodes = list(ast.walk(fn))  # walked once: the rules below share it
            for block in _statement_lists(nodes):
                for blind in _after_sleep(block):
                    found.append(Finding(file, fn.name, "sleep-then-assert", blind.lineno))
            if not any(_is_clock_call(n) for n in nodes):
                continue
            tainted, polls = _clock_names(nodes), _polling_asserts(nodes)
            for node in nodes:
                if isinstance(node, ast.Assert) and id(node) not in polls and any(
                        isinstance(c, ast.Compare) and _reads_clock(c, tainted)
                        for c in ast.walk(node.test)):
                    found.append(Finding(file, fn.name, "clock-assertion", node.lineno))
    return found


@functools.cache
def _suite_findings() -> tuple[Finding, ...]:
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(TESTS.glob("*.py"))}
    return tuple(scan(sources))


def test_the_suite_follows_the_rules() -> None:
    bad = [f for f in _suite_findings() if (f.file, f.function, f.rule) not in ALLOWED]
    assert not bad, "test hygiene:\n" + "\n".join(map(str, bad))


def test_every_exception_is_still_needed() -> None:
    found = {(f.file, f.function, f.rule) for f in _suite_findings()}
    assert sorted(set(ALLOWED) - found) == []


# ------------------------------------------------------------------ the checker checks


BAD = '''
import asyncio, time
from helpers_mod import check

def test_nothing():
    x = 1 + 1

async def test_sleeps():
    await asyncio.sleep(0.2)
    assert done()

def test_duration():
    start = time.monotonic()
    work()
    elapsed = time.monotonic() - start
    assert elapsed < 2

def test_loop_clock(loop):
    assert loop.time() - t0 < 1

def test_unasserted_snapshot(snap_compare):
    snap_compare(app)

def test_sleeps_a_named_delay():
    time.sleep(SETTLE)
    assert done()

def test_sleeps_then_reads():
    time.sleep(0.5)
    rows = read_rows()
    assert rows

def test_asserts_a_constant():
    run()
    assert True
'''

GOOD = '''
import asyncio, time
import pytest
from tests.helpers_mod import check

def test_raises():
    with pytest.raises(ValueError):
        int("x")

def test_helper():
    check(1)

async def test_polls():
    end = time.monotonic() + 5
    while not done():
        assert time.monotonic() < end, "gave up"
        await asyncio.sleep(0.05)
    assert done()

def test_snapshot(snap_compare):
    assert snap_compare(app)

async def test_yield():
    await asyncio.sleep(0)
    assert done()

async def test_sleep_then_wait():
    await asyncio.sleep(0.05)
    await wait_for(done)
    rows = read_rows()
    assert rows

async def test_sleep_in_a_poll_then_assert():
    for _ in range(100):
        if done():
            break
        await asyncio.sleep(0.05)
    assert done()
'''

HELPERS = '''
def check(x):
    assert x
'''


@pytest.mark.parametrize(("function", "rule"), [
    ("test_nothing", "no-assertion"),
    ("test_sleeps", "sleep-then-assert"),
    ("test_duration", "clock-assertion"),
    ("test_loop_clock", "clock-assertion"),
    ("test_unasserted_snapshot", "no-assertion"),
    ("test_sleeps_a_named_delay", "sleep-then-assert"),
    ("test_sleeps_then_reads", "sleep-then-assert"),
    ("test_asserts_a_constant", "no-assertion"),
])
def test_the_checker_catches(function: str, rule: str) -> None:
    found = {(f.function, f.rule) for f in scan({"bad.py": BAD, "helpers_mod.py": HELPERS})}
    assert (function, rule) in found


def test_the_checker_passes_good_tests() -> None:
    assert scan({"good.py": GOOD, "helpers_mod.py": HELPERS}) == []
