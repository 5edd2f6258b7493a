"""The candidate's end: imports the item's modules, exports its objects with a
description of their classes, and carries the test's environment (cwd, env, stdin,
patched names, random and decimal state) into every call, and the candidate's changes
to its environment and working folder back."""

from __future__ import annotations

import base64
import builtins
import contextlib
import enum
import importlib
import os
import sys
import threading
import types
import weakref

from . import callers, functions, logs, namesakes, process, relay, running, tracebacks, views
from . import twins as twins_
from .bindings import BINDINGS
from .channel import SideChannel
from .copies import Copies
from .describe import attribute, bound, describe, unbound, value_base, value_of
from .exceptions import apply_details, by_value, with_details
from .handles import (
    CallHandle,
    Functions,
    Handle,
    IterHandle,
    Stdin,
    handle_id,
    named_tuple_instance,
    tests_class,
)
from .lifetimes import Holds, TestsExceptions
from .mocked import presented
from .peer import CALLS, Peer
from .protocol import GONE, MAX_MESSAGE, ProtocolError, name_of, string
from .rules import COMPARISONS, COPIES, FORWARDED, IMMUTABLE_BASES
from .stdlib import BUILTIN_TYPES, after_import
from .tasks import Tasks
from .values import rng_state

# Builtin exceptions a stand-in never derives from: the worker's own ways to end.
_OWN_EXITS = frozenset({"SystemExit", "KeyboardInterrupt", "GeneratorExit"})
_KINDS = frozenset(
    {"call", "iter", "file", "object", "mock", "sync", "async", "subclass", "await", "handle"}
)


class Worker(Peer):
    """The candidate's end: imports the item's modules, exports its objects with a
    description of their classes, applies the test's environment before each request,
    and sends back what the candidate printed and the files it changed."""

    inert_names = True

    def __init__(self, fds: list[int], modules: frozenset[str] = frozenset()) -> None:
        super().__init__(fds[0], fds[1], threading.get_ident())
        if len(fds) == 4:
            self._side = SideChannel(self, fds[2], fds[3], "w")
        self._modules = modules
        self._watched: dict[int, tuple[dict, str, object]] = {}  # module names the judge caches
        process.follow_moves()  # (before the candidate is imported)
        self._process = process.now()  # the environment and folder in step
        self._streams: list[tuple[str, int, int]] = []  # (field, fd, read position)
        self._events: list[tuple] = []  # log records and warnings for the test to see
        self._originals: dict[tuple[str, str], object] = {}  # stdlib names before patches
        self._handles: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._functions = Functions()  # the tests' functions as real functions here
        self._tests_classes: dict[int, type] = {}
        self._tests_types: dict[int, int] = {}  # id(stand-in of a tests' class) -> their id
        self._handled: tuple | None = None  # the exception the test is handling
        self._call = _direct  # how the judge's calls are made: from the test module (`namesakes`)
        self._subclasses: dict[int, int] = {}  # id(our class made for the tests) -> their id
        self._tests_instances: dict[int, int] = {}  # id(instance of such a class) -> their id
        self._class_originals: dict[tuple[int, str], object] = {}  # before a test's patch
        self._tests_exceptions = TestsExceptions()  # our copies of the tests' ones
        self._tasks = Tasks()  # the candidate's awaitables the test awaits
        self._holds = Holds()  # handles kept while the tests' objects live
        self._copies = Copies()  # what the test copies of the candidate's

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
        sys.stdin = Stdin(self)
        builtins.input = self._input
        import warnings

        after_import("logging", self._forward_logs)
        warnings.simplefilter("always")  # the test's filters decide which ones count
        warnings.showwarning = self._warned
        callers.watch(self)  # what it reads of the test's process: referrers, frames

    def _forward_logs(self, logging) -> None:
        root = logging.getLogger()
        root.setLevel(logging.NOTSET)  # the test's loggers decide, as they do in-process
        root.addHandler(logs.LogForwarder(self._events))
        logs.follow_levels(logging, self._events)

    def _warned(self, message, category, filename, lineno, file=None, line=None) -> None:
        self._events.append(("w", str(message), category, str(filename), int(lineno)))

    def _input(self, *prompt):
        return self.request("input", args=prompt)

    # -- what rides along ----------------------------------------------------------------

    def _outgoing(self, message: dict) -> None:
        self._tests_exceptions.prune()
        self._holds.news(message, self._side, after=False)
        streams = []
        for field, fd, pos in self._streams:
            stream = sys.stdout if fd == 1 else sys.stderr
            if handle_id(stream, self) is None:  # never the test's stream patched in (a mock)
                with contextlib.suppress(Exception):
                    stream.flush()
            size = os.fstat(fd).st_size
            if size > pos:
                data = os.pread(fd, min(size - pos, MAX_MESSAGE // 4), pos)
                try:
                    message[field] = data.decode("utf-8")
                except UnicodeDecodeError:  # bytes as they were (`capsysbinary`)
                    message[field + "b"] = base64.b64encode(data).decode("ascii")
                pos += len(data)
                if pos == size and pos >= 1 << 20:  # all read: keep the file small
                    os.ftruncate(fd, 0)
                    os.lseek(fd, 0, os.SEEK_SET)
                    pos = 0
            streams.append((field, fd, pos))
        self._streams = streams
        env: dict = {}
        self._process = process.changes(env, self._process)
        if env:
            message["env"] = env
        if self._events:
            events, self._events[:] = list(self._events), []
            message["ev"] = [logs.encoded(self, event) for event in events]
        self._functions.news(message, self.encode)
        stale = [k for k, (d, n, v) in self._watched.items() if d.get(n, GONE) is not v]
        if stale:
            message["stale"] = [self._ids.get(k) for k in stale]
            for key in stale:
                del self._watched[key]

    def _sent_body(self, message: dict) -> None:
        self._holds.news(message, self._side, after=True)

    def _incoming(self, message: dict) -> None:
        if "op" in message:  # the exception the test is handling as it asks, if any
            self._handled = tracebacks.handling(message.get("hx"), self.decode)
        if "dead" in message:
            self._holds.drop(message["dead"])
        if "tm" in message:  # the tests' modules: by name here, and the caller's module
            calling = namesakes.adopt(self, message["tm"])
            if calling is not None:
                self._call = namesakes.caller(calling)
        env = message.get("env")
        if env is None:
            return
        self._process = process.apply(env, self._process)
        state = env.get("st")
        if type(state) is dict:
            self._state_of_test(state)

    def _state_of_test(self, state: dict) -> None:
        """The test's global random state, decimal context and `sys.argv`, as it set."""
        argv = state.get("argv")
        if type(argv) is list and all(type(a) is str for a in argv):
            sys.argv = argv
        if "rnd" in state:
            import random

            random.setstate(rng_state(state["rnd"]))
        if "dec" in state:
            import decimal

            spec = state["dec"]
            if type(spec) is not list or len(spec) != 7:
                raise ProtocolError("malformed decimal context")
            prec, rounding, emin, emax, capitals, clamp, traps = spec
            signals = [getattr(decimal, n) for n in traps if n in _DECIMAL_SIGNALS]
            decimal.setcontext(
                decimal.Context(prec, rounding, emin, emax, capitals, clamp, [], signals)
            )

    # -- exporting the candidate's objects ----------------------------------------------

    def _back(self, value):
        ident = handle_id(value, self)
        if ident is None:
            ident = self._functions.ident(value)  # a test's function's stand-in
        if ident is not None:
            return {"t": "b", "v": ident}
        if isinstance(value, type) and id(value) in self._subclasses:
            return {"t": "b", "v": self._subclasses[id(value)]}
        if isinstance(value, type) and id(value) in self._tests_types:
            return {"t": "b", "v": self._tests_types[id(value)]}
        if id(value) in self._tests_instances:
            return {"t": "b", "v": self._tests_instances[id(value)]}
        ident = self._tests_exceptions.ident(value)
        return None if ident is None else {"t": "b", "v": ident}

    def _exception_came(self, exc: BaseException, data: dict) -> BaseException:
        if type(data.get("i")) is int:  # the tests' own: raised back, it is theirs again
            self._tests_exceptions.add(exc, data["i"])
        return exc

    def encode(self, value, depth: int = 0, copy: bool = False):
        if type(value) is _Again:  # a class the judge asks for again: described anew
            return describe(value.cls, value.ident, self.encode, self._class_form)
        return super().encode(value, depth, copy)

    def _export(self, value, e):
        if isinstance(value, enum.Enum):
            cls = type(value)
            if cls.__members__.get(value._name_) is value:
                return {"t": "em", "c": self._class_form(cls), "v": value._name_}
            return {"t": "em", "c": self._class_form(cls), "v": None, "x": e(value._value_)}
        if isinstance(value, type):
            return self._class_form(value)
        if isinstance(value, BaseException):
            plain = by_value(value, e)
            if plain is not None:
                return plain
            made = value.__dict__.get("_evalpin_made")
            if id(type(value)) in self._tests_types and type(made) is tuple:
                args, kwargs = made  # raised here, of a tests' class: made there
                return {"t": "tx", "v": self._tests_types[id(type(value))], "a": e(list(args)),
                        "kw": e(dict(kwargs))}  # fmt: skip
        ident = self._ids.get(id(value))
        if ident is None or self._objects.get(ident) is not value:
            ident = self.give(value)
        self._sent[ident] = self._sent.get(ident, 0) + 1
        data = {"t": "o", "v": ident, "c": self._class_form(type(value))}
        if isinstance(value, BaseException):
            data["x"] = e(list(value.args))
            with_details(data, value, e)
        else:
            base = value_base(type(value))
            if base in IMMUTABLE_BASES:
                data["x"] = e(COPIES[base](value))
            elif base is not None:  # a list, dict or set: one object each side, in step
                data["sk"] = self.shares.start(value)  # (before its contents: a cycle)
                data["x"] = self.contents(value)
        return functions.extras(self, value, data, e)  # abstract? a plain function's shape

    def _class_form(self, cls: type) -> dict:
        """A class the judge builds a proxy class of: described, or referred to once it
        has the description on this channel."""
        back = self._back(cls)
        if back is not None:
            return back
        ident = self._ids.get(id(cls))
        if ident is None or self._objects.get(ident) is not cls:
            ident = self.give(cls)
        elif self.known(ident):
            return {"t": "r", "v": ident}
        self.known(ident)
        return describe(cls, ident, self.encode, self._class_form)

    # -- rebuilding the tests' objects ------------------------------------------------

    def _decode_remote(self, tag: str, data: dict, d):
        v = data["v"]
        if tag == "h" and type(v) is int and data.get("k") in _KINDS:
            self._received[v] = self._received.get(v, 0) + 1
            if type(data.get("tc")) is dict or "xc" in data:
                return self._tests_type(v, data)
            handle = self._handles.get(v)
            if type(handle) is types.FunctionType and type(data.get("at")) is list:
                self._functions.remark(handle, v, data["at"], d)  # as the test left them
            if handle is None:
                handle = self._remote.get(v)
            if handle is None:
                base = BINDINGS.get(data.get("ds"), CallHandle)
                if data["k"] == "iter" and base is CallHandle:
                    base = IterHandle
                elif data["k"] == "handle":  # used by its API, never called
                    base = Handle
                handle = self._handle(v, data["k"], data.get("c"), d, presented(base, data, d))
                if data.get("ds") == "fn" and type(data.get("f")) is dict:
                    handle = self._handles[v] = self._functions.make(handle, v, data["f"], d)
                if data.get("w") == 1 and isinstance(handle, (Handle, types.FunctionType)):
                    self._holds.hold(v, handle)
            return handle
        if tag == "xs" and type(v) is int:  # an exception of the tests' own class
            of = data.get("c") if type(data.get("c")) is int else v
            cls = self._stand_in(of, data.get("n"), data.get("b"))
            args = d(data.get("a", []))
            exc = cls(*args) if type(args) is list else cls()
            self._tests_exceptions.add(exc, v)  # raised back: the test's own
            return apply_details(exc, data, d)
        if tag == "bm" and type(v) is int and v in self._objects:  # a method of ours, by name
            return getattr(self._objects[v], string(data.get("n")))
        if tag == "em":
            cls = d(data.get("c"))
            return cls[v] if type(v) is str else cls(d(data.get("x")))
        raise ProtocolError(f"unknown value tag {tag!r}")

    def _tests_type(self, ident: int, data: dict) -> type:
        """A class of the tests' handed over: the class its instances' stand-ins have
        (an exception class's, `_stand_in`), so it comes home as itself."""
        if "xc" in data:
            return self._stand_in(ident, data.get("n"), data["xc"])
        spec = data["tc"]
        if spec.get("v") != ident:
            raise ProtocolError("malformed class of the tests'")
        return self._tests_class(spec, CallHandle)

    def _tests_class(self, spec: dict, base: type) -> type:
        class_id = spec.get("v")
        cls = self._tests_classes.get(class_id)
        if cls is None:
            cls = self._tests_classes[class_id] = tests_class(self, spec, base)
            self._tests_types[id(cls)] = class_id
        return cls

    def _handle(self, ident: int, kind: str, spec, d, base: type):
        if type(spec) is not dict:
            handle = base(self, ident, kind)
            self._handles[ident] = handle
            return handle
        cls = self._tests_class(spec, base)
        if issubclass(cls, tuple):
            values = d(spec.get("x"))
            if type(values) is not list:
                raise ProtocolError("malformed named tuple")
            obj = named_tuple_instance(cls, tuple(values), Handle(self, ident, kind))
            self._remote[ident] = obj
            return obj
        handle = object.__new__(cls)
        Handle.__init__(handle, self, ident, kind)
        self._handles[ident] = handle
        return handle

    def _stand_in(self, ident: int, name, bases) -> type:
        """The worker's stand-in for an exception class of the tests: a bare subclass of
        the nearest builtin exception, of the same name; one raised here remembers its
        arguments, to be made of the tests' class there (`tx`)."""
        cls = self._remote.get(-ident)
        if cls is None:
            name = name if type(name) is str and name.isidentifier() else "TestsError"
            base = next(
                (
                    BUILTIN_TYPES[b]
                    for b in (bases if type(bases) is list else [])
                    if b in BUILTIN_TYPES
                    and issubclass(BUILTIN_TYPES[b], BaseException)
                    and b not in _OWN_EXITS
                ),
                Exception,
            )

            def __init__(self, *args, **kwargs):
                base.__init__(self, *args)
                self._evalpin_made = (args, kwargs)

            namespace = {"__qualname__": name, "__init__": __init__}
            cls = self._remote[-ident] = type(name, (base,), namespace)
            self._tests_types[id(cls)] = ident
        return cls

    # -- serving the judge's requests -------------------------------------------------

    def _perform(self, message: dict, received: list):
        handled, self._handled = self._handled, None
        if handled is not None and message["op"] in CALLS:
            return tracebacks.within(handled, self._perform_op, message, received)
        return self._perform_op(message, received)

    def _perform_op(self, message: dict, received: list):
        op = message["op"]
        if op == "import":
            return self._import(message.get("name"), reload=False)
        if op == "reload":
            return self._import(message.get("name"), reload=True)
        if op == "patch":
            return self._patch(name_of(message), received, *self._arguments(message)[0])
        if op in ("poll", "cancel"):  # a task awaiting an awaitable of the candidate's
            (ident,), _ = self._arguments(message)
            return self._tasks.poll(ident) if op == "poll" else self._tasks.cancel(ident)
        if op == "unpickle":  # bytes the test unpickles that name code: run here
            import pickle

            (data,), _ = self._arguments(message)
            return pickle.loads(data)
        target = self._target(message)
        if op == "describe":  # a class the judge has not read yet: described again
            if not isinstance(target, type):
                raise ProtocolError("not a class")
            return _Again(target, message["obj"])
        if op == "getattr":
            return attribute(target, name_of(message))
        if op == "setattr":
            (value,), _ = self._arguments(message)
            received += self.mutable_args([value], {})
            if isinstance(target, type):  # a class attribute the test patches
                key = (id(target), name_of(message))
                self._class_originals.setdefault(key, vars(target).get(key[1], GONE))
            return setattr(target, name_of(message), value)
        if op == "restore":  # the class attribute as it was before the test patched it
            original = self._class_originals.pop((id(target), name_of(message)), GONE)
            if original is GONE:
                return delattr(target, name_of(message))
            return setattr(target, name_of(message), original)
        if op == "delattr":
            return delattr(target, name_of(message))
        args, kwargs = self._arguments(message)
        if op in CALLS:
            received += self.mutable_args(args, kwargs)
        if op == "call":
            return self._call(target, args, kwargs)
        if op == "method":
            return self._call(getattr(target, name_of(message)), args, kwargs)
        if op == "special":
            name = name_of(message)
            if name not in FORWARDED and name not in COMPARISONS and name != "__hash__":
                raise ProtocolError(f"{name} is not forwarded")
            if name == "__next__":
                self.batches.check(message["obj"])
            return self._own_special(target, name)(*args)
        if op == "pull":
            return self.batches.pull(
                self._own_special(target, "__next__"), message["obj"], args, self.shares
            )
        if op == "umethod":  # a candidate class's own method on a tests' subclass instance
            instance, *rest = args
            return unbound(target, instance, name_of(message))(*rest, **kwargs)
        if op == "subclass":
            return self._subclass(target, name_of(message), *args, **kwargs)
        if op == "new":
            return self._new(target, *args, **kwargs)
        if op == "start":
            return self._tasks.start(target)
        if op == "member":  # an attribute of an enum member the judge rebuilt
            return getattr(target[args[0]], name_of(message))
        if op == "value":
            return value_of(target)
        if op == "view":
            return views.view_of(target, name_of(message))
        if op == "copy":
            return self._copies.make(target, *(args or ["copy"]))
        if op == "doctest":
            return running.doctests(target, name_of(message), kwargs)
        if op == "main":
            return running.as_main(target)
        raise ProtocolError(f"unknown request {op!r}")

    def _own_special(self, target, name: str):
        """`target`'s own special method `name` as Python's implicit lookup finds it on
        its type (`describe.bound`), past what the test patched on its classes (the judge
        asks for it: a test's replacement calling the original)."""
        for klass in type(target).__mro__:
            original = self._class_originals.get((id(klass), name), None)
            if original is GONE:
                continue
            if original is not None:
                return bound(original, target, name)
            if name in vars(klass):
                return bound(vars(klass)[name], target, name)
        raise AttributeError(name)

    def _subclass(
        self, base: type, name: str, judge_id: int, methods, values, qualname, on_class, twins, /,
        **kw,
    ):  # fmt: skip
        """The class standing for a tests' class, on the bases `twins` names (candidate
        classes, classes made for the tests' ones, stdlib abstract bases): its methods call
        the tests' class's own back (class and static methods on the tests' class); its
        class values are copied; the candidate's `__init_subclass__` runs now."""
        bases = tuple(self._objects.get(t) if type(t) is int else t for t in twins) or (object,)
        if not all(isinstance(b, type) for b in bases) or type(values) is not dict:
            raise ProtocolError("malformed bases")
        spec = (methods, values, qualname, on_class)
        return self.give(twins_.make(self, bases, name, judge_id, spec, kw))

    def _new(self, cls: type, judge_id: int, *args, **kwargs) -> int | list:
        """An instance of a class made for the tests (`_subclass`), for their object (an
        exception's with its arguments); a list, dict or set kept in step (its key too)."""
        if id(cls) not in self._subclasses or type(judge_id) is not int:
            raise ProtocolError("not a class made for the tests")
        unittest = sys.modules.get("unittest")
        harness = unittest is not None and issubclass(cls, unittest.TestCase)
        obj = cls.__new__(cls) if harness else cls.__new__(cls, *args, **kwargs)  # (`to_new`)
        if harness:
            unittest.TestCase.__init__(obj, *args[:1])  # its own state, for its helpers
        self._tests_instances[id(obj)] = judge_id
        self._remote[judge_id] = obj
        base = value_base(cls)
        if base is not None and base not in IMMUTABLE_BASES:  # a list, dict or set: in step
            return [self.give(obj), self.shares.start(obj)]
        return self.give(obj)

    def _patch(self, name: str, received: list, module: str, how: str, value=None) -> None:
        """A stdlib or installed library's attribute as the test patched (or restored) it;
        a container patched in (a `StringIO` as sys.stdout) is stored: kept in step."""
        received += self.mutable_args([value] if how == "set" else [], {})
        own = {n.partition(".")[0] for n in self._modules}  # the candidate's: their own way
        if type(module) is not str or module.partition(".")[0] in own:
            raise ProtocolError("only the interpreter's own modules are patched")
        target = importlib.import_module(module)
        key = (module, name)
        if key not in self._originals:
            self._originals[key] = getattr(target, name, GONE)
        if how == "set":
            setattr(target, name, value)
        elif how == "restore" and self._originals[key] is not GONE:
            setattr(target, name, self._originals[key])
        elif hasattr(target, name):
            delattr(target, name)

    def _import(self, name, reload: bool):
        if name not in self._modules:
            raise ImportError(f"{name!r} is not a module this item may import")
        module = importlib.import_module(name)
        if reload:
            module = importlib.reload(module)
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
            # the module's own, and what it takes from the candidate's other modules
            # (a package's `from .core import *`)
            if getattr(value, "__module__", None) not in self._modules or not callable(value):
                continue
            self._watched[id(value)] = (namespace, attr, value)
            known[attr] = value
        doc = module.__doc__ if type(module.__doc__) is str else None
        return {
            "id": self.give(module),
            "names": [str(n) for n in names],
            "known": known,
            "doc": doc,
        }


_DECIMAL_SIGNALS = frozenset(
    [
        "Clamped",
        "DivisionByZero",
        "Inexact",
        "InvalidOperation",
        "Overflow",
        "Rounded",
        "Subnormal",
        "Underflow",
        "FloatOperation",
    ]
)


class _Again:
    """A class described again, whole, under its id (the `describe` request's answer)."""

    __slots__ = ("cls", "ident")

    def __init__(self, cls: type, ident: int) -> None:
        self.cls, self.ident = cls, ident


def serve(peer: Worker) -> None:
    """Serve the judge from this thread (the worker's main one) until it closes."""
    peer.set_main()
    peer.serve_forever()


def worker(fds: list[int], modules: list[str]) -> None:
    """The candidate's end: import only the item's modules, serve until the tests end."""
    peer = Worker(fds, frozenset(modules))
    address = os.environ.pop("EVALPIN_RELAY", None)  # the tests' child processes' programs
    if address:
        relay.serve(address)
    peer.capture_output()
    peer.serve_forever()


def _direct(f, args, kwargs):
    return f(*args, **kwargs)
