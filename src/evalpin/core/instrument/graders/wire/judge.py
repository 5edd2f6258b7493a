"""The pytest process's end: rebuilds the candidate's objects as proxies (`classes`),
hands the tests' objects over as capabilities by kind (`kinds`), and sends the test's
environment with each request."""

from __future__ import annotations

import builtins
import contextlib
import enum
import os
import pathlib
import sys
import threading
import types
import unittest
import weakref

from . import inherent, kinds, logs, notes, process, stdlib, tests_enums, tests_own, tracebacks
from .bound import Bound
from .channel import SideChannel
from .classes import HARNESS, IO_BASES, local_enum, proxy_class
from .exceptions import apply_details, by_value, exception_bases, with_details
from .functions import presented
from .installed import interpreters_own
from .lifetimes import TestsObjects
from .namesakes import TestsModules
from .peer import Peer
from .protocol import GONE, ProtocolError, RemoteGone, is_ident, name_of
from .proxies import REF, ProxyBase, Ref, RemoteClass, RemoteEnum, attach, bind, ref_of
from .shares import Shares, fingerprint, merge
from .state import TestState
from .stdlib import BUILTIN_TYPES, trusted_module


class Judge(Peer):
    """The pytest process's end: builds proxy classes from the worker's descriptions,
    hands the tests' objects over as capabilities by kind, and sends the test's
    environment with each request."""

    introduce_shares = True

    def __init__(self, fds: list[int], *, notes: str = "", modules=()) -> None:
        super().__init__(fds[0], fds[1], threading.main_thread().ident)
        self.shares = Shares(sign=-1)  # the keys of the tests' containers kept in step
        self._modules = frozenset(modules)
        self._kinds: dict[int, str] = {}
        self._tests_root = self.tests_root = os.path.realpath(process.getcwd())
        process.follow_moves()  # (done before pytest already, by `stubs.guard_imports`)
        self._process = process.now()  # the environment and folder in step
        self._notes = inherent.at(notes)
        self.stubs: dict[int, types.ModuleType] = {}
        self._overrides: dict[type, frozenset[str]] = {}  # tests' subclass methods
        self._patched: dict[tuple[str, str], object] = {}  # stdlib names a test patched
        self._first_values: dict[tuple[str, str], object] = {}
        self._proxies: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._pickled: dict[int, object] = {}
        self.lives = TestsObjects(self._objects, self._ids)
        self._pending: list = []  # log records and warnings to re-emit
        self.verdicts: dict[int, object] = {}  # the judge's truth of comparison answers
        self.abstract: set[int] = set()  # the candidate's objects marked abstract
        self.stepping: dict = {}  # generators of awaitables a task drives by `send`
        self.test_loop = None  # the test's event loop, while it awaits the candidate
        self.state = TestState()
        self._tests_modules = TestsModules(
            lambda module: kinds.tests_module(module, self._tests_root),
            lambda cls: kinds.tests_class(cls, self._tests_root),
            self._modules,
        )
        bind(self)
        if len(fds) == 4:
            self._side = SideChannel(self, fds[2], fds[3], "j")

    # -- what rides along --------------------------------------------------------------

    def _outgoing(self, message: dict) -> None:
        env: dict = {}
        self._process = process.changes(env, self._process)
        dead = self.lives.deaths()
        if dead:
            message["dead"] = dead
        names = self._tests_modules.changed()
        if names:  # the tests' modules, by name in the worker (`namesakes`)
            message["tm"] = names
        if "op" in message:
            state = self.state.changes()
            if state:
                env["st"] = state
            handled = tracebacks.handled(self)
            if handled is not None:  # the exception the test is handling, there too
                message["hx"] = handled
        if env:
            message["env"] = env

    def _incoming(self, message: dict) -> None:
        self.lives.apply(message, self.decode)
        if "o" in message or "e" in message or "ob" in message or "eb" in message:
            logs.write_output(message)
        if "env" in message:  # what the candidate changed of the process's state
            self._process = process.apply(message["env"], self._process)
        events = message.get("ev")
        if type(events) is list:
            self._pending += [self.decode(e) for e in events]
        stale = message.get("stale")
        if type(stale) is list:
            for stub in self.stubs.values():
                known = stub.__dict__.get("_evalpin_known", {})
                for attr in [
                    a for a, v in known.items() if getattr(ref_of(v), "ident", None) in stale
                ]:
                    del known[attr]

    def _answer(self, reply: dict, mutable: list):
        __tracebackhide__ = True
        try:
            return super()._answer(reply, mutable)
        finally:  # what the worker let go of, once the reply's value is held here
            self.lives.settle()

    def serve(self, message: dict) -> None:
        try:
            super().serve(message)
        finally:
            self.lives.settle()

    def parse(self, line: bytes) -> dict:
        message = super().parse(line)
        if self._pending:  # outside the state lock: the test's handlers run here
            events, self._pending = self._pending, []
            for event in events:
                logs.replay(event)
        return message

    def follow(self, target, name) -> None:
        """Mirror `target.name` into the worker when `target` is a standard-library or
        installed library's module (`matplotlib.pyplot.show`, `requests.get`): the
        test's value, or the worker's own when the test restored it."""
        module = interpreters_own(target)
        if module is None or type(name) is not str:
            return
        key = (module, name)
        if key == ("sys", "argv"):
            self.state.followed_argv()
        if key not in self._patched:
            self._patched[key] = self._first_values.pop(key, GONE)
        value = getattr(target, name, GONE)
        if value is self._patched[key]:
            self.request("patch", name=name, args=[module, "restore"])
        elif value is GONE:
            self.request("patch", name=name, args=[module, "delete"])
        else:
            self.request("patch", name=name, args=[module, "set", value])

    def remember(self, target, name) -> None:
        """Keep a standard-library attribute's value from before a test first patches
        it, so that setting it back is seen as a restore."""
        if isinstance(target, types.ModuleType) and type(name) is str:
            key = (getattr(target, "__name__", ""), name)
            if key not in self._patched and key not in self._first_values:
                self._first_values[key] = getattr(target, name, GONE)

    def follow_all(self) -> None:
        for module, name in list(self._patched):
            self.follow(sys.modules.get(module), name)

    def subclassed(self, cls: type, methods: list[str]) -> int:
        """Export a tests' subclass of a candidate class, whose `methods` (those it
        overrides) the worker calls back on its instances."""
        self._overrides[cls] = frozenset(methods)
        ident = self.give(cls)
        self._kinds[ident] = "object"
        return ident

    def adopt(self, remote: int, obj) -> None:
        """The worker's id for a tests' subclass instance made there."""
        self._proxies[remote] = obj
        self._kinds[self._ids[id(obj)]] = "subclass"

    def note_loop(self) -> None:
        """Remember the test's running loop: what the candidate awaits of it runs there."""
        import asyncio

        with contextlib.suppress(RuntimeError):
            self.test_loop = asyncio.get_running_loop()

    def keep(self, obj) -> int:
        """Hold `obj` (a pickled proxy's copy) until the test unpickles it."""
        ref = ref_of(obj)
        if ref is None:
            raise ProtocolError("not a proxy")
        self._pickled[ref.ident] = obj
        return ref.ident

    def kept(self, ident: int):
        if ident not in self._pickled:
            raise ValueError("a pickled object of the candidate's from another session")
        return self._pickled[ident]

    # -- exporting the tests' objects ----------------------------------------------------

    def _back(self, value):
        ref = ref_of(value)
        if ref is not None and ref.peer is self:
            return {"t": "b", "v": ref.ident}
        if isinstance(value, types.ModuleType) and "_evalpin_module" in vars(value):
            module = vars(value)["_evalpin_module"].ref  # a candidate module's stand-in
            if module.peer is self:
                return {"t": "b", "v": module.ident}
        made = vars(value).get("_evalpin_sub") if isinstance(value, RemoteClass) else None
        if type(made) is int:  # a tests' class derived from the candidate's: made there
            return {"t": "b", "v": made}
        if issubclass(type(value), Bound) and value.ref.peer is self:
            return {"t": "bm", "v": value.ref.ident, "n": value.name}
        if isinstance(value, enum.Enum) and type(value).__dict__.get(REF) is not None:
            cls_ref = type(value).__dict__[REF]
            if cls_ref.peer is self:
                data = {"t": "em", "c": {"t": "b", "v": cls_ref.ident}, "v": value._name_}
                if type(value).__members__.get(value._name_) is not value:
                    data["v"], data["x"] = None, self.encode(value._value_)
                return data
        return None

    def encode(self, value, depth: int = 0, copy: bool = False):
        kind = type(value)
        if kind in _FAST:  # most values: nothing to grant or convert
            return super().encode(value, depth, copy)
        if kind is str:
            return super().encode(value, depth, copy)
        if type(value).__name__ == "LocalPath" and hasattr(value, "__fspath__"):
            value = pathlib.Path(os.fspath(value))  # pytest's legacy `tmpdir`
        elif kind is types.ModuleType:  # the tests' own module, handed: its names too
            self._tests_modules.hand(value)
        if isinstance(value, enum.Enum):  # a tests' enum's member: the worker's enum's
            is_tests = lambda cls: kinds.tests_class(cls, self._tests_root)  # noqa: E731
            member = tests_enums.member_form(value, is_tests, lambda v: self.encode(v, depth + 1))
            if member is not None:
                return member
        if isinstance(value, ProxyBase) or isinstance(type(value), RemoteEnum):
            pass  # the candidate's own object, a `str` or `int` stand-in too: itself
        elif isinstance(value, str):
            value = str.__str__(value)
        else:
            for base, exact in (
                (int, int.__index__),
                (float, float.__float__),
                (bytes, bytes.__bytes__),
            ):
                if isinstance(value, base) and type(value) is not base and type(value) is not bool:
                    value = exact(value)
                    break
        return super().encode(value, depth, copy)

    def stable(self, value) -> bool:
        """Never by id alone from here: a class of the tests' crosses as its handle each
        time (the worker holds handles weakly and finds a live one by the handle's id)."""
        return False

    def _export(self, value, e):
        if isinstance(value, BaseException):
            plain = by_value(value, e)
            if plain is not None:  # a copy there; raised or handed back, this very one
                ident = self._ids.get(id(value))
                if ident is None or self._objects.get(ident) is not value:
                    ident = self.give(value)
                plain["i"] = ident
                return plain
            args = e(list(value.args)) if kinds.plain_args(value.args) else [e(str(value))]
            data = {
                "t": "xs",
                "v": self.give(value),
                "c": self._class_ident(type(value)),  # one stand-in class per class
                "n": type(value).__name__,
                "b": exception_bases(type(value)),
                "a": args,
            }
            return with_details(data, value, e)
        bound = stdlib.value_method_form(value, e)
        if bound is not None:
            return bound
        kind = kinds.kind_of(value, self._tests_root)
        if kind is None:
            self.unsupported(f"handing a {kinds.type_name(value)} to the candidate")
        ident = self.lives.again(value)
        fresh = ident is None
        if fresh:
            ident = self.give(value)
        self._kinds[ident] = kind
        self._sent[ident] = self._sent.get(ident, 0) + 1
        data = {"t": "h", "v": ident, "k": kind}
        if self.lives.weak(value):
            data["w"] = 1  # the worker keeps its handle while the test's object lives
        binds = kinds.descriptor(value, kind)
        if binds is not None:
            data["ds"] = binds
        if binds == "fn" and fresh:  # what the worker's real function for it shows
            data["f"] = kinds.function_spec(value, e, self._crosses)
        elif binds == "fn" and vars(value):  # its marks as they are now
            data["at"] = kinds.function_marks(value, e, self._crosses)
        if kind != "object":
            return kinds.with_spec(data, value, kind, e, self._tests_root)
        if not isinstance(value, type):
            data["c"] = self._tests_class(type(value), value, e)
        elif issubclass(value, BaseException):  # the class its instances' stand-ins have
            data["xc"], data["n"] = exception_bases(value), value.__name__
        else:  # a class there, the one its instances' stand-ins have
            data["tc"] = self._tests_class(value, None, e)
        return data

    def _crosses(self, value) -> bool:
        """Whether `value` crosses as itself without a refusal: a candidate's object, or
        a test's object of a kind the worker may use."""
        return isinstance(value, ProxyBase) or kinds.kind_of(value, self._tests_root) is not None

    def _class_ident(self, cls: type) -> int:
        """The id a tests' class has here, the same whether the class or one of its
        instances crossed first."""
        ident = self._ids.get(id(cls))
        if ident is None or self._objects.get(ident) is not cls:
            ident = self.give(cls)
        self._kinds[ident] = "object"
        return ident

    def _tests_class(self, cls: type, value, e) -> dict:
        """What the worker's stand-in class for a tests' class needs (`kinds.class_spec`),
        under the id the class has here; an enum's members too (`tests_enums`)."""
        data = kinds.class_spec(self._class_ident(cls), cls, value, e)
        members = tests_enums.spec(cls, e, self._class_ident)
        return {**data, "en": members} if members else data

    def not_believed(self, cls: str, name: str, other) -> None:
        """Note (once a kind in each test, the first 50) a comparison of a candidate's
        object with the tests' data its own rule would answer in-process, not believed
        here: should that test fail, the case says why."""
        kind = type(other)
        shown = kind.__qualname__ if kind.__module__ == "builtins" else kinds.type_name(other)
        inherent.scoped(
            "compared", f"{cls}.{name} with the tests' {shown}: the candidate's own answer"
        )

    def refuse(self, what: str, kind: str = "unsupported") -> None:
        """Record what the wire cannot carry (the worker's refusals too, as it tells
        them), or (`kind`) why else the case is not judged."""
        sys.stderr.write(f"[evalpin] {kind} under process isolation: {what}\n")
        if self._notes:
            with open(self._notes, "a", encoding="utf-8") as f:
                f.write(notes.line(kind, what))

    def _error(self, data) -> BaseException:
        """The worker's error; one the wire meets by design (`inherent.met`) noted."""
        return inherent.met(super()._error(data), self._objects.values())

    def uncarried_error(self, text: str) -> BaseException:
        self.refuse("an exception of the candidate's that the wire could not carry")
        return RuntimeError(text)

    def held(self, value) -> bool:
        """Whether the worker holds `value`: the candidate's, or a test's handed before."""
        ident = self._ids.get(id(value))
        held = ident is not None and self._objects.get(ident) is value and ident in self._kinds
        return held or self._back(value) is not None

    # -- rebuilding the candidate's objects ---------------------------------------------

    def importer(self, name: str):
        if name in self._modules and name not in sys.modules:
            import importlib

            return importlib.import_module(name)  # a stand-in the grader wrote
        return trusted_module(name)

    def stand_in(self, ident: int):
        found = self._proxies.get(ident)
        return found if found is not None else self._remote.get(ident)

    def ident_of(self, obj) -> int | None:
        ref = ref_of(obj)
        return ref.ident if ref is not None and ref.peer is self else None

    def _decode_remote(self, tag: str, data: dict, d):
        v = data["v"]
        if type(v) is not int and tag != "em":
            raise ProtocolError("malformed reference")
        if tag == "k":
            known = self._remote.get(v)
            return known if isinstance(known, type) else self._local_class(data, d)
        if tag == "o":
            self._received[v] = self._received.get(v, 0) + 1
            known = self.stand_in(v)
            if known is not None:
                return known
            cls = d(data.get("c"))
            if not (isinstance(cls, type) and issubclass(cls, ProxyBase)):
                raise ProtocolError("malformed object")
            return presented(self, self._instance(cls, v, data, d), v, data, d)
        if tag == "em":  # of the candidate's enum, or a tests' one's flags combined
            ours = lambda cls: kinds.tests_class(cls, self._tests_root)  # noqa: E731
            return tests_enums.member(d(data.get("c")), v, data, d, RemoteEnum, ours)
        if tag == "r":
            return self._described(v)
        if tag == "tx":
            return self._tests_exception(v, d(data.get("a")), d(data.get("kw")))
        if tag == "b":  # a test's object the worker holds loosely: still loosely
            found = self.lives.loose.get(v)
            if found is not None and found() is not None:
                return found()
        raise ProtocolError(f"unknown value tag {tag!r}")

    def _tests_exception(self, ident: int, args, kwargs) -> BaseException:
        """An exception of a tests' exception class the candidate raised (with the class
        the test handed it): made here by the tests' own class, of the candidate's
        arguments, as it would be in one process (a constructor's error in its place)."""
        cls = self._objects.get(ident)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise ProtocolError("not an exception class of the tests'")
        if self._kinds.get(ident) != "object" or type(args) is not list or type(kwargs) is not dict:
            raise ProtocolError("malformed exception of the tests'")
        if not all(type(k) is str for k in kwargs):
            raise ProtocolError("malformed exception of the tests'")
        try:
            return cls(*args, **kwargs)
        except Exception as error:
            return error

    def _described(self, ident: int) -> type:
        """A class the worker refers to by id before this side has read its description:
        one this side asked about while a message that describes it was still being
        read (a base's check during a class's making). Asked for again, whole."""
        try:
            found = self.request("describe", obj=ident)
        except (RemoteGone, ProtocolError):
            raise
        except Exception:  # the worker knows no such object: the reference was forged
            raise ProtocolError("unknown class") from None
        if not isinstance(found, type) or self._remote.get(ident) is not found:
            raise ProtocolError("unknown class")
        return found

    def _instance(self, cls: type, ident: int, data: dict, d):
        ref = Ref(self, ident)
        if data.get("ia") == 1:
            self.abstract.add(ident)
        if cls._evalpin_container is not None and not issubclass(cls, BaseException):
            base, key = cls._evalpin_container, data.get("sk")
            if type(key) is not int:
                raise ProtocolError("malformed container")
            obj = base.__new__(cls)  # known by its key before its contents (a cycle)
            attach(obj, ref)
            self._remote[ident] = obj
            self.shares.add(key, obj, base.__name__)
            merge(obj, self._rebuilt(base.__name__, data.get("x")), self.shares.ids)
            self.shares.entries[key][1] = fingerprint(obj, 0, self.shares.ids)
            return obj
        value = d(data["x"]) if "x" in data else None
        if issubclass(cls, BaseException):
            args = value if type(value) is list else []
            base = next(c for c in cls.__mro__ if BUILTIN_TYPES.get(c.__name__) is c)
            try:
                obj = base.__new__(cls, *args)
                base.__init__(obj, *args)
            except Exception:
                obj = base.__new__(cls)
            attach(obj, ref)
            apply_details(obj, data, d)
            self._remote[ident] = obj
            return obj
        if cls._evalpin_value is not None:
            base = cls._evalpin_value
            if type(value) is not base:
                raise ProtocolError("value of another type")
            obj = base.__new__(cls, value)
            attach(obj, ref)
            self._remote[ident] = obj
            return obj
        obj = object.__new__(cls)
        attach(obj, ref)
        try:
            self._proxies[ident] = obj
        except TypeError:
            self._remote[ident] = obj
        return obj

    def _local_class(self, data: dict, d) -> type:
        ident = data["v"]
        self._remote[ident] = None  # in progress: a base naming it back is malformed
        name = data.get("n") if is_ident(data.get("n")) else "Remote"
        qualname = data.get("q") if type(data.get("q")) is str else name
        module = data.get("m") if type(data.get("m")) is str else "remote"
        bases = d(data.get("b", []))
        if type(bases) is not list or not all(
            isinstance(b, type) and issubclass(b, ProxyBase) for b in bases
        ):
            raise ProtocolError("malformed bases")
        stdlib_bases = []
        for entry in data.get("sb") or []:
            if entry == list(HARNESS):  # not a name the candidate may hand over: a base
                stdlib_bases.append(unittest.TestCase)
            elif type(entry) is list and tuple(entry) in IO_BASES:  # registered with
                stdlib_bases.append(IO_BASES[tuple(entry)])
            elif type(entry) is list and len(entry) == 2:
                try:
                    found = d({"t": "sfn", "v": entry[0], "n": entry[1]})
                except ProtocolError:
                    continue
                if isinstance(found, type):
                    stdlib_bases.append(found)
        ref = Ref(self, ident)
        if "e" in data:
            cls = local_enum(name, data["e"], ref, d)
        else:
            cls = proxy_class(name, bases, data, ref, stdlib_bases, d)
        type.__setattr__(cls, "__qualname__", qualname[:200])
        type.__setattr__(cls, "__module__", module[:200])
        self._remote[ident] = cls
        return cls

    # -- serving the worker's requests on the tests' objects ----------------------------

    def _target(self, message: dict):
        """The test's object a request is about, revived when the worker let it go but
        kept its handle inside something (a copy of the test's function)."""
        ident = message.get("obj")
        if type(ident) is int and ident not in self._objects:
            self.lives.revive(ident)
        return super()._target(message)

    def _perform(self, message: dict, received: list):
        op = message["op"]
        if op == "input":
            args, _ = self._arguments(message)
            return builtins.input(*args[:1])
        if op == "stdin":
            name = name_of(message)
            if name not in ("read", "readline", "readlines"):
                raise ProtocolError("unknown stdin read")
            args, _ = self._arguments(message)
            return getattr(sys.stdin, name)(*args[:1])
        if op in tests_own.OPS:  # a tests' subclass instance it made, frames it read
            return tests_own.OPS[op](self, *self._arguments(message)[0])
        if op == "global":
            return self._tests_modules.global_name(*self._arguments(message)[0], self.held)
        target = self._target(message)
        kind = self._kinds.get(message["obj"])
        if kind is None:
            raise PermissionError("the candidate may only use what the tests handed it")
        if op == "uncarried":  # what the worker met that it cannot carry, named here
            return self.unsupported(tests_own.uncarried(target, name_of(message)))
        if op == "getattr":
            return kinds.read_attribute(target, kind, name_of(message), self.lives.written(target))
        if op == "own":  # the object's `__dict__`, as a caching descriptor uses it
            (how, *value), _ = self._arguments(message)
            name = message.get("name")
            if how == "set":
                received += self.mutable_args(value, {})
            found = kinds.own(target, kind, how, name, value, self.lives.written(target))
            if how == "set" and name.startswith("_"):  # the candidate's own, from now on
                self.lives.write(target, name)
            return found
        if op in ("setattr", "delattr"):
            kinds.check_write(target, kind, name_of(message), self.lives.written(target))
            if name_of(message).startswith("_"):  # the candidate's own, from now on
                self.lives.write(target, name_of(message))
            if op == "delattr":
                return delattr(target, name_of(message))
            (value,), _ = self._arguments(message)
            received += self.mutable_args([value], {})
            if kind == "mock":
                kinds.check_mock_value(name_of(message), value)
            return setattr(target, name_of(message), value)
        args, kwargs = self._arguments(message)
        on_class = isinstance(target, type) and target in self._overrides
        if op == "method" and (kind == "subclass" or on_class):  # a test's override
            return tests_own.override(self, target, on_class, name_of(message), args, kwargs)
        if op == "await":  # the candidate awaits an awaitable of the test's
            if kind != "await":
                raise TypeError(f"the tests' {kind} is not awaitable")
            return kinds.await_here(target, self.test_loop)
        if op == "call":
            if not callable(target) or kind in ("iter", "file", "subclass", "await", "handle"):
                raise TypeError(f"the tests' {kind} is not callable")
            received += self.mutable_args(args, kwargs)
            return target(*args, **kwargs)
        if op == "special":
            name = name_of(message)
            if name not in kinds.SPECIALS[kind]:
                raise TypeError(f"{name} is not something the tests' {kind} does")
            if name in kinds.AWAITED:  # `async with`, `async for` on the test's object
                return kinds.await_here(kinds.AWAITED[name](target, *args), self.test_loop)
            received += self.mutable_args(args, {})
            return kinds.OPS[name](target, *args)
        raise ProtocolError(f"unknown request {op!r}")


_FAST = frozenset({int, float, bool, type(None), list, tuple, dict, set, frozenset, bytes})
