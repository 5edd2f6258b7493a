"""Test files for a public benchmark's own checks, written so pytest grades them as the
benchmark's harness does.

A benchmark's harness runs the candidate and its check code in one namespace
(HumanEval: `prompt + completion + test + check(entry_point)`; MBPP: `code + set-up +
asserts`; BigCodeBench: `code + test` and its `TestCases`), so a check may use any name
the candidate defines (HumanEval/38's test calls the prompt's `encode_cyclic`). A pytest
file imports the candidate instead: every name the check code uses but neither defines
nor takes from the builtins is imported from the candidate's module by name (`from
solution import helper`), found statically (never by running it). A builtin stays the
test's own, even where the candidate redefines it (the test's `all` or `len` is never the
candidate's: that would let an answer decide its own asserts), with one exception the
harness's namespace makes: the task's own function, when it is named like a builtin (an
MBPP task's `sum`), is the candidate's, imported by name like every entry point.

A binding is never a module-level name pytest would collect (`test*`): MBPP's task 19
defines `test_duplicate`, which a module-level import would turn into a test of the
candidate's; such a name is imported inside the test that uses it.
"""

from __future__ import annotations

import ast
import builtins
import json

from evalpin.core import syntax

_BUILTINS = frozenset(dir(builtins))


def _bound(tree: ast.AST) -> set[str]:
    """Every name `tree` binds anywhere: assignments, definitions, imports, parameters,
    loop and comprehension targets, `except ... as`, `global` and `nonlocal`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
    return names


def free_names(*sources: str, keep: frozenset[str] = frozenset()) -> list[str]:
    """The names the code of `sources` (taken together) reads but never binds and that
    are not builtins (unless in `keep`), in first-use order: the names it takes from the
    candidate."""
    trees = [syntax.parse(source) for source in sources]
    bound = set().union(*map(_bound, trees))
    used: dict[str, None] = {}
    for tree in trees:
        loads = [
            n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        ]
        for node in sorted(loads, key=lambda n: (n.lineno, n.col_offset)):
            used.setdefault(node.id)
    return [n for n in used if n not in bound and (n not in _BUILTINS or n in keep)]


def _collected(name: str) -> bool:
    return name.startswith(("test", "Test"))


def _import(module: str, name: str, alias: str | None = None) -> str:
    return f"from {module} import {name}" + (f" as {alias}" if alias and alias != name else "")


def top_level(source: str) -> set[str]:
    """The names a module's top level binds (definitions, assignments, imports; never a
    name local to a function or class): what a reference solution gives the harness's
    namespace."""
    names: set[str] = set()
    for node in syntax.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        else:
            names |= _bound(node)
    return names


def humaneval_test(task_id: str, module: str, test: str, entry_point: str, importer: str) -> str:
    """A pytest file for one HumanEval-style problem: the names its `test` code takes
    from the candidate imported by name, the code as written, and one test that imports
    the entry point by name and calls `check` with it."""
    names = [n for n in free_names(test) if n != "candidate"]
    head = [
        f"# {task_id}: the benchmark's own test code, graded as its harness grades it",
        f"# (the candidate's names it uses, then its code, then check({entry_point})).",
        f"# Written by {importer}; regenerate rather than edit.",
        *(_import(module, n) for n in names if not _collected(n)),
        "",
    ]
    late = [n for n in names if _collected(n)]
    # the entry point under its own name, unless the test code has that name (`check`)
    own = entry_point not in _bound(syntax.parse(test)) | {"check"}
    entry = entry_point if own else "_entry_point"
    body = [
        "",
        "",
        f"def test_{_ident(entry_point)}():",
        *(f"    global {n}" for n in late),
        *(f"    {_import(module, n)}" for n in late),
        f"    {_import(module, entry_point, entry)}",
        f"    check({entry})",
    ]
    return "\n".join(head) + "\n" + test.rstrip() + "\n" + "\n".join(body) + "\n"


def mbpp_test(
    task_id: str,
    module: str,
    setup: str,
    asserts: list[str],
    importer: str,
    entry_points: frozenset[str] = frozenset(),
) -> str:
    """A pytest file for one MBPP-style problem: its set-up code at the top, then one
    test per assert, each importing the candidate's names it uses by name (a failing
    assert names its own test; all must pass, as in the benchmark's harness).
    `entry_points`: names the task's own solution defines, imported from the candidate
    even where a builtin has the name (the harness's one namespace gives them to it)."""
    setup_names = [n for n in free_names(setup) if not _collected(n)] if setup.strip() else []
    lines = [
        f"# {task_id}: the benchmark's own asserts, graded as its harness grades them",
        "# (the candidate's names each uses, the set-up code, then the asserts).",
        f"# Written by {importer}; regenerate rather than edit.",
        *(_import(module, n) for n in setup_names),
    ]
    if setup.strip():
        lines += ["", setup.rstrip(), ""]
    setup_bound = _bound(syntax.parse(setup)) if setup.strip() else set()
    width = len(str(len(asserts)))
    for n, line in enumerate(asserts, start=1):
        code = line.strip()
        used = free_names(code, keep=entry_points)
        names = [m for m in used if m not in setup_bound and m not in setup_names]
        lines += ["", "", f"def test_assert_{n:0{width}d}():"]
        lines += [f"    {_import(module, m)}" for m in names]
        lines += ["    " + row for row in code.splitlines()]
    return "\n".join(lines) + "\n"


# What each harness's namespace holds before the candidate's code runs, and where it
# comes from: a test may use these without importing them, even when the candidate does
# not define them (BigCodeBench's runner puts `sys`, `os` and `os.environ` there;
# DataFrameBench's script imports matplotlib first).
PRESET = {
    "bigcodebench": {"os": "import os", "sys": "import sys", "environ": "from os import environ"},
    "dataframebench": {"matplotlib": "import matplotlib"},
}


def unittest_test(
    task_id: str, module: str, test: str, importer: str, preset: dict[str, str], prelude: str
) -> str:
    """A pytest file for a benchmark whose tests are a `unittest` module run in one
    namespace with the solution (BigCodeBench, DataFrameBench): the harness's `prelude`,
    the names the tests take from the candidate imported by name (a name the harness
    itself provides comes from the candidate when it defines one, else from the harness's
    own `preset`), then the test code as written; pytest collects its `TestCases`."""
    names = free_names(test)
    lines = [
        f"# {task_id}: the benchmark's own unittest code, graded as its harness grades it",
        "# (its namespace's names the tests use, taken from the candidate, then the tests).",
        f"# Written by {importer}; regenerate rather than edit.",
    ]
    if prelude:
        lines += [prelude.rstrip()]
    for name in names:
        if _collected(name):
            continue
        if name in preset:
            lines += ["try:", f"    {_import(module, name)}", "except ImportError:"]
            lines += [f"    {preset[name]}"]
        else:
            lines += [_import(module, name)]
    late = [n for n in names if _collected(n)]
    if late:  # bound where pytest does not look for tests: before any test runs
        lines += ["", "", "def setUpModule():"]
        lines += [f"    global {n}" for n in late]
        lines += [f"    {_import(module, n)}" for n in late]
    return "\n".join(lines) + "\n\n" + test.rstrip() + "\n"


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "entry"


def quoted(text: str) -> str:
    """A Python string literal of `text` (for generated comments and code)."""
    return json.dumps(text, ensure_ascii=False)
