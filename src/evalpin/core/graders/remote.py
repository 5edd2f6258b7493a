"""The wire between a process-isolated candidate and the pytest process that judges it.

Standard library only: this file is copied into both sandboxes (it is never imported
from the repository there). Each side runs one `Peer` over two pipes. A value crosses as
strict, tagged JSON and is rebuilt only as plain data (None, bool, int, float, str,
bytes, list, tuple, dict, set, frozenset, a builtin type named by its name) or as a
`Handle`: this module's own proxy for an object that stays on the other side (an
instance, a class, a function, an iterator). Nothing is unpickled and no class named by
the other side designed is ever created, so a `str` subclass arrives as a plain `str` and an
always-equal object arrives as a handle, which compares by identity only.

Exceptions cross with their plain arguments as the nearest builtin type in their class's
MRO, so `pytest.raises(ValueError)` works; one of the other side's own exception classes
arrives as a local stand-in (a bare subclass of that builtin type, of the same name, no
code of the other side's), so `pytest.raises(module.ParseError)` works too. A
`BaseException` that is not an `Exception` (SystemExit, KeyboardInterrupt) arrives as
RuntimeError.

The pytest process's end is guarded: what the candidate may do with the objects the
tests hand it (callbacks, iterators) is use them: call, iterate, index, read public
attributes. It may not read `_` names (no `__globals__`, `__self__`, `__code__`), reach a
module, or set, delete or store anything on them.

A malformed message is a `ProtocolError` on the receiving side: the test fails, nothing
the sender wrote is executed.
"""

from __future__ import annotations

import base64
import builtins
import importlib
import json
import math
import os
import types

MAX_MESSAGE = 64 * 1024 * 1024
MAX_DEPTH = 64
_SCALARS = (type(None), bool, int, float, str)
# The base type's own method returns an exact copy for a subclass, whatever it overrides.
_EXACT = (
    (int, int.__index__),
    (float, float.__float__),
    (str, str.__str__),
    (bytes, bytes.__bytes__),
)
_BUILTIN_TYPES = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and not name.startswith("_")
}


class ProtocolError(RuntimeError):
    """The other side sent something that is not a well-formed message."""


class RemoteGone(RuntimeError):
    """The other side closed the pipe or died."""


class Handle:
    """An object that lives on the other side. Attribute access, calls, iteration,
    containers and `repr` forward to it; equality and hashing are by identity of the
    remote object, never decided by the other side."""

    __slots__ = ("_id", "_kind", "_peer")

    def __init__(self, peer: Peer, ident: int, kind: str) -> None:
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_id", ident)
        object.__setattr__(self, "_kind", kind)

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._peer.request("getattr", obj=self._id, name=name)

    def __setattr__(self, name: str, value) -> None:
        self._peer.request("setattr", obj=self._id, name=name, value=value)

    def __delattr__(self, name: str) -> None:
        self._peer.request("delattr", obj=self._id, name=name)

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        return self._peer.request("call", obj=self._id, args=list(args), kwargs=kwargs)

    def _op(self, op: str, *args):
        __tracebackhide__ = True
        return self._peer.request("op", obj=self._id, name=op, args=list(args))

    def __iter__(self):
        return self._op("iter")

    def __next__(self):
        return self._op("next")

    def __len__(self) -> int:
        return _exact(self._op("len"), int)

    def __bool__(self) -> bool:
        return _exact(self._op("bool"), bool)

    def __contains__(self, item) -> bool:
        return _exact(self._op("contains", item), bool)

    def __getitem__(self, key):
        return self._op("getitem", key)

    def __setitem__(self, key, value) -> None:
        self._op("setitem", key, value)

    def __delitem__(self, key) -> None:
        self._op("delitem", key)

    def __enter__(self):
        return self._op("enter")

    def __exit__(self, *exc) -> bool:
        return bool(self._op("exit", None, None, None))

    def __repr__(self) -> str:
        text = self._op("repr")
        return text if type(text) is str else f"<remote {self._kind}>"

    def __str__(self) -> str:
        text = self._op("str")
        return text if type(text) is str else f"<remote {self._kind}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Handle) and other._peer is self._peer and other._id == self._id

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((id(self._peer), self._id))


# What the guarded (pytest) end refuses: no reflection (`_` names, modules), no writes.
_WRITES = frozenset({"setitem", "delitem"})


def _exact(value, kind: type):
    if type(value) is not kind:
        raise TypeError(f"remote returned {type(value).__name__}, not {kind.__name__}")
    return value


_OPS = {
    "iter": iter,
    "next": next,
    "len": len,
    "bool": bool,
    "contains": lambda o, x: x in o,
    "getitem": lambda o, k: o[k],
    "setitem": lambda o, k, v: o.__setitem__(k, v),
    "delitem": lambda o, k: o.__delitem__(k),
    "enter": lambda o: o.__enter__(),
    "exit": lambda o, *a: o.__exit__(*a),
    "repr": repr,
    "str": str,
}


class Peer:
    """One end of the wire: serves the other side's requests on its own objects and
    sends requests for the other side's objects, nested as calls call back."""

    def __init__(
        self, rfd: int, wfd: int, modules: frozenset[str] = frozenset(), *, guarded: bool = False
    ) -> None:
        self._r = os.fdopen(rfd, "rb", buffering=1 << 16)
        # The pytest process's end: what the other side may do with the objects the tests
        # handed it is limited to using them (see _perform).
        self._guarded = guarded
        self._wfd = wfd
        self._objects: dict[int, object] = {}
        self._ids: dict[int, int] = {}  # id(obj) -> handle id, for objects we export
        self._handles: dict[int, Handle] = {}
        self._classes: dict[int, type] = {}  # the other side's exception classes, here
        self._class_ids: dict[type, int] = {}
        self._modules = modules  # names the other side may import here (the worker's)
        self._next = 0

    # -- encoding --------------------------------------------------------------------

    def encode(self, value, depth: int = 0):
        kind = type(value)
        if kind in _SCALARS:
            if kind is float and not math.isfinite(value):
                return {"t": "float", "v": repr(value)}
            return value
        if depth > MAX_DEPTH:
            return self._export(value)
        if kind is list:
            return [self.encode(v, depth + 1) for v in value]
        if kind is tuple:
            return {"t": "tuple", "v": [self.encode(v, depth + 1) for v in value]}
        if kind is dict:
            items = [
                [self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in value.items()
            ]
            return {"t": "dict", "v": items}
        if kind in (set, frozenset):
            return {"t": kind.__name__, "v": [self.encode(v, depth + 1) for v in value]}
        if kind in (bytes, bytearray):
            return {"t": "bytes", "v": base64.b64encode(value).decode("ascii")}
        if isinstance(value, Handle) and value._peer is self:
            return {"t": "back", "v": value._id}
        if isinstance(value, type) and value in self._class_ids:
            return {"t": "back", "v": self._class_ids[value]}
        if isinstance(value, type) and _BUILTIN_TYPES.get(value.__name__) is value:
            return {"t": "type", "v": value.__name__}
        if self._guarded and isinstance(value, types.ModuleType):
            raise TypeError("a module of the tests is never handed to the candidate")
        for base, exact in _EXACT:  # subclasses travel as a copy of their base value
            if isinstance(value, base):
                return self.encode(exact(value), depth)
        return self._export(value)

    def _export(self, value) -> dict:
        ident = self._ids.get(id(value))
        if ident is None or self._objects.get(ident) is not value:
            self._next += 1
            ident = self._next
            self._objects[ident] = value
            self._ids[id(value)] = ident
        if isinstance(value, type) and issubclass(value, BaseException):
            bases = [c.__name__ for c in value.__mro__ if _BUILTIN_TYPES.get(c.__name__) is c]
            return {"t": "handle", "v": ident, "k": "exception", "n": value.__name__, "b": bases}
        kind = "class" if isinstance(value, type) else "callable" if callable(value) else "object"
        return {"t": "handle", "v": ident, "k": kind}

    def _exception_class(self, ident: int, name, bases) -> type:
        """The local stand-in for the other side's exception class: a subclass of the
        nearest builtin exception it derives from, with no code of its own, so
        `pytest.raises(module.ParseError)` and `except ValueError` both work."""
        cls = self._classes.get(ident)
        if cls is None:
            name = name if type(name) is str and name.isidentifier() else "RemoteError"
            base = next(
                (
                    _BUILTIN_TYPES[b]
                    for b in (bases if type(bases) is list else [])
                    if type(b) is str
                    and b in _BUILTIN_TYPES
                    and issubclass(_BUILTIN_TYPES[b], Exception)
                ),
                Exception,
            )
            cls = type(name, (base,), {"__module__": "evalpin_remote", "__qualname__": name})
            self._classes[ident] = cls
            self._class_ids[cls] = ident
        return cls

    def decode(self, data, depth: int = 0):
        """Rebuild a value from its wire form; anything unexpected is a ProtocolError."""
        kind = type(data)
        if kind in _SCALARS:
            return data
        if depth > MAX_DEPTH * 2:
            raise ProtocolError("nested too deeply")
        if kind is list:
            return [self.decode(v, depth + 1) for v in data]
        if (
            kind is not dict
            or set(data) - {"t", "v", "k", "n", "b"}
            or "t" not in data
            or "v" not in data
        ):
            raise ProtocolError("malformed value")
        tag, v = data["t"], data["v"]
        if tag == "float" and v in ("nan", "inf", "-inf"):
            return float(v)
        if tag in ("tuple", "set", "frozenset") and type(v) is list:
            items = [self.decode(x, depth + 1) for x in v]
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        if tag == "dict" and type(v) is list:
            pairs = [p for p in v if type(p) is list and len(p) == 2]
            if len(pairs) != len(v):
                raise ProtocolError("malformed dict")
            return {self.decode(k, depth + 1): self.decode(x, depth + 1) for k, x in pairs}
        if tag == "bytes" and type(v) is str:
            return base64.b64decode(v.encode("ascii"), validate=True)
        if tag == "type" and type(v) is str and v in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[v]
        if tag == "handle" and type(v) is int and data.get("k") == "exception":
            return self._exception_class(v, data.get("n"), data.get("b"))
        if tag == "handle" and type(v) is int and data.get("k") in ("class", "callable", "object"):
            handle = self._handles.get(v)
            if handle is None:
                handle = self._handles[v] = Handle(self, v, data["k"])
            return handle
        if tag == "back" and type(v) is int and v in self._objects:
            return self._objects[v]
        raise ProtocolError(f"unknown value tag {tag!r}")

    # -- messages --------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._wfd, view) :]
        except OSError as exc:
            raise RemoteGone(f"the other process is gone ({exc})") from None

    def _receive(self) -> dict:
        line = self._r.readline(MAX_MESSAGE + 1)
        if not line:
            raise RemoteGone("the other process closed the connection")
        if not line.endswith(b"\n"):
            raise ProtocolError("message too long or cut off")
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise ProtocolError("message is not JSON") from None
        if type(message) is not dict:
            raise ProtocolError("message is not an object")
        return message

    def request(self, op: str, **fields):
        """Send one request and serve the other side's requests until its answer."""
        __tracebackhide__ = True  # pytest shows the test's line, not the wire's
        mutable = _mutable_args(fields.get("args", []), fields.get("kwargs", {}))
        fields = {k: self._encode_field(k, v) for k, v in fields.items()}
        self._send({"op": op, **fields})
        while True:
            message = self._receive()
            if "op" in message:
                self._serve(message)
                continue
            if set(message) - {"ok", "err", "back"} or ("ok" in message) == ("err" in message):
                raise ProtocolError("malformed reply")
            self._copy_back(mutable, message.get("back", []))
            if "ok" in message:
                return self.decode(message["ok"])
            raise self._error(message["err"])

    def _copy_back(self, originals: list, data) -> None:
        """Arguments travel by value; a list, dict or set the other side changed in place
        is changed here too, with the plain data it had at the end of the call."""
        states = self.decode(data)
        if type(states) is not list or len(states) != len(originals):
            raise ProtocolError("malformed argument states")
        for original, state in zip(originals, states, strict=True):
            if type(state) is not type(original):
                raise ProtocolError("argument state of another type")
            if type(original) is list:
                original[:] = state
            else:
                original.clear()
                original.update(state)

    def _encode_field(self, key: str, value):
        if key in ("args", "value"):
            return self.encode(value)
        if key == "kwargs":
            return {str(k): self.encode(v) for k, v in value.items()}
        return value

    def serve_forever(self) -> None:
        """Answer requests until the other side closes the connection."""
        while True:
            try:
                message = self._receive()
            except RemoteGone:
                return
            if "op" not in message:
                raise ProtocolError("expected a request")
            self._serve(message)

    def _serve(self, message: dict) -> None:
        received: list = []
        try:
            result = self._perform(message, received)
        except BaseException as exc:  # everything the code raised goes back as data
            reply = {"err": self._error_data(exc)}
        else:
            reply = {"ok": self.encode(result)}
        if received:
            reply["back"] = self.encode(received)
        self._send(reply)

    def _perform(self, message: dict, received: list):
        op = message["op"]
        if op == "import":
            name = message.get("module")
            if name not in self._modules:
                raise ImportError(f"{name!r} is not a module this item may import")
            module = importlib.import_module(name)
            names = getattr(module, "__all__", None)
            if not isinstance(names, (list, tuple)) or not all(type(n) is str for n in names):
                names = [n for n in vars(module) if not n.startswith("_")]
            return {"id": self._export(module)["v"], "names": [str(n) for n in names]}
        target = self._objects.get(message.get("obj"))
        if target is None:
            raise ProtocolError("unknown object")
        if self._guarded and (op in ("setattr", "delattr") or message.get("name") in _WRITES):
            raise PermissionError("the candidate may not change the tests' objects")
        if op == "getattr":
            name = _name(message)
            if self._guarded and name.startswith("_"):
                raise AttributeError(f"{name!r}: the candidate sees public attributes only")
            value = getattr(target, name)
            if self._guarded and isinstance(value, types.ModuleType):
                raise AttributeError(f"{name!r}: the candidate gets no module of the tests")
            return value
        if op == "setattr":
            return setattr(target, _name(message), self.decode(message.get("value")))
        if op == "delattr":
            return delattr(target, _name(message))
        args = self.decode(message.get("args", []))
        if type(args) is not list:
            raise ProtocolError("args must be a list")
        if op == "call":
            raw = message.get("kwargs", {})
            if type(raw) is not dict:
                raise ProtocolError("kwargs must be an object")
            kwargs = {k: self.decode(v) for k, v in raw.items()}
            received += _mutable_args(args, kwargs)
            return target(*args, **kwargs)
        if op == "op" and message.get("name") in _OPS:
            return _OPS[message["name"]](target, *args)
        raise ProtocolError(f"unknown request {op!r}")

    def _error_data(self, exc: BaseException) -> dict:
        builtin = [c.__name__ for c in type(exc).__mro__ if _BUILTIN_TYPES.get(c.__name__) is c]
        try:
            args = self.encode(list(exc.args))
        except Exception:
            args = []
        data = {"types": builtin, "name": type(exc).__name__, "args": args, "text": _text(exc)}
        if _BUILTIN_TYPES.get(type(exc).__name__) is not type(exc):
            data["cls"] = self.encode(type(exc))
        return data

    def _error(self, data) -> BaseException:
        """The nearest builtin exception the other side's error can be rebuilt as."""
        if type(data) is not dict:
            return ProtocolError("malformed error")
        names = data.get("types")
        names = names if type(names) is list else []
        text = data.get("text") if type(data.get("text")) is str else ""
        try:
            args = self.decode(data.get("args", []))
        except ProtocolError:
            args = [text]
        args = args if type(args) is list else [text]
        try:
            own = self.decode(data["cls"]) if "cls" in data else None
        except ProtocolError:
            own = None
        # Only ever a class of ours: a stand-in made here, or one we sent and got back.
        if isinstance(own, type) and issubclass(own, Exception):
            try:
                return own(*args)
            except Exception:
                pass
        for name in names:
            cls = _BUILTIN_TYPES.get(name) if type(name) is str else None
            if cls is None or not issubclass(cls, BaseException):
                continue
            if not issubclass(cls, Exception):
                cls = RuntimeError
            try:
                return cls(*args)
            except Exception:
                try:
                    return cls(text)
                except Exception:
                    continue
        return RuntimeError(text)


def _mutable_args(args, kwargs) -> list:
    """The arguments a call may change in place, in the order both sides list them."""
    values = [*args, *kwargs.values()] if type(args) is list and type(kwargs) is dict else []
    return [v for v in values if type(v) in (list, dict, set)]


def _name(message: dict) -> str:
    name = message.get("name")
    if type(name) is not str:
        raise ProtocolError("attribute name must be a string")
    return name


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:4000]
    except Exception:
        return type(exc).__name__


# -- the two ends ---------------------------------------------------------------------

_client: Peer | None = None


def client() -> Peer:
    """The pytest process's end, from the descriptors the grader passed it."""
    global _client
    if _client is None:
        rfd, wfd = (int(x) for x in os.environ["EVALPIN_RPC_FDS"].split(","))
        _client = Peer(rfd, wfd, guarded=True)
    return _client


def stub(remote_name: str, namespace: dict) -> None:
    """Make a module (the generated stand-in for a candidate file) forward to the
    worker's real module: every attribute is looked up there when it is asked for."""
    peer = client()
    info = peer.request("import", module=remote_name)
    module = Handle(peer, info["id"], "object")
    namespace["__all__"] = list(info["names"])

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(module, name)

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = lambda: sorted(set(namespace) | set(info["names"]))


def worker(rfd: int, wfd: int, modules: list[str]) -> None:
    """The candidate's end: import only the item's modules, serve until the tests end."""
    Peer(rfd, wfd, frozenset(modules)).serve_forever()
