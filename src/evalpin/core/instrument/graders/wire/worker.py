"""The candidate's end: imports the item's modules, exports its objects with a
description of their classes, and carries the test's environment (cwd, env, stdin,
patched names, mirrored files) into every call."""

from __future__ import annotations

import builtins
import contextlib
import enum
import importlib
import io
import os
import sys
import types

from .mirror import _Mirror
from .peer import _CALLS, Peer, _mutable_args, _name
from .values import (
    _BUILTIN_TYPES,
    _COMPARISONS,
    _COPIES,
    _FORWARDED,
    _GONE,
    _IMMUTABLE_BASES,
    _KINDS,
    _MUTABLE_BASES,
    _STDLIB,
    MAX_LIVE,
    MAX_MESSAGE,
    ProtocolError,
    _exact,
    _exception_bases,
    _exception_data,
    _s,
    _text,
    after_import,
)


def _comparison(name: str):
    def compare(self, other):
        if self._kind in _COMPARED:
            return self._op(name, other)
        if name in ("__eq__", "__ne__"):
            return (other is self) == (name == "__eq__")
        return NotImplemented

    compare.__name__ = name
    return compare


# Kinds whose comparisons and hash are the tests' own (iterators and files: identity).
_COMPARED = frozenset({"object", "mock", "call"})


class Handle:
    """In the worker: an object of the tests', used through the capability its kind
    grants (the judge enforces it). Equality and hashing are by identity."""

    __slots__ = ("_id", "_kind", "_peer")

    def __init__(self, peer: Worker, ident: int, kind: str) -> None:
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_id", ident)
        object.__setattr__(self, "_kind", kind)

    def __getattr__(self, name: str):
        return self._peer.request("getattr", obj=self._id, name=name)

    def __setattr__(self, name: str, value) -> None:
        self._peer.request("setattr", obj=self._id, name=name, args=[value])

    def __delattr__(self, name: str) -> None:
        self._peer.request("delattr", obj=self._id, name=name)

    def __call__(self, *args, **kwargs):
        return self._peer.request("call", obj=self._id, args=args, kwargs=kwargs)

    def _op(self, name: str, *args):
        return self._peer.request("special", obj=self._id, name=name, args=args)

    def __iter__(self):
        return self._op("__iter__")

    def __next__(self):
        return self._op("__next__")

    def __len__(self) -> int:
        return _exact(self._op("__len__"), int)

    def __bool__(self) -> bool:
        return _exact(self._op("__bool__"), bool)

    def __contains__(self, item) -> bool:
        return _exact(self._op("__contains__", item), bool)

    def __getitem__(self, key):
        return self._op("__getitem__", key)

    def __setitem__(self, key, value) -> None:
        self._op("__setitem__", key, value)

    def __delitem__(self, key) -> None:
        self._op("__delitem__", key)

    def __enter__(self):
        return self._op("__enter__")

    def __exit__(self, *exc) -> bool:
        return bool(self._op("__exit__", None, None, None))

    def __repr__(self) -> str:
        text = self._op("__repr__")
        return text if type(text) is str else f"<{self._kind} of the tests>"

    def __str__(self) -> str:
        text = self._op("__str__")
        return text if type(text) is str else f"<{self._kind} of the tests>"

    def __hash__(self) -> int:
        if self._kind in _COMPARED:
            return _exact(self._op("__hash__"), int)
        return object.__hash__(self)


for _name_ in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(Handle, _name_, _comparison(_name_))
del _name_


class _Stdin(io.TextIOBase):
    """`sys.stdin` in the worker: each read is the test's own `sys.stdin` read."""

    def __init__(self, peer: Worker) -> None:
        self._peer = peer

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        return self._peer.request("stdin", name="read", args=[size])

    def readline(self, size=-1):
        return self._peer.request("stdin", name="readline", args=[size])

    def readlines(self, hint=-1):
        return self._peer.request("stdin", name="readlines", args=[hint])

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


class Worker(Peer):
    """The candidate's end: imports the item's modules, exports its objects with a
    description of their classes, applies the test's environment before each request,
    and sends back what the candidate printed and the files it changed."""

    def __init__(self, rfd: int, wfd: int, modules: frozenset[str] = frozenset()) -> None:
        super().__init__(rfd, wfd)
        self._modules = modules
        self._classes: dict[type, int] = {}  # candidate classes already described
        self._watched: dict[int, tuple[dict, str, object]] = {}  # module names the judge caches
        self._home = os.getcwd()
        self._mirror = _Mirror()
        self._streams: list[tuple[str, int, int]] = []  # (field, fd, read position)
        self._events: list[tuple] = []  # log records and warnings for the test to see
        self._originals: dict[tuple[str, str], object] = {}  # stdlib names before patches
        self._live: dict[int, tuple[object, object]] = {}  # shared containers, last sent

    def capture_output(self) -> None:
        """Point fds 1 and 2 at in-memory files; what lands there (print, os.write, a
        child's output) goes back to the test with the next message."""
        for field, fd in (("o", 1), ("e", 2)):
            try:
                memfd = os.memfd_create(f"evalpin-{field}")
            except (AttributeError, OSError):
                continue
            os.dup2(memfd, fd)
            os.close(memfd)
            self._streams.append((field, fd, 0))
        sys.stdin = _Stdin(self)
        builtins.input = self._input
        import warnings

        after_import("logging", self._forward_logs)
        warnings.simplefilter("always")  # the test's filters decide which ones count
        warnings.showwarning = self._warned

    def _forward_logs(self, logging) -> None:
        root = logging.getLogger()
        root.setLevel(logging.NOTSET)  # the test's loggers decide, as they do in-process
        root.addHandler(_LogForwarder(self._events))

    def _warned(self, message, category, filename, lineno, file=None, line=None) -> None:
        self._events.append(("w", str(message), category, str(filename), int(lineno)))

    def _input(self, *prompt):
        return self.request("input", args=prompt)

    def _outgoing(self, message: dict) -> None:
        streams = []
        for field, fd, pos in self._streams:
            stream = sys.stdout if fd == 1 else sys.stderr
            with contextlib.suppress(Exception):
                stream.flush()
            size = os.fstat(fd).st_size
            if size > pos:
                data = os.pread(fd, min(size - pos, MAX_MESSAGE // 4), pos)
                message[field] = data.decode("utf-8", "replace")
                pos += len(data)
                if pos == size and pos >= 1 << 20:  # all read: keep the file small
                    os.ftruncate(fd, 0)
                    os.lseek(fd, 0, os.SEEK_SET)
                    pos = 0
            streams.append((field, fd, pos))
        self._streams = streams
        if self._events:
            events, self._events[:] = list(self._events), []
            message["ev"] = [[self.encode(x) for x in event] for event in events]
        changes = self._mirror.changes()
        if changes:
            message["fs"] = changes
        changed = []
        for ident, (obj, seen) in self._live.items():
            if obj != seen:
                changed.append([ident, self.encode(obj)])
                self._live[ident] = (obj, obj.copy())
        if changed:
            message["lv"] = changed
        stale = [k for k, (d, n, v) in self._watched.items() if d.get(n, _GONE) is not v]
        if stale:
            message["stale"] = [self._ids.get(k) for k in stale]
            for key in stale:
                del self._watched[key]

    def _incoming(self, message: dict) -> None:
        env = message.get("env")
        if env is None:
            return
        if type(env) is not dict:
            raise ProtocolError("malformed environment")
        for key, value in (env.get("set") or {}).items():
            os.environ[key] = value
        for key in env.get("unset") or []:
            os.environ.pop(key, None)
        if "fs" in env:
            self._mirror.apply(env["fs"])
        if "cwd" in env:
            cwd = env["cwd"]
            with contextlib.suppress(OSError):
                os.chdir(self._home if cwd is None else cwd)

    def _back(self, value):
        if isinstance(value, Handle) and value._peer is self:
            return {"t": "b", "v": value._id}
        return None

    def _export(self, value, e):
        if type(value) is _Live:
            return self._live_data(value.obj, e)
        if isinstance(value, enum.Enum):
            return {"t": "em", "c": e(type(value)), "v": value._name_}
        if isinstance(value, type):
            return self._describe(value, e)
        if isinstance(value, BaseException):
            plain = _exception_data(value, e)
            if plain is not None:
                return plain
        ident = self._give(value)
        data = {"t": "o", "v": ident, "c": e(type(value))}
        if isinstance(value, BaseException):
            try:
                data["x"] = e(list(value.args))
            except Exception:
                data["x"] = [_text(value)]
        else:
            base = _value_base(type(value))
            if base in _IMMUTABLE_BASES:
                data["x"] = e(_COPIES[base](value))
        return data

    def _live_data(self, obj, e) -> dict:
        """A list, dict or set attribute the judge holds a live copy of: it is sent
        again whenever it changes here, and its changes there are made here too."""
        ident = self._ids.get(id(obj))
        if ident is None or self._objects.get(ident) is not obj:
            ident = self._give(obj)
        self._live[ident] = (obj, obj.copy())
        return {"t": "live", "k": type(obj).__name__, "v": ident, "x": e(obj)}

    def _describe(self, cls: type, e) -> dict:
        """A class as data: names, bases, the dunders and methods it defines, dataclass
        fields, enum members. The judge builds its proxy class from this, no code."""
        ident = self._give(cls)
        mro = [c for c in cls.__mro__ if _counts(cls, c)]
        data = {
            "t": "k",
            "v": ident,
            "n": getattr(cls, "__name__", "Remote"),
            "q": getattr(cls, "__qualname__", "Remote"),
            "m": getattr(cls, "__module__", "remote"),
            "b": [],
            "d": sorted({n for c in mro for n in vars(c) if n in _FORWARDED}),
            "c": sorted({n for c in mro for n in vars(c) if n in _COMPARISONS}),
            "h": "__hash__" in {n for c in mro for n in vars(c)},
            "nohash": getattr(cls, "__hash__", None) is None,
            "fn": sorted(
                {
                    n
                    for c in mro
                    if c.__module__ != "builtins"
                    for n, v in list(vars(c).items())
                    if (not n.startswith("__") or n == "__init__")
                    and (isinstance(v, (types.FunctionType, staticmethod, classmethod)))
                }
            ),
        }
        for base in cls.__bases__:
            if base is object:
                continue
            if _BUILTIN_TYPES.get(base.__name__) is base or base.__module__ in _STD_MODULES:
                continue  # described by name below
            data["b"].append(e(base))
        if issubclass(cls, BaseException):
            data["x"] = _exception_bases(cls)
        value = _value_base(cls)
        if value is not None:
            data["vb"] = value
        fields = getattr(cls, "__dataclass_fields__", None)
        dataclasses = sys.modules.get("dataclasses")  # a dataclass means it is imported
        if isinstance(fields, dict) and dataclasses and dataclasses.is_dataclass(cls):
            data["f"] = [
                [f.name, bool(f.compare), bool(f.repr), bool(f.init)]
                for f in dataclasses.fields(cls)
            ]
        named = getattr(cls, "_fields", None)
        if issubclass(cls, tuple) and type(named) is tuple and all(type(n) is str for n in named):
            data["nt"] = list(named)
        match = getattr(cls, "__match_args__", None)
        if type(match) is tuple and all(type(n) is str for n in match):
            data["ma"] = list(match)
        if isinstance(cls, enum.EnumMeta):
            base = next(
                (b.__name__ for b in cls.__mro__ if b.__module__ == "enum" and b is not cls),
                "Enum",
            )
            data["e"] = [base, [[n, e(m._value_)] for n, m in cls.__members__.items()]]
        return data

    def _decode_remote(self, tag: str, data: dict, d):
        v = data["v"]
        if tag == "h" and type(v) is int and data.get("k") in _KINDS:
            handle = self._remote.get(v)
            if handle is None:
                handle = self._remote[v] = Handle(self, v, data["k"])
            return handle
        if tag == "xs" and type(v) is int:  # an exception of the tests' own class
            cls = self._stand_in(v, data.get("n"), data.get("b"))
            args = d(data.get("a", []))
            exc = cls(*args) if type(args) is list else cls()
            return exc
        if tag == "bm" and type(v) is int and v in self._objects:  # a method of ours, by name
            return getattr(self._objects[v], _s(data.get("n")))
        if tag == "em" and type(v) is str:
            cls = d(data.get("c"))
            return cls[v]
        if tag == "sref" and type(v) is str and v.split(".")[0] in _STDLIB:
            found = importlib.import_module(v)
            for part in _s(data.get("n")).split("."):
                found = getattr(found, part)
            return found
        raise ProtocolError(f"unknown value tag {tag!r}")

    def _stand_in(self, ident: int, name, bases) -> type:
        """The worker's stand-in for an exception class of the tests: a bare subclass of
        the nearest builtin exception, of the same name."""
        cls = self._remote.get(-ident)
        if cls is None:
            name = name if type(name) is str and name.isidentifier() else "TestsError"
            base = next(
                (
                    _BUILTIN_TYPES[b]
                    for b in (bases if type(bases) is list else [])
                    if b in _BUILTIN_TYPES and issubclass(_BUILTIN_TYPES[b], Exception)
                ),
                Exception,
            )
            cls = self._remote[-ident] = type(name, (base,), {"__qualname__": name})
        return cls

    def _perform(self, message: dict, received: list):
        op = message["op"]
        if op == "import":
            return self._import(message.get("name"))
        if op == "patch":
            return self._patch(_name(message), *self._arguments(message)[0])
        target = self._target(message)
        if op == "getattr":
            value = getattr(target, _name(message))
            if type(value) in (list, dict, set) and len(value) <= MAX_LIVE:
                return _Live(value)  # the test may change it in place: it stays shared
            return value
        if op == "setattr":
            (value,), _ = self._arguments(message)
            return setattr(target, _name(message), value)
        if op == "delattr":
            return delattr(target, _name(message))
        args, kwargs = self._arguments(message)
        if op in _CALLS:
            received += _mutable_args(args, kwargs)
        if op == "call":
            return target(*args, **kwargs)
        if op == "method":
            return getattr(target, _name(message))(*args, **kwargs)
        if op == "special":
            name = _name(message)
            if name not in _FORWARDED and name not in _COMPARISONS and name != "__hash__":
                raise ProtocolError(f"{name} is not forwarded")
            method = getattr(type(target), name)
            return method(target, *args)
        if op == "umethod":  # a candidate class's own method on a tests' subclass instance
            instance, *rest = args
            return _unbound(target, instance, _name(message))(*rest, **kwargs)
        if op == "subclass":
            return self._subclass(target, _name(message), *args)
        if op == "run":
            import asyncio

            return asyncio.run(target)
        if op == "member":  # an attribute of an enum member the judge rebuilt
            return getattr(target[args[0]], _name(message))
        if op == "value":
            return _COPIES[_value_base(type(target))](target)
        if op == "copy":
            import copy

            return copy.deepcopy(target) if args == [True] else copy.copy(target)
        raise ProtocolError(f"unknown request {op!r}")

    def _subclass(self, base: type, name: str, judge_id: int, methods: list, values: dict) -> int:
        """An instance of a subclass of `base` standing for the tests' own subclass: the
        methods it overrides call the tests' object back; its class values are copied."""
        peer = self

        def forward(method: str):
            def call(self, *args, **kwargs):
                return peer.request("method", obj=judge_id, name=method, args=args, kwargs=kwargs)

            call.__name__ = method
            return call

        namespace = {m: forward(m) for m in methods if type(m) is str and m.isidentifier()}
        namespace.update({k: v for k, v in values.items() if type(k) is str and k.isidentifier()})
        cls = type(name if name.isidentifier() else "TestsSubclass", (base,), namespace)
        return self._give(cls.__new__(cls))

    def _patch(self, name: str, module: str, how: str, value=None) -> None:
        """A standard-library attribute as the test patched it (or restored it)."""
        if type(module) is not str or module.split(".")[0] not in _STDLIB:
            raise ProtocolError("only standard-library modules are patched")
        target = importlib.import_module(module)
        key = (module, name)
        if key not in self._originals:
            self._originals[key] = getattr(target, name, _GONE)
        if how == "set":
            setattr(target, name, value)
        elif how == "restore" and self._originals[key] is not _GONE:
            setattr(target, name, self._originals[key])
        elif hasattr(target, name):
            delattr(target, name)

    def _import(self, name):
        if name not in self._modules:
            raise ImportError(f"{name!r} is not a module this item may import")
        module = importlib.import_module(name)
        names = getattr(module, "__all__", None)
        if not isinstance(names, (list, tuple)) or not all(type(n) is str for n in names):
            names = [n for n in vars(module) if not n.startswith("_")]
        # Functions and classes are described now (the judge caches them; a rebinding
        # is reported with the next message); everything else is read when asked for.
        known = {}
        namespace = vars(module)
        for attr, value in list(namespace.items()):
            if attr.startswith("__") or isinstance(value, types.ModuleType):
                continue
            if getattr(value, "__module__", None) != name or not callable(value):
                continue
            self._watched[id(value)] = (namespace, attr, value)
            known[attr] = value
        return {"id": self._give(module), "names": [str(n) for n in names], "known": known}


_STD_MODULES = frozenset({"enum", "abc", "typing", "collections", "collections.abc"})


class _Live:
    """A container read as an attribute, to be shared with the judge (see _live_data)."""

    __slots__ = ("obj",)

    def __init__(self, obj) -> None:
        self.obj = obj


def _unbound(cls: type, obj, name: str):
    """`name` as `cls` defines it, bound to `obj`: what `Base.method(obj)` means."""
    for klass in cls.__mro__:
        if name in vars(klass):
            raw = vars(klass)[name]
            return raw.__get__(obj, type(obj)) if hasattr(raw, "__get__") else raw
    raise AttributeError(name)


def _counts(cls: type, c: type) -> bool:
    """Whether the dunders and methods of `c`, in `cls`'s MRO, are forwarded: the
    candidate's own classes', a builtin type's own (a function, a generator), a mutable
    builtin base's (its proxy holds no value); never those of object, an immutable base
    or a builtin exception, which the proxy class inherits for real."""
    if c is object:
        return False
    if c.__module__ != "builtins" or cls.__module__ == "builtins":
        return True
    return c.__name__ in _MUTABLE_BASES and _BUILTIN_TYPES.get(c.__name__) is c


def _value_base(cls: type) -> str | None:
    """The builtin value type a candidate class derives from, if any (not for enums)."""
    if isinstance(cls, enum.EnumMeta) or issubclass(cls, BaseException):
        return None
    for base in cls.__mro__[1:]:
        name = base.__name__
        if (name in _IMMUTABLE_BASES or name in _MUTABLE_BASES) and _BUILTIN_TYPES.get(
            name
        ) is base:
            return name
    return None


class _LogForwarder:
    """A logging handler (duck-typed: `logging` is imported only when the worker starts)
    that keeps each record as plain data for the test's own loggers."""

    def __init__(self, events: list) -> None:
        self._events = events
        self.level = 0  # logging.NOTSET
        self.filters: list = []
        self.lock = None

    def handle(self, record) -> None:
        try:
            text = record.getMessage()
        except Exception as exc:
            text = f"{record.msg!r} (unformattable: {exc})"
        if record.exc_info and record.exc_info[0] is not None:
            import traceback

            text += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
        self._events.append(
            (
                "l",
                str(record.name),
                int(record.levelno),
                text,
                str(record.pathname),
                int(record.lineno),
                str(record.funcName),
            )
        )


def worker(rfd: int, wfd: int, modules: list[str]) -> None:
    """The candidate's end: import only the item's modules, serve until the tests end."""
    peer = Worker(rfd, wfd, frozenset(modules))
    peer.capture_output()
    peer.serve_forever()
