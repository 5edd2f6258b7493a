"""Copies of the candidate's objects the test asks for (`copy.copy`, `copy.deepcopy`, a
pickle round trip), made where they live: in the worker. A `deepcopy` in the test keeps
one memo there for all the candidate's objects it meets (`proxies.ProxyBase`), so copies
that referred to each other still do. The classes the worker makes for the tests'
subclasses live in a module of their own here, so a pickle names them as the test's
module would in-process."""

from __future__ import annotations

import sys
import types

from .protocol import ProtocolError


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
            memo = {}
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
