"""Python source parsed into a syntax tree, one parse at a time per process.

CPython 3.11 keeps the AST constructor's recursion depth in state shared by the whole
interpreter, so two threads building trees at once (the plain and witness runs of one
item are graded side by side, the reviewer reads sources in workers) can corrupt it and
raise `SystemError: AST constructor recursion depth mismatch` on valid code. Every
parse evalpin makes goes through the lock here.
"""

from __future__ import annotations

import ast
import threading

_ONE_AT_A_TIME = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, serialised across the process's threads."""
    with _ONE_AT_A_TIME:
        return ast.parse(source, filename)
