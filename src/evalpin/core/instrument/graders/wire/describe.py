"""A candidate class as data, for the judge to build its proxy class from: names, bases,
the special methods and methods it defines, its dataclass fields, named-tuple fields,
enum members, protocol members, docstring. The judge trusts none of it (`classes`):
a description only ever names what a proxy may do within the wire's rules."""

from __future__ import annotations

import enum
import sys
import types

from .exceptions import exception_bases
from .protocol import ProtocolError
from .rules import COMPARISONS, COPIES, FORWARDED, IMMUTABLE_BASES, MUTABLE_BASES
from .stdlib import BUILTIN_TYPES, STDLIB, stdlib_name

# Stdlib classes whose instances compare as a copy of their contents (their `__eq__`
# is the stdlib's, over the candidate's data): how the worker copies them.
SNAPSHOTS = {
    ("collections", "UserDict"): ("dict", lambda obj: dict(obj.data)),
    ("collections", "UserList"): ("list", lambda obj: list(obj.data)),
    ("collections", "UserString"): ("str", lambda obj: str(obj.data)),
    ("collections.abc", "Mapping"): ("dict", lambda obj: dict(obj.items())),
    ("collections.abc", "Set"): ("set", lambda obj: set(obj)),
}


def describe(cls: type, ident: int, e, class_form) -> dict:
    """The description of `cls`, with the id the judge will refer to it by (its
    candidate bases in `class_form`, described or referred to)."""
    mro = [c for c in cls.__mro__ if _counts(cls, c)]
    names = {n for c in mro for n in vars(c)}
    data = {
        "t": "k",
        "v": ident,
        "n": getattr(cls, "__name__", "Remote"),
        "q": getattr(cls, "__qualname__", "Remote"),
        "m": getattr(cls, "__module__", "remote"),
        "b": [],
        "d": sorted(n for n in names if n in FORWARDED),
        "c": sorted(n for n in names if n in COMPARISONS),
        "h": "__hash__" in names,
        "nohash": getattr(cls, "__hash__", None) is None,
        "fn": _methods(mro),
        "pk": sorted(n for n in names if n in ("__getstate__", "__setstate__")),
    }
    bound_to_class = _methods(mro, classmethod)
    if bound_to_class:
        data["cm"] = bound_to_class
    doc = cls.__dict__.get("__doc__")
    if type(doc) is str:
        data["doc"] = doc
    if any("__await__" in vars(c) for c in cls.__mro__):
        data["aw"] = True
    stdlib_bases = []
    for base in cls.__bases__:
        if base is object or BUILTIN_TYPES.get(base.__name__) is base:
            continue  # described by name below (value and exception bases)
        named = stdlib_name(base)
        if named is not None and named[0].split(".")[0] in STDLIB:
            stdlib_bases.append(list(named))
        elif base.__module__ not in ("typing", "abc"):
            data["b"].append(class_form(base))
    if stdlib_bases:
        data["sb"] = stdlib_bases
    if issubclass(cls, BaseException):
        data["x"] = exception_bases(cls)
    value = value_base(cls)
    if value is not None:
        data["vb"] = value
    snap = snapshot_kind(cls)
    if snap is not None and value is None:
        data["sn"] = snap[0]
    fields = getattr(cls, "__dataclass_fields__", None)
    dataclasses = sys.modules.get("dataclasses")  # a dataclass means it is imported
    if isinstance(fields, dict) and dataclasses and dataclasses.is_dataclass(cls):
        data["f"] = [_field(f, dataclasses.MISSING, e) for f in dataclasses.fields(cls)]
    named = getattr(cls, "_fields", None)
    if issubclass(cls, tuple) and type(named) is tuple and all(type(n) is str for n in named):
        data["nt"] = list(named)
    match = getattr(cls, "__match_args__", None)
    if type(match) is tuple and all(type(n) is str for n in match):
        data["ma"] = list(match)
    if getattr(cls, "_is_protocol", False) and "typing" in sys.modules:
        typing = sys.modules["typing"]
        attrs = sorted(a for a in typing._get_protocol_attrs(cls) if type(a) is str)
        data["pr"] = [attrs, bool(getattr(cls, "_is_runtime_protocol", False))]
    abstract = getattr(cls, "__abstractmethods__", None)
    if isinstance(abstract, frozenset) and all(type(n) is str for n in abstract):
        data["ab"] = sorted(abstract)
    if "__class_getitem__" in names or "__parameters__" in vars(cls):
        data["g"] = True
    if isinstance(cls, enum.EnumMeta):
        base = next(
            (b.__name__ for b in cls.__mro__ if b.__module__ == "enum" and b is not cls),
            "Enum",
        )
        data["e"] = [base, [[n, e(m._value_)] for n, m in cls.__members__.items()]]
    return data


def _field(f, missing, e) -> list:
    """A dataclass field: name, compare, repr, init, and what else it says (its default
    or default factory, metadata, a plain type), each crossing as any value does."""
    extra: dict = {}
    if f.default is not missing:
        extra["df"] = e(f.default)
    if f.default_factory is not missing:
        extra["fy"] = e(f.default_factory)
    if f.metadata:
        extra["mt"] = e(dict(f.metadata))
    if type(f.type) is str or (isinstance(f.type, type) and f.type.__module__ == "builtins"):
        extra["ty"] = e(f.type)
    return [f.name, bool(f.compare), bool(f.repr), bool(f.init), extra]


def _methods(mro: list, kinds=(types.FunctionType, classmethod)) -> list[str]:
    """The methods and class methods the class has (or those of `kinds`), as its MRO
    resolves each name (a static method is a plain function on any access: read from the
    worker, one object)."""
    found: dict = {}
    for c in mro:
        if c.__module__ != "builtins":
            for n, v in list(vars(c).items()):
                found.setdefault(n, v)
    return sorted(
        n
        for n, v in found.items()
        if (not n.startswith("__") or n == "__init__") and isinstance(v, kinds)
    )


def _counts(cls: type, c: type) -> bool:
    """Whether the dunders and methods of `c`, in `cls`'s MRO, are forwarded: the
    candidate's own classes', the stdlib's, a builtin type's own (a function, a
    generator); never those of object, a builtin value base (int, str, tuple, list,
    dict...), a builtin exception or `unittest.TestCase` (the tests' machinery), which
    the proxy class inherits for real."""
    if c is object or c.__module__ == "unittest.case":
        return False
    return c.__module__ != "builtins" or cls.__module__ == "builtins"


def value_base(cls: type) -> str | None:
    """The builtin value type a candidate class derives from, if any (not for enums)."""
    if isinstance(cls, enum.EnumMeta) or issubclass(cls, BaseException):
        return None
    for base in cls.__mro__[1:]:
        name = base.__name__
        if (name in IMMUTABLE_BASES or name in MUTABLE_BASES) and BUILTIN_TYPES.get(name) is base:
            return name
    return None


def snapshot_kind(cls: type):
    """(builtin name, copier) for a class that compares as a copy of its contents."""
    for base in cls.__mro__[1:]:
        found = SNAPSHOTS.get((base.__module__, base.__name__))
        if found is not None:
            return found
    return None


def abstract(value) -> bool:
    """Whether an object of the candidate's is marked abstract (a decorator's object
    copying `__isabstractmethod__` from the function it wraps, as abc reads it while
    the test's class is made), read from its own and its class's namespaces only: no
    `__getattr__` of the candidate's runs for it."""
    try:
        own = object.__getattribute__(value, "__dict__")
    except Exception:
        own = None
    if type(own) is dict and "__isabstractmethod__" in own:
        return own["__isabstractmethod__"] is True
    for cls in type(value).__mro__:
        if "__isabstractmethod__" in cls.__dict__:
            return cls.__dict__["__isabstractmethod__"] is True
    return False


def bound(found, target, name: str):
    """A special method `found` on `target`'s type, bound as Python's implicit lookup
    binds it: through the descriptor there (a slot named `__hash__` holding a function
    per instance, as a caching marker class keeps it, too)."""
    if found is None:  # set to None to say "none": `__hash__ = None`, unhashable
        what = "unhashable type" if name == "__hash__" else f"no {name} for"
        raise TypeError(f"{what}: {type(target).__name__!r}")
    get = getattr(type(found), "__get__", None)
    return get(found, target, type(target)) if get is not None else found


SHADOW = "__evalpin_shadows__:"  # a getattr name: does the object's own attribute shadow?


def attribute(target, name: str):
    """`getattr` as the judge asks it: a signature and annotations (evaluated here: a
    string annotation is never evaluated by the judge) read as `inspect` reads them."""
    if name == "__signature__":
        import inspect

        try:
            return inspect.signature(target)
        except (TypeError, ValueError):
            raise AttributeError(name) from None
    if name == "__annotations__" and hasattr(target, name):
        import inspect

        try:
            return inspect.get_annotations(target, eval_str=True)
        except Exception:
            raise AttributeError(name) from None
    if name.startswith(SHADOW):  # a container stand-in's question (`own`)
        return shadows(target, name[len(SHADOW) :])
    return getattr(target, name)


def shadows(target, name: str) -> bool:
    """In the worker: whether `target`'s own attribute `name` hides what its class gives
    (as `object.__getattribute__` finds it: a non-data descriptor or a plain class
    attribute behind an instance dictionary's entry)."""
    found = _missing = object()
    for klass in type(target).__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            break
    if found is _missing or hasattr(type(found), "__set__"):
        return False
    try:
        value = object.__getattribute__(target, name)
    except AttributeError:
        return False
    getter = getattr(type(found), "__get__", None)
    expected = getter(found, target, type(target)) if getter else found
    if value is expected:
        return False
    bound = (types.MethodType, types.BuiltinMethodType)
    return not (type(value) is type(expected) and type(value) in bound and value == expected)


def unbound(cls: type, obj, name: str):
    """`name` as found from `cls` on, bound to `obj` (an instance or a subclass of a
    tests' class): what the proxy class of `cls` stands for in `obj`'s MRO, so a class
    of the tests' between `cls` and the class defining `name` comes first, as it does
    in one process (a class method reached through a subclass binds to that class)."""
    owner = obj if isinstance(obj, type) else type(obj)
    mro = owner.__mro__
    for klass in mro[mro.index(cls) :] if cls in mro else cls.__mro__:
        if name in vars(klass):
            raw = vars(klass)[name]
            if isinstance(raw, classmethod) and isinstance(obj, type) and issubclass(obj, cls):
                return raw.__get__(None, obj)
            return raw.__get__(obj, type(obj)) if hasattr(raw, "__get__") else raw
    raise AttributeError(name)


def value_of(target):
    """The value a value-backed or snapshot stand-in holds: a copy by the builtin's or
    the stdlib kind's own rule."""
    base = value_base(type(target))
    if base is not None:
        return COPIES[base](target)
    snap = snapshot_kind(type(target))
    if snap is None:
        raise ProtocolError("not a value")
    return snap[1](target)
