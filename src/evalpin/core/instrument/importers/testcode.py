"""Test files for a public benchmark's own checks, written so pytest grades them as the
benchmark's harness does.

A benchmark's harness runs the candidate and its check code in one namespace
(HumanEval: `prompt + completion + test + check(entry_point)`; MBPP: `code + set-up +
asserts`), so a check may use any name the candidate defines (HumanEval/38's test calls
the prompt's `encode_cyclic`). A pytest file imports the candidate instead: every name
the check code uses but neither defines nor takes from the builtins is bound from the
candidate's module, found statically (never by running it). A builtin stays the test's
own, even where the candidate redefines it: the test's `all` or `len` is never the
candidate's (that would let an answer decide its own asserts).

A binding is never a module-level name pytest would collect (`test*`): MBPP's task 19
defines `test_duplicate`, which a star import would turn into a test of the candidate's.
"""

from __future__ import annotations

import ast
import builtins
import json

MODULE_ALIAS = "_candidate"
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


def free_names(*sources: str) -> list[str]:
    """The names the code of `sources` (taken together) reads but never binds and that
    are not builtins, in first-use order: the names it takes from the candidate."""
    trees = [ast.parse(source) for source in sources]
    bound = set().union(*map(_bound, trees))
    used: dict[str, None] = {}
    for tree in trees:
        loads = [
            n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        ]
        for node in sorted(loads, key=lambda n: (n.lineno, n.col_offset)):
            used.setdefault(node.id)
    return [n for n in used if n not in bound and n not in _BUILTINS]


def _collected(name: str) -> bool:
    return name.startswith(("test", "Test"))


def humaneval_test(task_id: str, module: str, test: str, entry_point: str, importer: str) -> str:
    """A pytest file for one HumanEval-style problem: its `test` code as written, the
    names it takes from the candidate bound first, and one test that calls
    `check(candidate.<entry_point>)`."""
    names = [n for n in free_names(test) if n != "candidate"]
    head = [
        f"# {task_id}: the benchmark's own test code, graded as its harness grades it",
        f"# (the candidate's names it uses, then its code, then check({entry_point})).",
        f"# Written by {importer}; regenerate rather than edit.",
        f"import {module} as {MODULE_ALIAS}",
        "",
    ]
    late = [n for n in names if _collected(n)]
    head += [f"{n} = {MODULE_ALIAS}.{n}" for n in names if not _collected(n)]
    body = [
        "",
        "",
        f"def test_{_ident(entry_point)}():",
        *(f"    global {n}" for n in late),
        *(f"    {n} = {MODULE_ALIAS}.{n}" for n in late),
        f"    check({MODULE_ALIAS}.{entry_point})",
    ]
    return "\n".join(head) + "\n" + test.rstrip() + "\n" + "\n".join(body) + "\n"


def mbpp_test(task_id: str, module: str, setup: str, asserts: list[str], importer: str) -> str:
    """A pytest file for one MBPP-style problem: its set-up code at the top, then one
    test per assert, each binding the candidate's names it uses (a failing assert names
    its own test; all must pass, as in the benchmark's harness)."""
    setup_names = [n for n in free_names(setup) if not _collected(n)] if setup.strip() else []
    lines = [
        f"# {task_id}: the benchmark's own asserts, graded as its harness grades them",
        "# (the candidate's names each uses, the set-up code, then the asserts).",
        f"# Written by {importer}; regenerate rather than edit.",
        f"import {module} as {MODULE_ALIAS}",
        "",
        *(f"{n} = {MODULE_ALIAS}.{n}" for n in setup_names),
    ]
    if setup.strip():
        lines += [setup.rstrip(), ""]
    setup_bound = _bound(ast.parse(setup)) if setup.strip() else set()
    width = len(str(len(asserts)))
    for n, line in enumerate(asserts, start=1):
        code = line.strip()
        names = [m for m in free_names(code) if m not in setup_bound and m not in setup_names]
        lines += ["", "", f"def test_assert_{n:0{width}d}():"]
        lines += [f"    {m} = {MODULE_ALIAS}.{m}" for m in names]
        lines += ["    " + row for row in code.splitlines()]
    return "\n".join(lines) + "\n"


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "entry"


def quoted(text: str) -> str:
    """A Python string literal of `text` (for generated comments and code)."""
    return json.dumps(text, ensure_ascii=False)
