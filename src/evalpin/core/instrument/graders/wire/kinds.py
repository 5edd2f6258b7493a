"""What a test's object may be used for in the worker, decided by what it is (an
allow-list of kinds), and what the judge does when the candidate asks."""

from __future__ import annotations

import builtins
import contextlib
import enum
import io
import operator
import os
import sys
import types

from . import class_space, inherent
from .copies import deepcopy_in
from .imports import within
from .protocol import SCALARS, ProtocolError, is_ident
from .proxies import RemoteClass, RemoteEnum
from .resources import api_of
from .resources import read as resources_read
from .rules import COMPARING
from .stdlib import PURE_BUILTINS, installed_module, stdlib_name

OPS = {
    "__iter__": iter,
    "__next__": next,
    "__len__": len,
    "__bool__": bool,
    "__contains__": lambda o, x: x in o,
    "__getitem__": lambda o, k: o[k],
    "__setitem__": lambda o, k, v: o.__setitem__(k, v),
    "__delitem__": lambda o, k: o.__delitem__(k),
    "__enter__": lambda o: o.__enter__(),
    "__exit__": lambda o, *a: o.__exit__(*a),
    "__repr__": repr,
    "__str__": str,
    "__copy__": lambda o: __import__("copy").copy(o),
    "__deepcopy__": deepcopy_in,
    "__index__": operator.index,
    "__int__": int,
    "__float__": float,
}
_CONTAINER = frozenset(OPS)
# Comparing two of the tests' objects is the tests' own code deciding, as in-process
# (a `functools.cmp_to_key` key, a test's dataclass as a dict key).
_COMPARE = {**COMPARING, "__hash__": hash}
OPS.update(_COMPARE)
# A test's descriptor (its own class's, a `PropertyMock`) set on a candidate class binds
# there as it would in-process: the descriptor protocol's calls come back here.
_DESCRIBE = {
    "__get__": lambda o, *a: type(o).__get__(o, *a),
    "__set__": lambda o, *a: type(o).__set__(o, *a),
    "__delete__": lambda o, *a: type(o).__delete__(o, *a),
}
OPS.update(_DESCRIBE)
# A test's generator resumed by the candidate (`bindings.GenHandle`): the test's code.
_RESUME = {
    "send": lambda o, v: o.send(v),
    "throw": lambda o, *a: o.throw(*a),
    "close": lambda o: o.close(),
}
OPS.update(_RESUME)
# What an asynchronous object of the test's does for the candidate: each returns an
# awaitable the judge runs to its end in the test's own event loop (`await_here`).
AWAITED = {
    "__aenter__": lambda o: o.__aenter__(),
    "__aexit__": lambda o, *a: o.__aexit__(*a),
    "__anext__": lambda o: o.__anext__(),
}
SPECIALS = {
    "call": frozenset({"__repr__", "__str__", "__bool__", *_COMPARE}),
    "iter": frozenset({"__iter__", "__next__", "__anext__", "__repr__", "__bool__", *_RESUME}),
    "file": frozenset({"__iter__", "__next__", "__enter__", "__exit__", "__repr__", "__bool__"}),
    "sync": frozenset({"__enter__", "__exit__", "__repr__", "__bool__", "__len__"}),
    "handle": frozenset({"__iter__", "__next__", "__enter__", "__exit__", "__repr__", "__bool__"}),
    "async": frozenset({"__aenter__", "__aexit__", "__repr__", "__bool__"}),
    "await": frozenset({"__repr__", "__bool__"}),
    "object": _CONTAINER | set(_COMPARE) | set(_DESCRIBE),
    "mock": _CONTAINER | set(_COMPARE) | set(_DESCRIBE),
    "subclass": frozenset(),
}
# What a lock, event, condition, semaphore, barrier or queue of the tests' offers.
_SYNC_API = frozenset(
    [
        "acquire",
        "release",
        "locked",
        "wait",
        "wait_for",
        "set",
        "clear",
        "is_set",
        "notify",
        "notify_all",
        "put",
        "get",
        "put_nowait",
        "get_nowait",
        "qsize",
        "empty",
        "full",
        "task_done",
        "join",
        "n_waiting",
        "parties",
        "broken",
        "abort",
        "reset",
        "maxsize",
    ]
)
_SYNC_TYPES = {
    ("_thread", "lock"),
    ("_thread", "RLock"),
    ("threading", "RLock"),
    ("threading", "_RLock"),
    ("threading", "Event"),
    ("threading", "Condition"),
    ("threading", "Semaphore"),
    ("threading", "BoundedSemaphore"),
    ("threading", "Barrier"),
    ("queue", "Queue"),
    ("queue", "LifoQueue"),
    ("queue", "PriorityQueue"),
    ("queue", "SimpleQueue"),
    ("_queue", "SimpleQueue"),
}
# The tests' weak containers (a cache the candidate fills): what a plain mapping or set
# of the tests' offers, its entries living as long as the test's objects do.
_WEAK_CONTAINERS = {
    ("weakref", "WeakValueDictionary"),
    ("weakref", "WeakKeyDictionary"),
    ("_weakrefset", "WeakSet"),
}
# The test's asyncio primitives: the same API, its coroutines awaited in the test's loop.
_ASYNC_TYPES = {
    ("asyncio.locks", "Lock"),
    ("asyncio.locks", "Event"),
    ("asyncio.locks", "Condition"),
    ("asyncio.locks", "Semaphore"),
    ("asyncio.locks", "BoundedSemaphore"),
    ("asyncio.queues", "Queue"),
    ("asyncio.queues", "LifoQueue"),
    ("asyncio.queues", "PriorityQueue"),
}
# What a file object of the tests' offers the candidate: reading and writing.
_FILE_API = frozenset(
    [
        "read",
        "read1",
        "readline",
        "readlines",
        "readinto",
        "write",
        "writelines",
        "seek",
        "tell",
        "flush",
        "close",
        "closed",
        "name",
        "mode",
        "encoding",
        "errors",
        "newlines",
        "readable",
        "writable",
        "seekable",
        "getvalue",
        "truncate",
        "isatty",
        "line_buffering",
    ]
)
# Kinds whose builtin methods the candidate may call (`sock.recv`, `f.read`, `lock.acquire`).
_METHOD_OWNERS = ("object", "file", "sync", "handle")
_PLAIN_TYPES = frozenset({str, bytes, int, float, list, dict, set, frozenset, tuple, bytearray})


def plain_args(args) -> bool:
    return all(type(a) in SCALARS or type(a) in _PLAIN_TYPES for a in args)


def type_name(value) -> str:
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}"


def with_spec(data: dict, value, kind: str, e, root: str) -> dict:
    """A test's mock made with a spec (`Mock(spec=m.Gateway)`, `create_autospec(...)`)
    names its spec's class, when that is the candidate's (or a tests' class): the
    worker's handle presents it to `isinstance`, as the mock's `__class__` does in one
    process. What the candidate's process believes of it decides nothing here."""
    if kind == "mock":
        spec = vars(value).get("_spec_class")
        if isinstance(spec, RemoteClass) or (isinstance(spec, type) and tests_class(spec, root)):
            data["sc"] = e(spec)
    return data


def is_mock(value) -> bool:
    mock = sys.modules.get("unittest.mock")
    return mock is not None and isinstance(value, mock.NonCallableMock)


def tests_class(cls: type, root: str) -> bool:
    """A class defined by the tests (in a module loaded from the tests' folder), whatever
    its metaclass (`typing.Protocol`'s, one of the tests' own: the tests' code runs here
    anyway), but never one the wire made: a proxy class, or a tests' class derived from
    a candidate's (made in the worker, handed over as itself). A dataclass the tests make
    at run time (`make_dataclass`) names `types` as its module: it is the tests' too."""
    if issubclass(type(cls), (RemoteClass, RemoteEnum)):
        return False
    module = sys.modules.get(getattr(cls, "__module__", ""), None)
    if module is types and "__dataclass_fields__" in vars(cls):  # `make_dataclass`'s
        return getattr(types, cls.__name__, None) is not cls
    return module is not None and tests_module(module, root)


def tests_module(module, root: str) -> bool:
    """A module of the tests' (loaded from the tests' folder, not a stand-in)."""
    space = getattr(module, "__dict__", None)
    path = space.get("__file__") if type(space) is dict else None
    if type(path) is not str or space.get("_evalpin_stub", False):
        return False
    return within(os.path.realpath(path), [root])


def kind_of(value, root: str) -> str | None:
    """What a test's object may be used for in the worker, decided by what it is."""
    if is_mock(value):
        return "mock"
    if isinstance(value, io.IOBase) or _codec_stream(value):
        return "file"
    if isinstance(value, (types.GeneratorType, types.AsyncGeneratorType)):
        return "iter"
    if isinstance(value, types.CoroutineType) or _is_future(value):
        return "await"
    cls = type(value)
    if cls.__module__ == "builtins" and cls.__name__.endswith("iterator"):
        return "iter"
    if cls.__module__ == "itertools" or cls in (map, filter, zip, enumerate, reversed):
        return "iter"
    # (by their own type: a candidate's method stand-in presents `FunctionType` or
    # `MethodType` to `isinstance`, and is the candidate's, never a test's function)
    if cls is types.FunctionType:
        return "call"
    if cls is types.MethodType:
        owner = kind_of(value.__self__, root)
        return "call" if owner in _METHOD_OWNERS or owner in ("mock", "call", "async") else None
    if isinstance(value, types.BuiltinFunctionType):
        owner = value.__self__
        if owner is builtins or owner is None:
            return "call" if value.__name__ in PURE_BUILTINS else None
        if type(owner) in _PLAIN_TYPES or kind_of(owner, root) in _METHOD_OWNERS:
            return "call"
        return None
    if isinstance(value, (types.MethodDescriptorType, types.ClassMethodDescriptorType)):
        owner = value.__objclass__
        return "call" if owner in _PLAIN_TYPES and not value.__name__.startswith("_") else None
    functools = sys.modules.get("functools")
    if functools is not None and isinstance(value, functools.partial):
        return "call" if kind_of(value.func, root) == "call" else None
    if isinstance(value, type):  # a class of the tests': called, its public names read
        return "object" if tests_class(value, root) else None
    if callable(value) and cls.__module__ in ("operator", "functools"):
        return "call"  # itemgetter, attrgetter, methodcaller, cmp_to_key
    if (cls.__module__, cls.__name__) in _SYNC_TYPES:
        return "sync"
    if api_of(value) is not None:  # a socket, a database: by reference (`resources`)
        return "handle"
    if (cls.__module__, cls.__name__) in _WEAK_CONTAINERS:
        return "object"  # a cache of the tests': used by its public methods and operators
    if (cls.__module__, cls.__name__) in _ASYNC_TYPES:
        return "async"
    if isinstance(value, enum.Enum) or tests_class(cls, root) or cls in _MARKERS:
        return "object"
    if cls.__module__ == "unittest.mock" and cls.__name__ == "_SentinelObject":
        return "object"
    if installed_class(cls):  # a library's object the test made (a response for a patch)
        return "object"
    return None


# The grading's own libraries: their objects act on the session (a fixture, a config, a
# hook), never the candidate's to use here.
_MACHINERY = frozenset(
    {"_pytest", "pytest", "pluggy", "iniconfig", "py", "evalpin", "evalpin_wire"}
)


def installed_class(cls: type) -> bool:
    """A class of an installed library (not the stdlib's: its kinds have rules above or
    none yet), by its module, loaded from the interpreter's own folders: its objects are
    used by reference, their methods the library's own, run here as in one process."""
    if issubclass(type(cls), (RemoteClass, RemoteEnum)):
        return False
    name = getattr(cls, "__module__", None)
    top = name.partition(".")[0] if type(name) is str else ""
    if not top or top in sys.stdlib_module_names or top in _MACHINERY:
        return False
    module = sys.modules.get(name)
    return isinstance(module, types.ModuleType) and installed_module(module, name)


# Opaque markers of the tests' (`MISSING = object()`): compared by identity, nothing else.
_MARKERS = frozenset({object})


def descriptor(value, kind: str) -> str | None:
    """How a test's object behaves in the worker beyond its kind: set on a class, `fn`
    (a function: a method, bound to the instance) or `get`/`set` (a descriptor, non-data
    or data); `aiter`, an asynchronous iterator; `gen`, a generator (also resumed,
    thrown into and closed); `async`, an asynchronous context."""
    if kind == "async":
        return "async"
    if kind == "iter":
        if isinstance(value, types.GeneratorType):
            return "gen"
        return "aiter" if hasattr(type(value), "__anext__") else None
    if kind == "call":
        return "fn" if type(value) is types.FunctionType else None
    if kind not in ("object", "mock") or isinstance(value, type):
        return None
    cls = type(value)
    if not hasattr(cls, "__get__"):
        return None
    return "set" if hasattr(cls, "__set__") or hasattr(cls, "__delete__") else "get"


def _codec_stream(value) -> bool:
    """A `codecs.open` file or stream reader/writer: a file object outside `io`'s tree."""
    codecs = sys.modules.get("codecs")
    return codecs is not None and isinstance(
        value, (codecs.StreamReaderWriter, codecs.StreamReader, codecs.StreamWriter)
    )


def _is_future(value) -> bool:
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(value, asyncio.Future)


_NAMES = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
_DATACLASS = frozenset({"__dataclass_fields__", "__dataclass_params__"})


def read_attribute(target, kind: str, name: str, written=()):
    """A public attribute of a test's object the candidate reads, as its kind allows, or
    one the candidate itself stored there (`written`: a descriptor's `_value`)."""
    if kind in ("call", "iter", "await"):
        if name in ("__name__", "__qualname__", "__doc__", "__module__"):
            return getattr(target, name)
        if name == "__signature__" and kind == "call":
            return _signature(target)
        if marks(target, kind, name) and name in vars(target):
            return vars(target)[name]
        raise AttributeError(f"{name!r}: the tests handed a {kind}, to be used, not read")
    if kind == "object" and isinstance(target, type) and name in _NAMES:
        found = getattr(target, name)  # a class of the tests' handed over: its names
        return found if found is None or type(found) is str else str(found)
    if kind == "object" and name in _DATACLASS:  # as `dataclasses.fields` reads them
        owner = target if isinstance(target, type) else type(target)
        found = getattr(owner, name, None)
        if type(found) is dict or type(found).__name__ == "_DataclassParams":
            return found
    if name.startswith("_") and name not in written:
        if name[:2] != "__" and _has(target, name):  # the tests' own private name
            inherent.note(f"the candidate read the tests' private {name!r} of a {kind}")
        raise AttributeError(f"{name!r}: the candidate sees public attributes only")
    if kind == "file" and name not in _FILE_API:
        raise AttributeError(f"{name!r}: a file of the tests' is read and written, no more")
    if kind == "handle":
        return resources_read(target, name)
    if kind in ("sync", "async") and name not in _SYNC_API:
        raise AttributeError(f"{name!r}: a lock or queue of the tests' is used, no more")
    if kind == "mock" and name in dir(type(target)):
        raise AttributeError(f"{name!r} is the test double's own API, not the candidate's")
    if kind == "subclass":
        raise AttributeError(f"{name!r}: the tests' subclass is reached through its methods")
    value = getattr(target, name)
    if isinstance(value, types.ModuleType):
        inherent.note(f"the candidate read a module of the tests' ({name!r} of a {kind})")
        raise AttributeError(f"{name!r}: the candidate gets no module of the tests")
    return value


def _has(target, name: str) -> bool:
    """Whether the tests' object has `name`, found without running its code."""
    space = getattr(target, "__dict__", None)
    owner = target if isinstance(target, type) else type(target)
    return (type(space) is dict and name in space) or any(name in vars(c) for c in owner.__mro__)


def own(target, kind: str, how, name, value: list, written=()):
    """The instance dictionary of a test's plain object as the candidate's code uses it
    (`obj.__dict__[name] = value`, as caching descriptors write): reads, writes and
    deletes of the names the candidate may read and write, past the class's descriptors
    as in one process; `names` and `dir` list those it may read."""
    if kind == "object" and isinstance(target, type):  # a tests' class's namespace
        return class_space.read(target, how, name, written)
    space = vars(target) if kind == "object" and hasattr(target, "__dict__") else None
    if not isinstance(space, dict):  # a test's own dict subclass answers as its own
        raise AttributeError("'__dict__': the tests' object has none the candidate may use")
    if how in ("names", "dir"):  # `vars(obj)`'s keys, or `dir(obj)`: those it may read
        names = space if how == "names" else dir(target)
        return [n for n in names if type(n) is str and (not n.startswith("_") or n in written)]
    if type(name) is not str:
        raise ProtocolError("attribute name must be a string")
    if how == "get":
        found = space.get(name, space)  # the dict itself: no such name
        if found is space or isinstance(found, types.ModuleType):
            raise KeyError(name)
        if name.startswith("_") and name not in written:
            raise KeyError(name)
        return found
    check_write(target, kind, name, written)
    if how == "set" and len(value) == 1:
        space[name] = value[0]
    elif how == "del":
        del space[name]
    else:
        raise ProtocolError("unknown use of a `__dict__`")
    return None


def check_write(target, kind: str, name: str, written=()) -> None:
    """Refuse a change to a test's object its kind does not allow: a public name, or a
    private one the candidate stores itself (new, or its own from before), never a
    special name or the test's own private state; a double's `__signature__` is what
    `inspect` says of it, part of none of its API (matplotlib's backend sets it on
    whatever `pyplot.show` is: a test's patched double)."""
    if kind == "mock" and name == "__signature__":
        return
    private = name.startswith("_") and name not in written
    special = name.startswith("__") and name.endswith("__")
    if private and (special or kind != "object" or _has(target, name)):
        raise PermissionError("the candidate may not change that object of the tests")
    if kind not in ("object", "mock") and not marks(target, kind, name):
        raise PermissionError("the candidate may not change that object of the tests")
    if kind == "mock" and name in dir(type(target)):
        raise PermissionError(f"{name!r} is the test double's own API")


def check_mock_value(name: str, value) -> None:
    """On a test double, every public name is a child it would make on demand: the
    candidate may store plain data there (`client.timeout = 5`), never something that
    answers calls or attribute reads in the child's place."""
    import inspect  # (pytest's own import)

    if name == "__signature__" and type(value) is inspect.Signature:
        return
    if not _plain_data(value):
        raise PermissionError(f"{name!r}: the test double's child may not be replaced")


def _plain_data(value, depth: int = 0) -> bool:
    kind = type(value)
    if kind in SCALARS or kind is bytes:
        return True
    if depth > 16:
        return False
    if kind in (list, tuple, set, frozenset):
        return all(_plain_data(v, depth + 1) for v in value)
    if kind is dict:
        return all(
            _plain_data(k, depth + 1) and _plain_data(v, depth + 1) for k, v in value.items()
        )
    return False


def marks(target, kind: str, name: str) -> bool:
    """A public attribute of a test's function: data a decorator marks it with
    (`fn.pattern = ...`), never its code, globals or closure."""
    return kind == "call" and type(target) is types.FunctionType and not name.startswith("_")


def class_spec(ident: int, cls: type, value, e) -> dict:
    """What the worker's stand-in class for a tests' class needs: its names, whether its
    instances are callable, its dataclass fields, a named tuple's fields and (`value`,
    an instance: None when the class itself crosses) values."""
    data: dict = {"v": ident, "n": cls.__name__, "q": cls.__qualname__}
    if type(cls.__module__) is str:  # `pickle` finds the class by its module's name
        data["md"] = cls.__module__
    if not any("__call__" in vars(c) for c in cls.__mro__):
        data["cl"] = 0
    fields = getattr(cls, "__dataclass_fields__", None)
    if isinstance(fields, dict) and all(type(f) is str for f in fields):
        import dataclasses

        data["f"] = [f.name for f in dataclasses.fields(cls)]
        params = getattr(cls, "__dataclass_params__", None)  # `frozen` and the rest
        flags = [getattr(params, n, None) for n in getattr(type(params), "__slots__", ())]
        if flags and all(type(f) is bool for f in flags):
            data["fp"] = flags
    abcs = [c for c in cls.__mro__ if c.__module__ == "collections.abc"]
    if abcs and not issubclass(cls, tuple):  # its mixins there, its own methods its own
        data["ab"] = [c.__name__ for c in abcs]
        mixins = {n for c in abcs for n in vars(c) if not n.startswith("_")}
        own = cls.__mro__[: cls.__mro__.index(abcs[0])]
        data["ov"] = sorted({n for c in own for n in vars(c) if n in mixins})
    named = getattr(cls, "_fields", None)
    if issubclass(cls, tuple) and type(named) is tuple and all(is_ident(f) for f in named):
        data["nt"] = list(named)
        if isinstance(value, tuple):
            data["x"] = e(list(tuple.__iter__(value)))
    return data


def function_spec(fn, e, crosses=lambda value: False) -> dict:
    """What the worker's real function standing for a test's function shows: its name,
    qualified name, module, docstring and (plain) signature."""
    spec = {"n": fn.__name__, "q": fn.__qualname__}
    if fn.__code__.co_flags & 0x80:  # CO_COROUTINE: an `async def`, awaited there
        spec["co"] = 1
    if getattr(fn, "__isabstractmethod__", False) is True:  # `abc.abstractmethod`'s mark
        spec["ab"] = 1
    if type(fn.__module__) is str:
        spec["md"] = fn.__module__
    if type(fn.__doc__) is str:
        spec["dc"] = fn.__doc__
    with contextlib.suppress(AttributeError):  # a default that is the tests' own object
        spec["sg"] = e(_signature(fn))
    marks = function_marks(fn, e, crosses)
    if marks:
        spec["at"] = marks
    return spec


def function_marks(fn, e, crosses) -> list:
    """A test's function's public attributes, as the worker's function for it shows them
    (sent again each time it crosses: the test may have changed them): data, or what
    crosses as itself (`query.is_cacheable = lambda: False`, `rule.sem = ...`)."""
    public = {k: v for k, v in vars(fn).items() if not k.startswith("_")}
    return [[k, e(v)] for k, v in public.items() if _plain_data(v) or crosses(v)]


def _has(target, name: str) -> bool:
    try:
        object.__getattribute__(target, name)
    except AttributeError:
        return False
    except Exception:
        return True
    return True


def _signature(target):
    """A test's function's signature, its annotations kept where they are builtin types
    or text (anything else of the tests' module is not the candidate's to see)."""
    import inspect

    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        raise AttributeError("__signature__") from None

    def plain(note):
        return (
            note
            if note is inspect.Signature.empty
            or type(note) is str
            or (isinstance(note, type) and note.__module__ == "builtins")
            or (isinstance(note, type) and stdlib_name(note) is not None)
            else inspect.Signature.empty
        )

    if not all(_plain_data(p.default) for p in sig.parameters.values() if p.default is not p.empty):
        raise AttributeError("__signature__")  # a default that is the tests' own object
    params = [p.replace(annotation=plain(p.annotation)) for p in sig.parameters.values()]
    return sig.replace(parameters=params, return_annotation=plain(sig.return_annotation))


def await_here(awaitable, loop):
    """Run an awaitable of the test's to its end: in the test's own loop when it is
    running (this is a thread of the side channel's), else in a loop of its own."""
    import asyncio

    async def drive():
        return await awaitable

    if loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            return asyncio.run_coroutine_threadsafe(drive(), loop).result()
    return asyncio.run(drive())
