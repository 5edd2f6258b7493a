"""Exceptions by value: a builtin or standard-library exception is rebuilt by the receiver
with its own class, its arguments and what else it carries (attributes, `OSError`'s
errno and file names, `__notes__`, `__cause__`, `__context__`); any exception's chain
and notes cross with it, whoever's class it is."""

from __future__ import annotations

import contextlib

from .protocol import SCALARS, ProtocolError, is_ident, string
from .stdlib import BUILTIN_TYPES, STDLIB, stdlib_name

# Builtin exceptions' own fields (kept in C, not in `__dict__`), by the class that has them.
_C_FIELDS = (
    (OSError, ("errno", "strerror", "filename", "filename2")),
    (SyntaxError, ("msg", "filename", "lineno", "offset", "text", "end_lineno", "end_offset")),
    (ImportError, ("msg", "name", "path")),
    (AttributeError, ("name", "obj")),
    (NameError, ("name",)),
    (StopIteration, ("value",)),
    (SystemExit, ("code",)),
)


def exception_bases(cls: type) -> list[str]:
    """The builtin exception classes in `cls`'s MRO, by name."""
    return [c.__name__ for c in cls.__mro__ if BUILTIN_TYPES.get(c.__name__) is c]


def by_value(exc: BaseException, e) -> dict | None:
    """A builtin or standard-library exception as data (`bx` or `sx`), with its fields
    and details; None for anyone else's exception class."""
    cls = type(exc)
    args = e(list(exc.args))
    if BUILTIN_TYPES.get(cls.__name__) is cls:
        data = {"t": "bx", "v": cls.__name__, "a": args}
    else:
        named = stdlib_name(cls)
        if named is None:
            return None
        data = {"t": "sx", "v": named[0], "q": named[1], "a": args}
    fields = {}
    for owner, names in _C_FIELDS:
        if isinstance(exc, owner):
            for name in names:
                value = getattr(exc, name, None)
                if value is not None:
                    fields[name] = e(value)
    for key, value in getattr(exc, "__dict__", {}).items():
        if type(key) is str and (not key.startswith("_") or key == "__notes__"):
            fields[key] = e(value)
    if fields:
        data["d"] = fields
    return with_details(data, exc, e)


def with_details(data: dict, exc: BaseException, e) -> dict:
    """Add an exception's chain to its wire form: `__cause__`, `__context__`,
    `__suppress_context__` (and its notes when its class is not sent by value)."""
    if exc.__cause__ is not None:
        data["ec"] = e(exc.__cause__)
    if exc.__context__ is not None:
        data["ex"] = e(exc.__context__)
    if exc.__suppress_context__:
        data["es"] = True
    if "d" not in data:
        notes = getattr(exc, "__notes__", None)
        if type(notes) is list and all(type(n) is str for n in notes):
            data["en"] = list(notes)
    return data


def apply_details(exc: BaseException, data: dict, d) -> BaseException:
    """Set what `with_details` sent on a rebuilt exception."""
    for field, name in (("ec", "__cause__"), ("ex", "__context__")):
        if field in data:
            linked = d(data[field])
            if linked is not None and not isinstance(linked, BaseException):
                raise ProtocolError("an exception chained to something else")
            setattr(exc, name, linked)
    if data.get("es") is True:
        exc.__suppress_context__ = True
    notes = data.get("en")
    if type(notes) is list and all(type(n) is str for n in notes):
        exc.__notes__ = list(notes)
    return exc


def builtin(name: str, args: list) -> BaseException:
    """A builtin exception by name, rebuilt from its arguments (non-`Exception` ones but
    SystemExit as RuntimeError: a KeyboardInterrupt must not stop the session)."""
    cls = BUILTIN_TYPES.get(name)
    if cls is None or not issubclass(cls, BaseException):
        return RuntimeError(*args)
    if not issubclass(cls, Exception) and cls is not SystemExit:
        cls = RuntimeError
    try:
        return cls(*args)
    except Exception:
        exc = cls.__new__(cls, *args)
        BaseException.__init__(exc, *args)
        return exc


def decode(tag: str, data: dict, d, importer) -> BaseException:
    """A `bx` or `sx` exception, rebuilt with the receiver's own class (a standard-library
    module is imported with `importer`: the judge's never reads the candidate's files)."""
    args = d(data.get("a", []))
    args = args if type(args) is list else []
    if tag == "bx":
        exc = builtin(string(data["v"]), args)
    else:
        module, qualname = string(data.get("v")), string(data.get("q"))
        if module.split(".")[0] not in STDLIB:
            raise ProtocolError("not a standard-library exception")
        try:
            cls = importer(module)
            for part in qualname.split("."):
                cls = getattr(cls, part)
        except (ImportError, AttributeError):
            raise ProtocolError("unknown standard-library exception") from None
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            raise ProtocolError("not an exception class")
        try:
            exc = cls.__new__(cls, *args)
        except Exception:
            exc = cls.__new__(cls)
        BaseException.__init__(exc, *args)
    fields = data.get("d")
    if type(fields) is dict:
        for key, value in fields.items():
            if is_ident(key) and (not key.startswith("_") or key == "__notes__"):
                value = d(value)
                if key == "__notes__" and not (
                    type(value) is list and all(type(n) in SCALARS for n in value)
                ):
                    continue
                with contextlib.suppress(Exception):
                    setattr(exc, key, value)
    return apply_details(exc, data, d)
