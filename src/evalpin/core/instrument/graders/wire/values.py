"""What crosses by value, and the names both ends share: the stdlib value types with
their wire forms, the builtin bases a proxy may hold a value of, the special methods a
proxy forwards, and exceptions rebuilt with the receiver's own classes."""

from __future__ import annotations

import base64
import builtins
import contextlib
import importlib
import sys

MAX_MESSAGE = 64 * 1024 * 1024
MAX_DEPTH = 64
MAX_SYNC_BYTES = 32 * 1024 * 1024
MAX_LIVE = 10_000  # items of a container attribute kept shared (checked at every message)
SPIN_READS = 100  # non-blocking reads, each followed by sched_yield, before select
_SCALARS = (type(None), bool, int, float, str)
_BUILTIN_TYPES = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and not name.startswith("_")
}
_IDENT = str.isidentifier


class ProtocolError(RuntimeError):
    """The other side sent something that is not a well-formed message."""


class RemoteGone(RuntimeError):
    """The other side closed the pipe or died."""


class Unsupported(TypeError):
    """An operation the wire cannot carry: the grader's limit, never the candidate's."""


# -- values that cross by value -------------------------------------------------------------


def _str(v, e) -> str:
    return str(v)


def _pairs(items, d) -> list:
    if type(items) is not list or not all(type(p) is list and len(p) == 2 for p in items):
        raise ProtocolError("malformed pairs")
    return [(d(k), d(v)) for k, v in items]


def _tz(value, e):
    if value is None:
        return None
    if type(value).__name__ == "timezone" and type(value).__module__ == "datetime":
        return ["tz", e(value.utcoffset(None)), value.tzname(None)]
    key = getattr(value, "key", None)
    if type(value).__name__ == "ZoneInfo" and type(key) is str:
        return ["zone", key]
    raise _ByReference


def _untz(data, d):
    if data is None:
        return None
    if type(data) is list and data[:1] == ["tz"] and len(data) == 3:
        import datetime

        offset, name = d(data[1]), data[2]
        return datetime.timezone(offset, name) if type(name) is str else datetime.timezone(offset)
    if type(data) is list and data[:1] == ["zone"] and len(data) == 2 and type(data[1]) is str:
        import zoneinfo

        return zoneinfo.ZoneInfo(data[1])
    raise ProtocolError("malformed tzinfo")


class _ByReference(Exception):
    """This value of a by-value type holds something that does not cross by value."""


def _ints(payload, n: int) -> list:
    if type(payload) is not list or len(payload) != n or any(type(x) is not int for x in payload):
        raise ProtocolError("malformed value fields")
    return payload


def _items(v, e) -> list:
    return [[e(k), e(x)] for k, x in dict.items(v)]


def _ints_of(module: str, cls: str, *fields: str) -> tuple[str, str, object, object]:
    """A value type that is its integer fields, rebuilt from them in order."""
    return (
        module,
        cls,
        lambda v, e: [getattr(v, f) for f in fields],
        lambda p, d, c: c(*_ints(p, len(fields))),
    )


def _clock_of(module: str, cls: str, *fields: str) -> tuple[str, str, object, object]:
    """A date-time or time: its integer fields and `fold`, then its time zone."""
    n = len(fields)
    return (
        module,
        cls,
        lambda v, e: [[*(getattr(v, f) for f in fields), v.fold], _tz(v.tzinfo, e)],
        lambda p, d, c: c(*_ints(p[0], n + 1)[:n], tzinfo=_untz(p[1], d), fold=p[0][n]),
    )


# name -> (module, class, to wire, from wire): the receiver rebuilds with its own class,
# imported only when a value of it arrives (a module nobody uses costs nothing).
_VALUES: dict[str, tuple[str, str, object, object]] = {
    "Counter": ("collections", "Counter", _items, lambda p, d, c: c(dict(_pairs(p, d)))),
    "OrderedDict": ("collections", "OrderedDict", _items, lambda p, d, c: c(_pairs(p, d))),
    "defaultdict": (
        "collections",
        "defaultdict",
        lambda v, e: [e(v.default_factory), _items(v, e)],
        lambda p, d, c: c(d(p[0]), _pairs(p[1], d)),
    ),
    "deque": (
        "collections",
        "deque",
        lambda v, e: [[e(x) for x in v], v.maxlen],
        lambda p, d, c: c([d(x) for x in p[0]], p[1]),
    ),
    "date": _ints_of("datetime", "date", "year", "month", "day"),
    "datetime": _clock_of(
        "datetime", "datetime", "year", "month", "day", "hour", "minute", "second", "microsecond"
    ),
    "time": _clock_of("datetime", "time", "hour", "minute", "second", "microsecond"),
    "timedelta": _ints_of("datetime", "timedelta", "days", "seconds", "microseconds"),
    "timezone": ("datetime", "timezone", lambda v, e: _tz(v, e), lambda p, d, c: _untz(p, d)),
    "ZoneInfo": ("zoneinfo", "ZoneInfo", lambda v, e: _tz(v, e), lambda p, d, c: _untz(p, d)),
    "Decimal": ("decimal", "Decimal", lambda v, e: str(v), lambda p, d, c: c(_s(p))),
    "Fraction": _ints_of("fractions", "Fraction", "numerator", "denominator"),
    "UUID": ("uuid", "UUID", lambda v, e: v.hex, lambda p, d, c: c(hex=_s(p))),
    "PurePosixPath": ("pathlib", "PurePosixPath", _str, lambda p, d, c: c(_s(p))),
    "PureWindowsPath": ("pathlib", "PureWindowsPath", _str, lambda p, d, c: c(_s(p))),
    "PosixPath": ("pathlib", "PosixPath", _str, lambda p, d, c: c(_s(p))),
    "complex": (
        "builtins",
        "complex",
        lambda v, e: [e(v.real), e(v.imag)],
        lambda p, d, c: complex(_f(d(p[0])), _f(d(p[1]))),
    ),
    "range": _ints_of("builtins", "range", "start", "stop", "step"),
    "slice": (
        "builtins",
        "slice",
        lambda v, e: [e(v.start), e(v.stop), e(v.step)],
        lambda p, d, c: slice(*[d(x) for x in p[:3]]),
    ),
    "bytearray": (
        "builtins",
        "bytearray",
        lambda v, e: base64.b64encode(v).decode("ascii"),
        lambda p, d, c: bytearray(base64.b64decode(_s(p).encode("ascii"), validate=True)),
    ),
    "dict_keys": (
        "builtins",
        "dict_keys",
        lambda v, e: [e(x) for x in v],
        lambda p, d, c: dict.fromkeys(d(x) for x in p).keys(),
    ),
    "dict_values": (
        "builtins",
        "dict_values",
        lambda v, e: [e(x) for x in v],
        lambda p, d, c: dict(enumerate(d(x) for x in p)).values(),
    ),
    "dict_items": (
        "builtins",
        "dict_items",
        lambda v, e: [[e(k), e(x)] for k, x in v],
        lambda p, d, c: dict(_pairs(p, d)).items(),
    ),
}
_VALUE_KEYS = {(module, cls): name for name, (module, cls, _, _) in _VALUES.items()}
# The classes met so far, for the encoder's one dict lookup a value.
_VALUE_NAMES: dict[type, str] = {
    t: t.__name__
    for t in (
        complex,
        range,
        slice,
        bytearray,
        type({}.keys()),
        type({}.values()),
        type({}.items()),
    )
}
_CLASSES: dict[str, type] = {t.__name__: t for t in _VALUE_NAMES}


def value_name(kind: type) -> str | None:
    """The wire name of a by-value type, or None (also registers it for next time)."""
    name = _VALUE_NAMES.get(kind)
    if name is None:
        name = _VALUE_KEYS.get((getattr(kind, "__module__", None), getattr(kind, "__name__", None)))
        if name is not None and value_class(name) is kind:
            _VALUE_NAMES[kind] = name
        else:
            name = None
    return name


def value_class(name: str) -> type:
    """The receiver's own class for a by-value type's wire name."""
    cls = _CLASSES.get(name)
    if cls is None:
        module, attr = _VALUES[name][:2]
        cls = _CLASSES[name] = getattr(importlib.import_module(module), attr)
    return cls


def encode_value(name: str, value, e):
    return _VALUES[name][2](value, e)


def decode_value(name: str, payload, d):
    return _VALUES[name][3](payload, d, value_class(name))


def _s(value) -> str:
    if type(value) is not str:
        raise ProtocolError("expected a string")
    return value


def _f(value) -> float:
    if type(value) not in (int, float):
        raise ProtocolError("expected a number")
    return value


# Candidate classes derived from one of these hold their value in the judge: immutable
# ones as a local subclass of the builtin; mutable ones are compared as a fresh copy.
_IMMUTABLE_BASES = {
    "int": (int, int.__index__),
    "float": (float, float.__float__),
    "str": (str, str.__str__),
    "bytes": (bytes, bytes.__bytes__),
    "tuple": (tuple, lambda v: tuple.__getitem__(v, slice(None))),
    "frozenset": (frozenset, lambda v: frozenset.union(v)),
}
_MUTABLE_BASES = {
    "list": (list, list.copy),
    "dict": (dict, dict.copy),
    "set": (set, set.copy),
}
_COPIES = {name: copier for name, (_, copier) in {**_IMMUTABLE_BASES, **_MUTABLE_BASES}.items()}

# The special methods a proxy may forward: what the candidate's class defines of these
# is forwarded, nothing else. Comparisons and hashing follow the rule in the docstring.
_BINARY = [
    "add",
    "sub",
    "mul",
    "matmul",
    "truediv",
    "floordiv",
    "mod",
    "divmod",
    "pow",
    "lshift",
    "rshift",
    "and",
    "xor",
    "or",
]
_FORWARDED = frozenset(
    [f"__{n}__" for n in _BINARY]
    + [f"__r{n}__" for n in _BINARY]
    + [f"__i{n}__" for n in _BINARY if n != "divmod"]
    + [
        f"__{n}__"
        for n in [
            "neg",
            "pos",
            "abs",
            "invert",
            "int",
            "float",
            "index",
            "complex",
            "round",
            "trunc",
            "floor",
            "ceil",
            "bool",
            "len",
            "length_hint",
            "iter",
            "next",
            "reversed",
            "contains",
            "getitem",
            "setitem",
            "delitem",
            "missing",
            "enter",
            "exit",
            "call",
            "repr",
            "str",
            "format",
            "bytes",
            "fspath",
        ]
    ]
)
_COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
# Attributes of a candidate's object the judge reads itself rather than forwarding.
_LOCAL_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__", "__wrapped__"})


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:4000]
    except Exception:
        return type(exc).__name__


def _builtin_exception(name: str, args: list) -> BaseException:
    """A builtin exception by name, rebuilt from plain arguments (non-`Exception` ones but
    SystemExit as RuntimeError: a KeyboardInterrupt must not stop the session)."""
    cls = _BUILTIN_TYPES.get(name)
    if cls is None or not issubclass(cls, BaseException):
        return RuntimeError(*args)
    if not issubclass(cls, Exception) and cls is not SystemExit:
        cls = RuntimeError
    try:
        return cls(*args)
    except Exception:
        return cls(" ".join(map(str, args)))


def _exception_data(exc: BaseException, e) -> dict | None:
    """A builtin or standard-library exception as data, rebuilt on the other side with
    its own class (so `pytest.raises(json.JSONDecodeError)` holds); None for others."""
    cls = type(exc)
    try:
        args = e(list(exc.args))
    except Exception:
        args = [_text(exc)]
    if _BUILTIN_TYPES.get(cls.__name__) is cls:
        return {"t": "bx", "v": cls.__name__, "a": args}
    module = getattr(cls, "__module__", "")
    if type(module) is str and module.split(".")[0] in _STDLIB and module != "__main__":
        attrs = {}
        for key, value in getattr(exc, "__dict__", {}).items():
            if not key.startswith("_") and type(value) in _SCALARS:
                attrs[key] = value
        return {"t": "sx", "v": module, "q": cls.__qualname__, "a": args, "d": attrs}
    return None


_STDLIB = frozenset(sys.stdlib_module_names) - {"this", "antigravity", "idlelib", "turtle"}


def _stdlib_exception(data: dict, d) -> BaseException | None:
    module, qualname = data.get("v"), data.get("q")
    if type(module) is not str or type(qualname) is not str:
        return None
    if module.split(".")[0] not in _STDLIB:
        return None
    try:
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
    except (ImportError, AttributeError):
        return None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return None
    args = d(data.get("a", []))
    args = args if type(args) is list else []
    try:
        exc = cls.__new__(cls, *args)
    except Exception:
        exc = cls.__new__(cls)
    BaseException.__init__(exc, *args)
    attrs = data.get("d")
    if type(attrs) is dict:
        for key, value in attrs.items():
            plain = type(key) is str and _IDENT(key) and type(value) in _SCALARS
            if plain and not key.startswith("_"):
                with contextlib.suppress(Exception):
                    setattr(exc, key, value)
    return exc


def _exception_bases(cls: type) -> list[str]:
    return [c.__name__ for c in cls.__mro__ if _BUILTIN_TYPES.get(c.__name__) is c]


_GONE = object()
_KINDS = frozenset({"call", "iter", "file", "object", "mock"})


def _exact(value, kind: type):
    if type(value) is not kind:
        raise TypeError(f"the tests' object returned {type(value).__name__}, not {kind.__name__}")
    return value


def after_import(name: str, then) -> None:
    """Call `then(module)` once module `name` is imported: now if it already is, else
    right after its import (so neither end pays for a module nobody uses)."""
    if name in sys.modules:
        then(sys.modules[name])
        return

    class Finder:
        @staticmethod
        def find_spec(fullname, path=None, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(Finder)
            import importlib.util

            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module) -> None:
                run(module)
                then(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder)
