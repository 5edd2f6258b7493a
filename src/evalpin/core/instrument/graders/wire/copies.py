"""Copies of the candidate's objects the test asks for (`copy.copy`, `copy.deepcopy`, a
pickle round trip), made where they live: in the worker. A `deepcopy` in the test keeps
one memo there for all the candidate's objects it meets (`proxies.ProxyBase`), so copies
that referred to each other still do. The classes the worker makes for the tests'
subclasses live in a module of their own here, so a pickle names them as the test's
module would in-process."""

from __future__ import annotations

import contextlib
import itertools
import sys
import types

from .protocol import ProtocolError

# The key a `deepcopy` memo holds its number under (the worker's memo for a test's
# `deepcopy` holds the same number): the id of an object that lives as long as the
# process, so no copied object has it.
_MEMO_OWNER = object()
MEMO = id(_MEMO_OWNER)
MEMOS = itertools.count(1)
# The test's deep copies in progress, by number: a test's object the worker meets in
# its part of one (a candidate's object that refers back to it) is copied in the same
# memo, so the copy refers to the copy under way, as in one process, never again.
ACTIVE: dict[int, dict] = {}


@contextlib.contextmanager
def copying(key: int, memo: dict):
    outer = ACTIVE.get(key)
    ACTIVE[key] = memo
    try:
        yield
    finally:
        if outer is None:
            ACTIVE.pop(key, None)


def deepcopy_in(target, key=None):
    """In the judge: a deep copy of a test's object the worker asks for, in the memo
    of the test's deep copy under way that `key` names (none: a fresh one)."""
    import copy

    return copy.deepcopy(target, ACTIVE.get(key) if type(key) is int else None)


class Copies:
    """The worker's side: the memos of the test's last few deep copies, by number."""

    def __init__(self) -> None:
        self._memos: dict[int, dict] = {}

    def make(self, target, how: str, key=None):
        import copy

        if how == "pickle":
            import pickle

            return pickle.loads(pickle.dumps(target))
        if how == "deepcopy":
            return copy.deepcopy(target, None if key is None else self._memo(key))
        return copy.copy(target)

    def _memo(self, key) -> dict:
        if type(key) is not int:
            raise ProtocolError("malformed memo")
        memo = self._memos.pop(key, None)
        if memo is None:
            memo = {MEMO: key}  # a test's object met in it is copied in the test's memo
            while len(self._memos) >= 8:
                del self._memos[next(iter(self._memos))]
        self._memos[key] = memo
        return memo


MADE = types.ModuleType("evalpin_tests")  # the classes made for the tests' subclasses
sys.modules[MADE.__name__] = MADE


def made(cls: type) -> None:
    """Find `cls` under its qualified name in `MADE` (its outer names as namespaces)."""
    holder = MADE
    *outer, last = cls.__qualname__.split(".")
    for part in outer:
        if not isinstance(getattr(holder, part, None), types.SimpleNamespace):
            setattr(holder, part, types.SimpleNamespace())
        holder = getattr(holder, part)
    setattr(holder, last, cls)
