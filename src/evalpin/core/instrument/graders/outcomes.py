"""What a test file itself says about its outcomes, read statically, so that a grade
follows plain pytest's outcome rules (`coding.judge_report`): which outcomes besides a
pass it can give (`explained`; a skip the candidate gave is not believed: candidate code
that skips a test inside plain pytest's process explains nothing, and under the witness
it cannot skip or xfail one at all, its exceptions reach the test as errors), and which
of its functions named like tests are fixtures (`fixture`), never collected."""

from __future__ import annotations

import ast

from evalpin.core import syntax

# The names by which a test file skips or marks an expected failure (pytest's and
# unittest's): `explained` reads them.
_SKIPPING = frozenset(
    {"skip", "skipif", "importorskip", "skipTest", "SkipTest", "skipIf", "skipUnless"}
)
_XFAILING = frozenset({"xfail", "expectedFailure"})


def explained(test_source: str) -> frozenset[str]:
    """The outcomes besides a pass that the test file itself can give, read statically:
    `skipped` when it uses pytest's or unittest's skipping (a marker, `pytest.skip`,
    `importorskip`, `skipTest`), `xfailed` when it marks or raises an expected failure.
    An unparsable file explains none."""
    try:
        tree = syntax.parse(test_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {
        a.name.rpartition(".")[2]
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    }
    found = {"skipped"} if names & _SKIPPING else set()
    return frozenset(found | ({"xfailed"} if names & _XFAILING else set()))


def fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A fixture named like a test (`@pytest.fixture def test_url`): never collected."""
    for found in node.decorator_list:
        called = found.func if isinstance(found, ast.Call) else found
        name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
        if name in ("fixture", "yield_fixture"):
            return True
    return False
