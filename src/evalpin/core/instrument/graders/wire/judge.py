"""The pytest process's end: builds proxy classes from the worker's descriptions, hands
the tests' objects over as capabilities by kind, and sends the test's environment with
each request."""

from __future__ import annotations

import builtins
import enum
import os
import pathlib
import sys
import types

from .kinds import (
    _OPS,
    _SPECIALS,
    _check_write,
    _ident_of,
    _kind,
    _plain,
    _read_attribute,
    _stdlib_name,
    _type_name,
    check_mock_value,
)
from .mirror import _scan, _within, _write_files
from .peer import Peer, _mutable_args, _name
from .proxies import (
    _COROUTINE,
    _REF,
    LIVE,
    _Bound,
    _call,
    _dataclass_fields,
    _hash,
    _Proxy,
    _Ref,
    _ref,
    _RemoteClass,
    _RemoteEnum,
    _RemoteMethod,
    _special,
    refill,
)
from .values import (
    _BUILTIN_TYPES,
    _COMPARISONS,
    _FORWARDED,
    _GONE,
    _IDENT,
    _IMMUTABLE_BASES,
    _MUTABLE_BASES,
    _SCALARS,
    _STDLIB,
    ProtocolError,
    Unsupported,
    _exception_bases,
    _exception_data,
    _text,
)


class Judge(Peer):
    """The pytest process's end: builds proxy classes from the worker's descriptions,
    hands the tests' objects over as capabilities by kind, and sends the test's
    environment with each request."""

    def __init__(self, rfd: int, wfd: int, *, sync_files: bool = True, notes: str = "") -> None:
        super().__init__(rfd, wfd)
        self._kinds: dict[int, str] = {}
        self._tests_root = os.path.realpath(os.getcwd())
        self._env = _environ()
        self._cwd = os.getcwd()
        self._sync = sync_files
        self._roots: list[str] = []
        self._new_roots: list[str] = []
        self._seen: dict[str, tuple[int, int]] = {}
        self._notes = notes
        self._stubs: dict[int, types.ModuleType] = {}
        self._overrides: dict[int, frozenset[str]] = {}  # tests' subclass methods
        self._patched: dict[tuple[str, str], object] = {}  # stdlib names a test patched
        self._first_values: dict[tuple[str, str], object] = {}

    # -- what rides along --------------------------------------------------------------

    def _outgoing(self, message: dict) -> None:
        env: dict = {}
        now = _environ(self._env)
        if now is not self._env:
            changed = {k: v for k, v in now.items() if self._env.get(k) != v}
            if changed:
                env["set"] = {os.fsdecode(k): os.fsdecode(v) for k, v in changed.items()}
            removed = [os.fsdecode(k) for k in self._env if k not in now]
            if removed:
                env["unset"] = removed
            self._env = now
        cwd = os.getcwd()
        if cwd != self._cwd:
            self._cwd = cwd
            real = os.path.realpath(cwd)
            if real == self._tests_root:
                env["cwd"] = None
            else:
                self.grant(real, folder=True)
                env["cwd"] = real
        if self._sync and (self._roots or self._new_roots):
            fs: dict = {}
            if self._new_roots:
                fs["roots"] = self._new_roots
                fs["dirs"] = {r: os.path.isdir(r) for r in self._new_roots}
                self._roots += self._new_roots
                self._new_roots = []
            try:
                fs.update(_scan(self._roots, self._seen) or {})
            except Unsupported as exc:
                self.unsupported(str(exc))
            env["fs"] = fs
        if env:
            message["env"] = env

    def _incoming(self, message: dict) -> None:
        for field, stream in (("o", sys.stdout), ("e", sys.stderr)):
            text = message.get(field)
            if type(text) is str and text:
                stream.write(text)
                stream.flush()
        fs = message.get("fs")
        if fs is not None:
            if not self._sync or type(fs) is not dict:
                raise ProtocolError("unexpected file sync")
            _write_files(fs, self._roots, self._seen)
        changed = message.get("lv")
        if type(changed) is list:
            for entry in changed:
                if type(entry) is not list or len(entry) != 2 or entry[0] not in self._remote:
                    raise ProtocolError("malformed shared container")
                target = self._remote[entry[0]]
                if type(target) in LIVE.values():
                    refill(target, self.decode(entry[1]))
        events = message.get("ev")
        if type(events) is list:
            self._replay([self.decode(e) for e in events])
        stale = message.get("stale")
        if type(stale) is list:
            for stub in self._stubs.values():
                known = stub.__dict__.get("_evalpin_known", {})
                for attr in [a for a, v in known.items() if _ident_of(v) in stale]:
                    del known[attr]

    def follow(self, target, name) -> None:
        """Mirror `target.name` into the worker when `target` is a standard-library
        module: the test's value, or the worker's own when the test restored it."""
        if not isinstance(target, types.ModuleType) or type(name) is not str:
            return
        module = getattr(target, "__name__", "")
        if module.split(".")[0] not in _STDLIB or getattr(target, "_evalpin_stub", False):
            return
        key = (module, name)
        if key not in self._patched:
            self._patched[key] = self._first_values.pop(key, _GONE)
        value = getattr(target, name, _GONE)
        if value is self._patched[key]:
            self.request("patch", name=name, args=[module, "restore"])
        elif value is _GONE:
            self.request("patch", name=name, args=[module, "delete"])
        else:
            self.request("patch", name=name, args=[module, "set", value])

    def remember(self, target, name) -> None:
        """Keep a standard-library attribute's value from before a test first patches
        it, so that setting it back is seen as a restore."""
        if isinstance(target, types.ModuleType) and type(name) is str:
            key = (getattr(target, "__name__", ""), name)
            if key not in self._patched and key not in self._first_values:
                self._first_values[key] = getattr(target, name, _GONE)

    def follow_all(self) -> None:
        for module, name in list(self._patched):
            self.follow(sys.modules.get(module), name)

    def _live(self, ident: int, kind: str, value):
        cls = LIVE[kind]
        if type(value) is not cls.__mro__[1]:
            raise ProtocolError("malformed shared container")
        obj = self._remote.get(ident)
        if type(obj) is not cls:
            obj = cls()
            object.__setattr__(obj, _REF, _Ref(self, ident))
            self._remote[ident] = obj
        refill(obj, value)
        return obj

    def subclassed(self, obj, methods: list[str]) -> int:
        """Export a tests' subclass instance whose `methods` the worker calls back."""
        ident = self._give(obj)
        self._kinds[ident] = "subclass"
        self._overrides[ident] = frozenset(methods)
        return ident

    def adopt(self, remote: int, obj) -> None:
        """The worker's id for a tests' subclass instance made there."""
        self._remote[remote] = obj

    def _replay(self, events: list) -> None:
        """Re-emit the candidate's log records and warnings here, through the test's
        own loggers and warning filters (caplog, pytest.warns, -W error)."""
        import logging
        import warnings

        for event in events:
            if type(event) is not list or not event:
                raise ProtocolError("malformed event")
            if event[0] == "l" and len(event) == 7 and type(event[2]) is int:
                _, name, level, text, path, lineno, func = event
                logger = logging.getLogger(str(name)) if name != "root" else logging.getLogger()
                if logger.isEnabledFor(level):
                    record = logger.makeRecord(
                        logger.name,
                        level,
                        str(path),
                        int(lineno),
                        str(text),
                        None,
                        None,
                        str(func),
                    )
                    logger.handle(record)
            elif event[0] == "w" and len(event) == 5:
                _, text, category, path, lineno = event
                if not (isinstance(category, type) and issubclass(category, Warning)):
                    category = UserWarning
                warnings.warn_explicit(str(text), category, str(path), int(lineno))
            else:
                raise ProtocolError("malformed event")

    def grant(self, path: str, *, folder: bool = False) -> None:
        """Mirror the files under `path` (a file, a folder, or one not yet made) into
        the worker, both ways, from now on. Only under /tmp-like scratch or the tests'
        folder: the judge's own system is never mirrored."""
        if not self._sync:
            return
        real = os.path.realpath(path)
        scratch = os.path.realpath(os.environ.get("TMPDIR") or "/tmp")
        if not (_within(real, [scratch, self._tests_root])):
            return
        if real in (scratch, "/") or _within(real, self._roots + self._new_roots):
            return
        self._new_roots.append(real)

    # -- exporting the tests' objects ----------------------------------------------------

    def _back(self, value):
        ref = _ref(value) if not isinstance(value, type) else value.__dict__.get(_REF)
        if type(ref) is _Ref and ref.peer is self:
            return {"t": "b", "v": ref.ident}
        if isinstance(value, _Bound) and value.ref.peer is self:
            return {"t": "bm", "v": value.ref.ident, "n": value.name}
        if isinstance(value, enum.Enum) and type(value).__dict__.get(_REF) is not None:
            cls_ref = type(value).__dict__[_REF]
            if cls_ref.peer is self:
                return {"t": "em", "c": {"t": "b", "v": cls_ref.ident}, "v": value._name_}
        return None

    def encode(self, value, depth: int = 0):
        kind = type(value)
        if kind in _FAST:  # most values: nothing to grant or convert
            return super().encode(value, depth)
        if kind is str:
            if self._sync and value.startswith("/") and _names_a_path(value):
                self.grant(value, folder=os.path.isdir(value))
            return super().encode(value, depth)
        if type(value).__name__ == "LocalPath" and hasattr(value, "__fspath__"):
            value = pathlib.Path(os.fspath(value))  # pytest's legacy `tmpdir`
        if isinstance(value, (pathlib.PurePath, str)) and self._sync:
            text = str(value)
            if text.startswith("/") and (
                isinstance(value, pathlib.PurePath) or os.path.exists(text)
            ):
                self.grant(text, folder=os.path.isdir(text))
            if isinstance(value, str) and type(value) is not str:
                value = str.__str__(value)
        elif (
            type(value) not in _SCALARS
            and not isinstance(value, _Proxy)
            and not isinstance(type(value), _RemoteEnum)
        ):
            for base, exact in (
                (int, int.__index__),
                (float, float.__float__),
                (bytes, bytes.__bytes__),
            ):
                if isinstance(value, base) and type(value) is not base and type(value) is not bool:
                    value = exact(value)
                    break
        return super().encode(value, depth)

    def _export(self, value, e):
        if isinstance(value, BaseException):
            if _BUILTIN_TYPES.get(type(value).__name__) is type(value):
                return _exception_data(value, e)
            args = e(list(value.args)) if _plain(value.args) else [e(_text(value))]
            return {
                "t": "xs",
                "v": self._give(value),
                "n": type(value).__name__,
                "b": _exception_bases(type(value)),
                "a": args,
            }
        named = _stdlib_name(value)
        if named is not None:  # the worker's own copy of it, by name
            return {"t": "sref", "v": named[0], "n": named[1]}
        kind = _kind(value, self._tests_root)
        if kind is None:
            self.unsupported(f"handing a {_type_name(value)} to the candidate")
        ident = self._give(value)
        self._kinds[ident] = kind
        return {"t": "h", "v": ident, "k": kind}

    def unsupported(self, what: str):
        """Record an operation the wire cannot carry (the grade becomes
        sandbox_error:unsupported, not a failure of the candidate's) and refuse it."""
        sys.stderr.write(f"[evalpin] unsupported under process isolation: {what}\n")
        if self._notes:
            with open(self._notes, "a", encoding="utf-8") as f:
                f.write(what.replace("\n", " ") + "\n")
        raise Unsupported(f"{what}: not supported under isolation: process")

    # -- rebuilding the candidate's objects ---------------------------------------------

    def _decode_remote(self, tag: str, data: dict, d):
        v = data["v"]
        if type(v) is not int and tag != "em":
            raise ProtocolError("malformed reference")
        if tag == "k":
            return self._local_class(data, d)
        if tag == "live" and data.get("k") in LIVE:
            return self._live(v, data["k"], d(data.get("x")))
        if tag == "o":
            cls = d(data.get("c"))
            if not (isinstance(cls, type) and issubclass(cls, _Proxy)) or v in self._remote:
                raise ProtocolError("malformed object")
            return self._instance(cls, v, data, d)
        if tag == "em" and type(v) is str:
            cls = d(data.get("c"))
            if not isinstance(cls, _RemoteEnum) or v not in cls.__members__:
                raise ProtocolError("malformed enum member")
            return cls[v]
        raise ProtocolError(f"unknown value tag {tag!r}")

    def _instance(self, cls: type, ident: int, data: dict, d):
        ref = _Ref(self, ident)
        value = d(data["x"]) if "x" in data else None
        if issubclass(cls, BaseException):
            args = value if type(value) is list else []
            base = next(c for c in cls.__mro__ if _BUILTIN_TYPES.get(c.__name__) is c)
            try:
                obj = base.__new__(cls, *args)
                base.__init__(obj, *args)
            except Exception:
                obj = base.__new__(cls)
            object.__setattr__(obj, _REF, ref)
        elif cls._evalpin_value is not None:
            base = cls._evalpin_value
            if type(value) is not base:
                raise ProtocolError("value of another type")
            obj = base.__new__(cls, value)
            object.__setattr__(obj, _REF, ref)
        else:
            obj = object.__new__(cls)
            object.__setattr__(obj, _REF, ref)
        self._remote[ident] = obj
        return obj

    def _local_class(self, data: dict, d) -> type:
        ident = data["v"]
        if ident in self._remote:
            raise ProtocolError("class described twice")
        self._remote[ident] = None  # in progress: a base naming it back is malformed
        name = data.get("n") if type(data.get("n")) is str and _IDENT(data["n"]) else "Remote"
        qualname = data.get("q") if type(data.get("q")) is str else name
        module = data.get("m") if type(data.get("m")) is str else "remote"
        bases = d(data.get("b", []))
        if type(bases) is not list or not all(
            isinstance(b, type) and issubclass(b, _Proxy) for b in bases
        ):
            raise ProtocolError("malformed bases")
        ref = _Ref(self, ident)
        if "e" in data:
            cls = self._local_enum(name, data["e"], ref, d)
        else:
            cls = self._proxy_class(name, bases, data, ref)
        cls.__qualname__, cls.__module__ = qualname[:200], module[:200]
        self._remote[ident] = cls
        return cls

    def _proxy_class(self, name: str, bases: list, data: dict, ref: _Ref) -> type:
        names = lambda key: [n for n in data.get(key, []) if type(n) is str]  # noqa: E731
        ns: dict = {_REF: ref}
        ns["_evalpin_compares"] = frozenset(n for n in names("c") if n in _COMPARISONS)
        for dunder in names("d"):
            if dunder in _FORWARDED:
                ns[dunder] = _call if dunder == "__call__" else _special(dunder)
        for method in names("fn"):
            if _IDENT(method) and not method.startswith("_evalpin"):
                ns[method] = _RemoteMethod(method)
        if data.get("m") == "builtins" and data.get("n") == "coroutine":
            ns.update(_COROUTINE)
        if data.get("nohash") is True:
            ns["__hash__"] = None
        elif data.get("h") is True:
            ns["__hash__"] = _hash
        if "f" in data:
            ns["__dataclass_fields__"] = _dataclass_fields(data["f"])
        if "ma" in data:
            ns["__match_args__"] = tuple(n for n in names("ma") if _IDENT(n))
        trusted: list[type] = []
        value_base = data.get("vb")
        value_type = None
        if value_base in _IMMUTABLE_BASES:
            value_type = _IMMUTABLE_BASES[value_base][0]
            if not any(issubclass(b, value_type) for b in bases):
                trusted.append(value_type)
            for dunder in [n for n in ns if n in _COMPARISONS or n == "__hash__"]:
                del ns[dunder]
            for i, field in enumerate(names("nt")):
                if _IDENT(field) and field not in ns:
                    ns[field] = property(lambda self, i=i: tuple.__getitem__(self, i))
            if "nt" in data:
                ns["_fields"] = tuple(n for n in names("nt") if _IDENT(n))
        elif value_base in _MUTABLE_BASES:
            ns["_evalpin_snapshot"] = _MUTABLE_BASES[value_base][0]
        exceptions = data.get("x")
        if type(exceptions) is list:
            builtin = [
                _BUILTIN_TYPES[n]
                for n in exceptions
                if type(n) is str
                and n in _BUILTIN_TYPES
                and issubclass(_BUILTIN_TYPES[n], BaseException)
            ]
            builtin = [
                c if issubclass(c, Exception) or c is SystemExit else RuntimeError
                for c in builtin[:1]
            ] or [Exception]
            if not any(issubclass(b, builtin[0]) for b in bases):
                trusted += builtin
            for dunder in [n for n in ns if n in _COMPARISONS or n == "__hash__"]:
                del ns[dunder]
        ns["_evalpin_value"] = value_type
        chain = [*bases, *trusted] or [_Proxy]
        if not any(issubclass(b, _Proxy) for b in chain):
            chain.append(_Proxy)
        try:
            return _RemoteClass(name, tuple(chain), ns)
        except TypeError:  # bases whose layouts or orders do not combine here
            return _RemoteClass(name, (*trusted, _Proxy), ns)

    def _local_enum(self, name: str, spec, ref: _Ref, d) -> type:
        """The candidate's enum rebuilt from its members' names and values with the
        stdlib's own enum classes; its methods forward to the worker's members."""
        if type(spec) is not list or len(spec) != 2 or type(spec[1]) is not list:
            raise ProtocolError("malformed enum")
        base = getattr(enum, spec[0], enum.Enum) if type(spec[0]) is str else enum.Enum
        if not (isinstance(base, type) and issubclass(base, enum.Enum)):
            base = enum.Enum
        members = []
        for entry in spec[1]:
            if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not str:
                raise ProtocolError("malformed enum member")
            if not _IDENT(entry[0]) or entry[0].startswith("_"):
                raise ProtocolError("malformed enum member")
            members.append((entry[0], d(entry[1])))
        peer = self

        def __getattr__(member, attr):
            if attr.startswith("_"):
                raise AttributeError(attr)
            return peer.request("member", obj=ref.ident, name=attr, args=[member._name_])

        def build(base: type, members: list) -> type:
            ns = _RemoteEnum.__prepare__(name, (base,))
            for member, value in members:
                ns[member] = value
            ns["__getattr__"] = __getattr__
            return _RemoteEnum(name, (base,), ns)

        try:
            cls = build(base, members)
        except (TypeError, ValueError):  # values this base refuses here: names only
            cls = build(enum.Enum, [(n, i) for i, (n, _) in enumerate(members)])
        type.__setattr__(cls, _REF, ref)
        return cls

    # -- serving the worker's requests on the tests' objects ----------------------------

    def _perform(self, message: dict, received: list):
        op = message["op"]
        if op == "input":
            args, _ = self._arguments(message)
            return builtins.input(*args[:1])
        if op == "stdin":
            name = _name(message)
            if name not in ("read", "readline", "readlines"):
                raise ProtocolError("unknown stdin read")
            args, _ = self._arguments(message)
            return getattr(sys.stdin, name)(*args[:1])
        target = self._target(message)
        kind = self._kinds.get(message["obj"])
        if kind is None:
            raise PermissionError("the candidate may only use what the tests handed it")
        if op == "getattr":
            return _read_attribute(target, kind, _name(message))
        if op in ("setattr", "delattr"):
            _check_write(target, kind, _name(message))
            if op == "delattr":
                return delattr(target, _name(message))
            (value,), _ = self._arguments(message)
            if kind == "mock":
                check_mock_value(_name(message), value)
            return setattr(target, _name(message), value)
        args, kwargs = self._arguments(message)
        if op == "method" and kind == "subclass":  # the worker calls a test's override
            name = _name(message)
            if name not in self._overrides.get(message["obj"], ()):
                raise AttributeError(f"{name!r} is not overridden by the tests' class")
            return getattr(target, name)(*args, **kwargs)
        if op == "call":
            if not callable(target) or kind in ("iter", "file"):
                raise TypeError(f"the tests' {kind} is not callable")
            received += _mutable_args(args, kwargs)
            return target(*args, **kwargs)
        if op == "special":
            name = _name(message)
            if name not in _SPECIALS[kind]:
                raise TypeError(f"{name} is not something the tests' {kind} does")
            received += _mutable_args(args, {})
            return _OPS[name](target, *args)
        raise ProtocolError(f"unknown request {op!r}")


def _names_a_path(text: str) -> bool:
    """A string the tests hand over that names a file or folder, or one about to be
    made in an existing folder (`str(tmp_path / "out.txt")`)."""
    return len(text) < 4096 and (
        os.path.exists(text) or os.path.isdir(os.path.dirname(text) or "/-")
    )


_FAST = frozenset({int, float, bool, type(None), list, tuple, dict, set, frozenset, bytes})


def _environ(last: dict | None = None) -> dict:
    """The process environment as bytes, `last` itself when it has not changed: one C
    comparison of `os.environ`'s own mapping, cheap enough for every message."""
    data = getattr(os.environ, "_data", None)
    if type(data) is not dict:
        data = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    return last if last is not None and data == last else dict(data)
