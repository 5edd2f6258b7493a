"""What crosses by value: the standard library's value types, each with its wire form,
rebuilt by the receiver with its own stdlib class (so its `==` is the stdlib's), and for
the mutable ones the way to refill an object in place (arguments changed by the other
side, containers kept in step)."""

from __future__ import annotations

import base64
import importlib

from . import frames, handed, numeric, tracebacks, typed
from .protocol import ByReference, ProtocolError, ints, number, pairs, string


def _str(v, e) -> str:
    return str(v)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(payload) -> bytes:
    return base64.b64decode(string(payload).encode("ascii"), validate=True)


def _tz(value, e):
    if value is None:
        return None
    if type(value).__name__ == "timezone" and type(value).__module__ == "datetime":
        import datetime

        if value is datetime.UTC:
            return ["utc"]
        return ["tz", e(value.utcoffset(None)), value.tzname(None)]
    key = getattr(value, "key", None)
    if type(value).__name__ == "ZoneInfo" and type(key) is str:
        return ["zone", key]
    return ["obj", e(value)]  # the candidate's own tzinfo: a remote object


def _untz(data, d):
    import datetime

    if data is None:
        return None
    if data == ["utc"]:
        return datetime.UTC
    if type(data) is list and data[:1] == ["tz"] and len(data) == 3:
        offset, name = d(data[1]), data[2]
        return datetime.timezone(offset, name) if type(name) is str else datetime.timezone(offset)
    if type(data) is list and data[:1] == ["zone"] and len(data) == 2 and type(data[1]) is str:
        import zoneinfo

        return zoneinfo.ZoneInfo(data[1])
    if type(data) is list and data[:1] == ["obj"] and len(data) == 2:
        zone = d(data[1])
        if not isinstance(zone, datetime.tzinfo):
            raise ProtocolError("a time zone that is not a tzinfo")
        return zone
    raise ProtocolError("malformed tzinfo")


def _items(v, e) -> list:
    return [[e(k), e(x)] for k, x in v.items()]  # exact stdlib types: their own order


def _ints_of(module: str, cls: str, *fields: str) -> tuple:
    """A value type that is its integer fields, rebuilt from them in order."""
    return (
        module,
        cls,
        lambda v, e: [getattr(v, f) for f in fields],
        lambda p, d, c: c(*ints(p, len(fields))),
    )


def _clock_of(module: str, cls: str, *fields: str) -> tuple:
    """A date-time or time: its integer fields and `fold`, then its time zone."""
    n = len(fields)
    return (
        module,
        cls,
        lambda v, e: [[*(getattr(v, f) for f in fields), v.fold], _tz(v.tzinfo, e)],
        lambda p, d, c: c(*ints(p[0], n + 1)[:n], tzinfo=_untz(p[1], d), fold=p[0][n]),
    )


def _pattern(v, e) -> list:
    source = v.pattern
    return [_b64(source) if type(source) is bytes else source, type(source) is bytes, v.flags]


def _compile(p, c):
    if type(p) is not list or len(p) != 3 or type(p[1]) is not bool or type(p[2]) is not int:
        raise ProtocolError("malformed pattern")
    import re

    return re.compile(_unb64(p[0]) if p[1] else string(p[0]), p[2])


def _match(v, e) -> list:
    text = v.string
    spans = [v.span(i) for i in range(len(v.groups()) + 1)]
    encoded = _b64(text) if type(text) is bytes else text
    if type(text) not in (str, bytes):
        raise ByReference
    return [_pattern(v.re, e), encoded, v.pos, v.endpos, spans]


def _rematch(p, d, c):
    """The same match, found again by the receiver's own `re` (search, then fullmatch,
    from where it started); it must have the very same spans."""
    if type(p) is not list or len(p) != 5:
        raise ProtocolError("malformed match")
    pattern = _compile(p[0], c)
    text = _unb64(p[1]) if p[0][1] else string(p[1])
    pos, endpos, spans = p[2], p[3], p[4]
    if type(pos) is not int or type(endpos) is not int or type(spans) is not list:
        raise ProtocolError("malformed match")
    want = [tuple(s) for s in spans]
    start = want[0][0] if want else pos
    for attempt in (
        lambda: pattern.search(text, pos, endpos),
        lambda: pattern.fullmatch(text, pos, endpos),
        lambda: pattern.search(text, start, endpos),
        lambda: pattern.fullmatch(text, start, want[0][1]),
    ):
        found = attempt()
        if found is not None and [found.span(i) for i in range(len(want))] == want:
            return found
    raise ProtocolError("a match the receiver's own re does not find again")


def _view(v, e) -> list:
    return [_b64(v.tobytes()), v.format, list(v.shape), v.readonly]


def _unview(p, d, c):
    if type(p) is not list or len(p) != 4 or type(p[1]) is not str or type(p[3]) is not bool:
        raise ProtocolError("malformed memoryview")
    data = _unb64(p[0])
    view = memoryview(data if p[3] else bytearray(data))
    return view.cast("B").cast(p[1], ints(p[2], len(p[2])))


def _param(v, e) -> list:
    import inspect

    empty = inspect.Parameter.empty
    default = None if v.default is empty else [e(v.default)]
    annotation = None if v.annotation is empty else [e(v.annotation)]
    return [v.name, int(v.kind), default, annotation]


def _unparam(p, d, c):
    if type(p) is not list or len(p) != 4 or type(p[1]) is not int:
        raise ProtocolError("malformed parameter")
    kwargs = {}
    if p[2] is not None:
        kwargs["default"] = d(p[2][0])
    if p[3] is not None:
        kwargs["annotation"] = d(p[3][0])
    import inspect

    return c(string(p[0]), inspect._ParameterKind(p[1]), **kwargs)


def _signature(v, e) -> list:
    import inspect

    empty = inspect.Signature.empty
    returns = None if v.return_annotation is empty else [e(v.return_annotation)]
    return [[_param(x, e) for x in v.parameters.values()], returns]


def _unsignature(p, d, c):
    import inspect

    if type(p) is not list or len(p) != 2 or type(p[0]) is not list:
        raise ProtocolError("malformed signature")
    params = [_unparam(x, d, inspect.Parameter) for x in p[0]]
    if p[1] is None:
        return c(params)
    return c(params, return_annotation=d(p[1][0]))


def _partial(v, e) -> list:
    return [e(v.func), [e(a) for a in v.args], [[k, e(x)] for k, x in v.keywords.items()]]


def _unpartial(p, d, c):
    if type(p) is not list or len(p) != 3 or type(p[1]) is not list:
        raise ProtocolError("malformed partial")
    func = d(p[0])
    if not callable(func):
        raise ProtocolError("a partial of something not callable")
    return c(func, *[d(a) for a in p[1]], **{string(k): v for k, v in pairs(p[2], d)})


def _property(v, e) -> list:
    doc = v.__doc__ if type(v.__doc__) is str else None
    return [e(v.fget), e(v.fset), e(v.fdel), doc]


def _unproperty(p, d, c):
    if type(p) is not list or len(p) != 4 or not (p[3] is None or type(p[3]) is str):
        raise ProtocolError("malformed property")
    parts = [d(x) for x in p[:3]]
    if any(part is not None and not callable(part) for part in parts):
        raise ProtocolError("a property of something not callable")
    return c(*parts, p[3])


def _cached(v, e) -> list:
    name = v.attrname if type(v.attrname) is str else None
    return [e(v.func), name]


def _uncached(p, d, c):
    if type(p) is not list or len(p) != 2 or not (p[1] is None or type(p[1]) is str):
        raise ProtocolError("malformed cached_property")
    func = d(p[0])
    if not callable(func):
        raise ProtocolError("a cached_property of something not callable")
    made = c(func)
    made.attrname = p[1]
    return made


def _namespace(v, e) -> list:
    return [[k, e(x)] for k, x in vars(v).items() if type(k) is str]


def _unnamespace(p, d, c):
    obj = c()
    for key, value in pairs(p, d):
        setattr(obj, string(key), value)
    return obj


def _rng_state(v, e) -> list:
    version, state, gauss = v.getstate()
    return [version, list(state), gauss]


def _unrng(p, d, c):
    obj = c()
    obj.setstate(rng_state(p))
    return obj


def rng_state(p) -> tuple:
    """A random generator's state (`getstate()`) from its wire form."""
    if type(p) is not list or len(p) != 3 or type(p[1]) is not list:
        raise ProtocolError("malformed random state")
    gauss = p[2] if p[2] is None else number(p[2])
    return (p[0], tuple(ints(p[1], len(p[1]))), gauss)


def _stream(v, e) -> list:
    if v.closed:  # a closed stream has no contents: it crosses as closed (`with_iter(s)`)
        return [None, 0]
    data = v.getvalue()
    return [_b64(data) if type(data) is bytes else data, v.tell()]


def _unstream(p, d, c):
    if type(p) is not list or len(p) != 2 or type(p[1]) is not int:
        raise ProtocolError("malformed stream")
    stream = c()
    _refill_stream(stream, p)
    return stream


def _refill_stream(stream, p) -> None:
    if p[0] is None:
        stream.close()
        return
    data = _unb64(p[0]) if stream.__class__.__name__ == "BytesIO" else string(p[0])
    stream.seek(0)
    stream.truncate()
    stream.write(data)
    stream.seek(p[1])


def _deque(v, e) -> list:
    return [[e(x) for x in v], v.maxlen]


def _undeque(p, d, c):
    if type(p) is not list or len(p) != 2 or type(p[0]) is not list:
        raise ProtocolError("malformed deque")
    return c([d(x) for x in p[0]], p[1])


def _array(v, e) -> list:
    return [v.typecode, _b64(v.tobytes())]


def _unarray(p, d, c):
    if type(p) is not list or len(p) != 2 or string(p[0]) not in "bBuhHiIlLqQfd":
        raise ProtocolError("malformed array")
    made = c(p[0])
    made.frombytes(_unb64(p[1]))
    return made


def _alias(v, e) -> list:
    return [e(v.__origin__), [e(a) for a in v.__args__]]


def _unalias(p, d, c):
    if type(p) is not list or len(p) != 2 or type(p[1]) is not list:
        raise ProtocolError("malformed generic alias")
    origin = d(p[0])
    if not isinstance(origin, type):
        raise ProtocolError("a generic alias of something not a class")
    return c(origin, tuple(d(a) for a in p[1]))


def _union(p, d, c):
    import functools
    import operator

    if type(p) is not list or len(p) != 2 or type(p[1]) is not list or not p[1]:
        raise ProtocolError("malformed union")
    members = [d(a) for a in p[1]]
    if not all(isinstance(m, type) for m in members):  # no operator of anyone's runs
        raise ProtocolError("a union of something not a class")
    return functools.reduce(operator.or_, members)


def _simple(module: str, cls: str) -> tuple:
    """A value type rebuilt from its `str()`."""
    return (module, cls, _str, lambda p, d, c: c(string(p)))


# name -> (module, class, to wire, from wire): the receiver rebuilds with its own class,
# imported only when a value of it arrives (a module nobody uses costs nothing).
VALUES: dict[str, tuple] = {
    "Counter": ("collections", "Counter", _items, lambda p, d, c: c(dict(pairs(p, d)))),
    "OrderedDict": ("collections", "OrderedDict", _items, lambda p, d, c: c(pairs(p, d))),
    "defaultdict": (
        "collections",
        "defaultdict",
        lambda v, e: [e(v.default_factory), _items(v, e)],
        lambda p, d, c: c(d(p[0]), pairs(p[1], d)),
    ),
    "deque": ("collections", "deque", _deque, _undeque),
    "date": _ints_of("datetime", "date", "year", "month", "day"),
    "datetime": _clock_of(
        "datetime", "datetime", "year", "month", "day", "hour", "minute", "second", "microsecond"
    ),
    "time": _clock_of("datetime", "time", "hour", "minute", "second", "microsecond"),
    "timedelta": _ints_of("datetime", "timedelta", "days", "seconds", "microseconds"),
    "timezone": ("datetime", "timezone", lambda v, e: _tz(v, e), lambda p, d, c: _untz(p, d)),
    "ZoneInfo": ("zoneinfo", "ZoneInfo", lambda v, e: _tz(v, e), lambda p, d, c: _untz(p, d)),
    "Decimal": ("decimal", "Decimal", _str, lambda p, d, c: c(string(p))),
    "Fraction": _ints_of("fractions", "Fraction", "numerator", "denominator"),
    "UUID": ("uuid", "UUID", lambda v, e: v.hex, lambda p, d, c: c(hex=string(p))),
    "PurePosixPath": _simple("pathlib", "PurePosixPath"),
    "PureWindowsPath": _simple("pathlib", "PureWindowsPath"),
    "PosixPath": _simple("pathlib", "PosixPath"),
    "IPv4Address": _simple("ipaddress", "IPv4Address"),
    "IPv6Address": _simple("ipaddress", "IPv6Address"),
    "IPv4Network": _simple("ipaddress", "IPv4Network"),
    "IPv6Network": _simple("ipaddress", "IPv6Network"),
    "IPv4Interface": _simple("ipaddress", "IPv4Interface"),
    "IPv6Interface": _simple("ipaddress", "IPv6Interface"),
    "complex": (
        "builtins",
        "complex",
        lambda v, e: [e(v.real), e(v.imag)],
        lambda p, d, c: complex(number(d(p[0])), number(d(p[1]))),
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
        lambda v, e: _b64(v),
        lambda p, d, c: bytearray(_unb64(p)),
    ),
    "memoryview": ("builtins", "memoryview", _view, _unview),
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
        lambda p, d, c: dict(pairs(p, d)).items(),
    ),
    "mappingproxy": (
        "builtins",
        "mappingproxy",
        _items,
        lambda p, d, c: c(dict(pairs(p, d))),
    ),
    "SimpleNamespace": ("types", "SimpleNamespace", _namespace, _unnamespace),
    "Namespace": ("argparse", "Namespace", _namespace, _unnamespace),
    "array": ("array", "array", _array, _unarray),
    "Random": ("random", "Random", _rng_state, _unrng),
    "Pattern": ("re", "Pattern", _pattern, lambda p, d, c: _compile(p, c)),
    "Match": ("re", "Match", _match, _rematch),
    "StringIO": ("io", "StringIO", _stream, _unstream),
    "BytesIO": ("io", "BytesIO", _stream, _unstream),
    "Signature": ("inspect", "Signature", _signature, _unsignature),
    "GenericAlias": ("types", "GenericAlias", _alias, _unalias),
    "UnionType": ("types", "UnionType", lambda v, e: [None, [e(a) for a in v.__args__]], _union),
    "Parameter": ("inspect", "Parameter", _param, _unparam),
    # Callables that wrap a function: the receiver's own wrapper around the function's
    # stand-in (`isinstance(f, functools.partial)`, `isinstance(C.p, property)`).
    "partial": ("functools", "partial", _partial, _unpartial),
    "property": ("builtins", "property", _property, _unproperty),
    "cached_property": ("functools", "cached_property", _cached, _uncached),
    **numeric.VALUES,
    **frames.VALUES,
    **handed.VALUES,
    **typed.VALUES,
    **tracebacks.VALUES,
}
_VALUE_KEYS = {(module, cls): name for name, (module, cls, _, _) in VALUES.items()}
# The classes met so far, for the encoder's one dict lookup a value.
VALUE_NAMES: dict[type, str] = {
    t: t.__name__
    for t in (
        complex,
        range,
        slice,
        bytearray,
        memoryview,
        type({}.keys()),
        type({}.values()),
        type({}.items()),
        type(type.__dict__),
    )
}
_CLASSES: dict[str, type] = {t.__name__: t for t in VALUE_NAMES} | tracebacks.CLASSES


def value_name(kind: type) -> str | None:
    """The wire name of a by-value type, or None (also remembers the answer)."""
    name = VALUE_NAMES.get(kind)
    if name is None and kind not in _NOT_VALUES:
        module, cls = getattr(kind, "__module__", None), getattr(kind, "__name__", None)
        if module == "_io":
            module = "io"
        name = _VALUE_KEYS.get((module, cls)) or frames.name_of(kind)
        if name is not None and value_class(name) is kind:
            VALUE_NAMES[kind] = name
        else:
            name = None
            if len(_NOT_VALUES) < 4096:
                _NOT_VALUES.add(kind)
    return name


_NOT_VALUES: set[type] = set()  # the types met that do not cross by value


def value_class(name: str) -> type:
    """The receiver's own class for a by-value type's wire name."""
    cls = _CLASSES.get(name)
    if cls is None:
        module, attr = VALUES[name][:2]
        cls = _CLASSES[name] = getattr(importlib.import_module(module), attr)
    return cls


BY_REFERENCE = object()  # encode_value's answer for an object that crosses by reference


def encode_value(name: str, value, e):
    """The wire form of a by-value kind's object, or BY_REFERENCE where this one holds
    what does not cross by value (an array of objects, a frame of extension dtypes).
    The encoders' `ByReference` is their signal to this function alone: it is turned
    into that answer here, so it never reaches a reply, where it would be taken for an
    exception of the candidate's code (a library's method returning such an object)."""
    try:
        return VALUES[name][2](value, e)
    except ByReference:
        return BY_REFERENCE


def decode_value(name: str, payload, d):
    return VALUES[name][3](payload, d, value_class(name))


# -- mutable values: refilled in place ------------------------------------------------------


def _refill_dict(obj, new) -> None:
    dict.clear(obj)
    dict.update(obj, new)


def _refill_namespace(obj, new) -> None:
    obj.__dict__.clear()
    obj.__dict__.update(vars(new))


def _refill_sequence(obj, new) -> None:
    obj[:] = new


def _refill_deque(obj, new) -> None:
    obj.clear()
    obj.extend(new)


def _refill_array(obj, new) -> None:
    del obj[:]
    obj.frombytes(new.tobytes())


def _refill_stream_value(obj, new) -> None:
    if new.closed:  # closed by the other side: closed here (a closed one never reopens)
        obj.close()
        return
    obj.seek(0)
    obj.truncate()
    obj.write(new.getvalue())
    obj.seek(new.tell())


# The mutable types, by wire name (list, dict and set are plain wire types): how a copy
# the other side changed is put back into the very object.
REFILL = {
    "list": _refill_sequence,
    "dict": _refill_dict,
    "set": lambda obj, new: (obj.clear(), obj.update(new)),
    "Counter": _refill_dict,
    "OrderedDict": lambda obj, new: (obj.clear(), obj.update(new)),
    "defaultdict": _refill_dict,
    "deque": _refill_deque,
    "bytearray": _refill_sequence,
    "array": _refill_array,
    "Random": lambda obj, new: obj.setstate(new.getstate()),
    "SimpleNamespace": _refill_namespace,
    "Namespace": _refill_namespace,
    "StringIO": _refill_stream_value,
    "BytesIO": _refill_stream_value,
    **numeric.REFILL,
    **handed.REFILL,
}
PLAIN_MUTABLE = {list: "list", dict: "dict", set: "set"}


def mutable_name(kind: type) -> str | None:
    """The wire name of a mutable type whose objects are refilled in place, or None."""
    name = PLAIN_MUTABLE.get(kind)
    if name is None:
        if kind in _IMMUTABLE_PLAIN:
            return None
        name = value_name(kind)
        if name not in REFILL:
            return None
    return name


_IMMUTABLE_PLAIN = frozenset({type(None), bool, int, float, str, bytes, tuple, frozenset})
