"""The tests' modules by name in the worker (issue 48). In one process the candidate's
code runs called from the test module: a factory names what it makes after its
caller's module (`sys._getframe(1).f_globals["__name__"]`: `collections.namedtuple`, a
sentinel that pickles by name), and `pickle` finds a test's function or the candidate's
class through `sys.modules[obj.__module__]`. So in the worker:

- the candidate's code is called from a frame whose module is the test module's name;
- a module of that name is in `sys.modules`, whose names are the test module's, but
  only those bound to what the worker holds already (one of the candidate's own
  objects, or a test's object handed over before): a look-up finds the very object it
  is checking (`getattr(module, name) is obj`), never anything new of the test's: not
  its expected values, not a function it did not hand over.

The judge decides each look-up (`TestsModules.global_name`); the worker only asks."""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Callable

from .protocol import GONE, is_ident


class TestsModule(types.ModuleType):
    """A tests' module as the worker sees it: each public name is asked of the judge."""

    def __getattr__(self, name: str):
        peer = self.__dict__.get("_evalpin_peer")
        if peer is None or name.startswith("__"):
            raise AttributeError(name)
        return _look_up(peer, self.__name__, name)


class _Within:
    """A tests' class on the way to a name inside it (`Case.Inner.method`, as `pickle`
    looks up a qualified name): only what is at the end of the way is ever an object."""

    __slots__ = ("_at",)

    def __init__(self, at: tuple) -> None:
        self._at = at

    def __getattr__(self, name: str):
        peer, module, path = self._at
        if name.startswith("__"):
            raise AttributeError(name)
        return _look_up(peer, module, f"{path}.{name}")


def _look_up(peer, module: str, path: str):
    held, value = peer.request("global", args=[module, path])
    return value if held else _Within((peer, module, path))


def adopt(peer, names) -> str | None:
    """Put a module for each of the tests' modules the judge names into `sys.modules`
    (never over one the worker has); the first name, the test module calling."""
    if type(names) is not list:
        return None
    valid = [n for n in names if type(n) is str and all(map(is_ident, n.split(".")))]
    for name in valid:
        if name not in sys.modules:
            module = TestsModule(name)
            module._evalpin_peer = peer
            sys.modules[name] = module
    return valid[0] if valid else None


def caller(module: str):
    """A function calling `f(*a, **k)` from a frame whose module is named `module`."""
    namespace = {"__name__": module, "__builtins__": builtins}
    code = "def call(f, a, k):\n    return f(*a, **k)\n"
    exec(compile(code, f"<{module}>", "exec"), namespace)  # our own two lines
    return namespace["call"]


class TestsModules:
    """The names of the test files' modules loaded in the judge (`is_tests` says which
    modules are the tests'); each module looked at once."""

    def __init__(
        self,
        is_tests: Callable[[types.ModuleType], bool],
        is_tests_class: Callable[[type], bool],
        candidates,
    ) -> None:
        self._is_tests, self._is_tests_class = is_tests, is_tests_class
        self._candidates = frozenset(candidates)
        self._seen: dict[str, bool] = dict.fromkeys(candidates, False)
        self._count = 0
        self._handed: set[str] = set()  # the tests' modules the tests handed over

    def tests_class(self, cls: type) -> bool:
        """Whether `cls` is a class of the tests' own (defined in the tests' modules)."""
        return self._is_tests_class(cls)

    def hand(self, module: types.ModuleType) -> None:
        """A module the tests hand the candidate (`monkey(sys.modules[__name__])`): if it
        is a tests' module, the candidate may read its public names, as any tests'
        object's (`global_name`)."""
        name = getattr(module, "__name__", None)
        if type(name) is str and name not in self._candidates and self._is_tests(module):
            self._handed.add(name)

    def changed(self) -> list[str] | None:
        """The names, when a module was loaded since the last call; else None."""
        if len(sys.modules) == self._count:
            return None
        self._count = len(sys.modules)
        fresh = False
        for name, module in list(sys.modules.items()):
            if name not in self._seen:
                self._seen[name] = isinstance(module, types.ModuleType) and self._is_tests(module)
                fresh = fresh or self._seen[name]
        if not fresh:
            return None
        return [name for name, tests in self._seen.items() if tests and _test_file(name)]

    def global_name(self, module_name, path, held: Callable[[object], bool]) -> list:
        """A tests' module's global the worker looks up by name, through the tests'
        classes for a qualified name: `[True, it]` only when the worker holds it already
        (`held`: the candidate's own object, or a test's object handed over before), so a
        look-up finds the object it checks and learns nothing new; `[False, None]` for a
        tests' class on the way to one. A module the tests handed over (`hand`) is a
        tests' object: its public names are the candidate's to read."""
        module = sys.modules.get(module_name) if type(module_name) is str else None
        if module is None or module_name in self._candidates or type(path) is not str:
            raise AttributeError(path)
        if not isinstance(module, types.ModuleType) or not self._is_tests(module):
            raise AttributeError(path)
        value = module
        for part in path.split("."):
            if value is not module and not (
                isinstance(value, type) and self._is_tests_class(value)
            ):
                raise AttributeError(path)
            value = vars(value).get(part, GONE)
            if isinstance(value, staticmethod):  # as `getattr` on the class finds it
                value = value.__func__
        if value is not GONE and held(value):
            return [True, value]
        public = "." not in path and not path.startswith("_") and value is not GONE
        if public and module_name in self._handed and not isinstance(value, types.ModuleType):
            return [True, value]  # a public name of a module the tests handed over
        if isinstance(value, type) and self._is_tests_class(value):
            return [False, None]
        raise AttributeError(f"{path!r}: not a name of the tests' the candidate holds")


def _test_file(name: str) -> bool:
    """A test file's module (`test_*`, `*_test`, as pytest collects them); a helper
    module of the tests' stays the worker's to import from its file, as it would be."""
    last = name.rpartition(".")[2]
    return last.startswith("test") or last.endswith("_test")
