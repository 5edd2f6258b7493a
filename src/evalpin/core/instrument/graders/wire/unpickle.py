"""Bytes the test unpickles in the pytest process. A pickle is a program: one that names
only plain data (builtin containers, the stdlib's value classes, the tests' own classes,
a candidate's object pickled through the wire) is unpickled here; one that names
anything else (a function, the candidate's class) was very likely made by the candidate
and is unpickled where the candidate's code may run, in the worker, and its result
comes back like any other."""

from __future__ import annotations

import io
import os
import sys

from .imports import within

_BUILTINS = frozenset(
    {"list", "dict", "set", "frozenset", "tuple", "bytearray", "bytes", "complex", "int"}
    | {"float", "str", "bool", "slice", "range", "object"}
)
# The standard library's value classes a pickle of plain data names (no class that runs
# code: never `types.FunctionType`, `types.CodeType`, a partial...).
_ALLOWED = {
    ("copyreg", "_reconstructor"),
    ("_codecs", "encode"),
    ("evalpin_wire.proxies", "rebuild"),
    *[("collections", n) for n in ("OrderedDict", "Counter", "deque", "defaultdict")],
    *[("datetime", n) for n in ("date", "datetime", "time", "timedelta", "timezone")],
    ("decimal", "Decimal"),
    ("fractions", "Fraction"),
    ("uuid", "UUID"),
    *[("pathlib", n) for n in ("PurePosixPath", "PosixPath", "PureWindowsPath", "Path")],
    *[("ipaddress", n) for n in ("IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network")],
    ("types", "SimpleNamespace"),
    ("argparse", "Namespace"),
}


class _Elsewhere(Exception):
    """This pickle names code: it is unpickled in the worker."""


def follow(judge, pickle) -> None:
    """Route `pickle.loads`, `pickle.load` and `pickle.Unpickler` in the pytest process."""
    loads, Unpickler = pickle.loads, pickle.Unpickler

    class Guarded(Unpickler):
        def find_class(self, module, name):
            if not _plain(module, name, judge.tests_root):
                raise _Elsewhere(f"{module}.{name}")
            return super().find_class(module, name)

    def guarded_loads(data, /, **kwargs):
        try:
            return Guarded(io.BytesIO(bytes(data)), **kwargs).load()
        except _Elsewhere:
            pass
        return judge.request("unpickle", args=[bytes(data)])

    def guarded_load(file, **kwargs):
        return guarded_loads(file.read(), **kwargs)

    class Refusing(Unpickler):
        def find_class(self, module, name):
            if not _plain(module, name, judge.tests_root):
                judge.unsupported(f"unpickling {module}.{name} from a stream")
            return super().find_class(module, name)

    for guarded, original in ((guarded_loads, loads), (guarded_load, pickle.load)):
        guarded.__name__ = guarded.__qualname__ = original.__name__
        guarded.__module__, guarded.__doc__ = "pickle", original.__doc__
    pickle.loads, pickle.load, pickle.Unpickler = guarded_loads, guarded_load, Refusing


def _plain(module: str, name: str, root: str) -> bool:
    if (module, name) in _ALLOWED:
        return True
    if module == "builtins":
        return name in _BUILTINS
    found = sys.modules.get(module)
    value = getattr(found, name, None) if found is not None else None
    if not isinstance(value, type):
        return False  # a function names code to run
    path = getattr(found, "__file__", None)  # a class of the tests' own modules
    stub = getattr(found, "_evalpin_stub", False)
    return type(path) is str and not stub and within(os.path.realpath(path), [root])
