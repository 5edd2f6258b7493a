"""The judge's proxies for the candidate's objects: local classes built from a
description (names, bases, dunders, methods, dataclass fields, enum members), whose
behaviour is forwarded to the worker and whose comparisons follow the wire's rule."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from .values import _COMPARISONS, _IDENT, _LOCAL_DUNDERS, ProtocolError, _exact

if TYPE_CHECKING:
    from .judge import Judge


class _Ref:
    """Where a proxy's remote object is: its peer and id. Kept in the instance's
    `__dict__` under one name, so the proxy's attribute namespace stays the remote's."""

    __slots__ = ("ident", "peer")

    def __init__(self, peer: Judge, ident: int) -> None:
        self.peer = peer
        self.ident = ident


_REF = "_evalpin_ref"


def _ref(obj) -> _Ref | None:
    try:
        ref = object.__getattribute__(obj, "__dict__").get(_REF)
    except (AttributeError, TypeError):
        return None
    return ref if type(ref) is _Ref else None


def _special(name: str):
    def forward(self, *args):
        __tracebackhide__ = True
        ref = _ref(self)
        if name == "__exit__" and len(args) == 3:
            args = (args[0], args[1], None)  # a traceback of the judge's never crosses
        return ref.peer.request("special", obj=ref.ident, name=name, args=args)

    forward.__name__ = name
    return forward


def _compare(name: str):
    """Between two candidate objects: the candidate's comparison. Against the tests'
    data: the value's own (trusted) comparison, or none at all."""

    def compare(self, other):
        __tracebackhide__ = True
        ref = _ref(self)
        theirs = _ref(other)
        if theirs is not None and theirs.peer is ref.peer:
            if name in type(self)._evalpin_compares:
                return ref.peer.request("special", obj=ref.ident, name=name, args=[other])
            return NotImplemented
        snapshot = type(self)._evalpin_snapshot
        if snapshot is not None:
            value = ref.peer.request("value", obj=ref.ident)
            if type(value) is not snapshot:
                return NotImplemented
            return getattr(snapshot, name)(value, other)
        return NotImplemented

    compare.__name__ = name
    return compare


def _call(self, *args, **kwargs):
    __tracebackhide__ = True
    ref = _ref(self)
    return ref.peer.request("call", obj=ref.ident, args=args, kwargs=kwargs)


def _run(self):
    """Run a coroutine of the candidate's to its end, in the worker's own event loop."""
    __tracebackhide__ = True
    ref = _ref(self)
    return ref.peer.request("run", obj=ref.ident)


def _await(self):
    return _run(self)
    yield


def _send(self, value):
    if value is not None:
        raise TypeError("a coroutine of the candidate's runs in one step")
    raise StopIteration(_run(self))


def _throw(self, kind, value=None, traceback=None):
    raise value if value is not None else kind


def _close(self) -> None:
    ref = _ref(self)
    ref.peer.request("method", obj=ref.ident, name="close")


# What makes a proxy of a coroutine a `collections.abc.Coroutine`: `asyncio.run(m.main())`
# and `await m.fetch()` run it in the worker as one step.
_COROUTINE = {"__await__": _await, "send": _send, "throw": _throw, "close": _close}


def _hash(self) -> int:
    ref = _ref(self)
    value = ref.peer.request("special", obj=ref.ident, name="__hash__")
    return _exact(value, int)


class _RemoteMethod:
    """A method of the candidate's class: one request per call, looked up live there.
    On an instance of a tests' subclass it is the candidate class's own method, called
    unbound (what `super().run(x)` or an inherited method means)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.owner: type | None = None

    def __set_name__(self, owner, name) -> None:
        self.name, self.owner = name, owner

    def __get__(self, instance, owner=None):
        if instance is None:
            return _Bound(owner.__dict__.get(_REF), self.name, owner)
        ref = _ref(instance)
        if _REF in type(instance).__dict__ or self.owner is None:
            return _Bound(ref, self.name, instance)
        return _Unbound(self.owner.__dict__[_REF], self.name, instance)


class _Unbound:
    """The candidate class's method for an instance of a tests' subclass."""

    __slots__ = ("instance", "name", "ref")

    def __init__(self, ref: _Ref, name: str, instance) -> None:
        self.ref, self.name, self.instance = ref, name, instance

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        return self.ref.peer.request(
            "umethod",
            obj=self.ref.ident,
            name=self.name,
            args=[self.instance, *args],
            kwargs=kwargs,
        )


class _Bound:
    """A bound method of a candidate object (or class), called in the worker."""

    __slots__ = ("name", "owner", "ref")

    def __init__(self, ref: _Ref, name: str, owner) -> None:
        self.ref, self.name, self.owner = ref, name, owner

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        return self.ref.peer.request(
            "method", obj=self.ref.ident, name=self.name, args=args, kwargs=kwargs
        )

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        method = self.ref.peer.request("getattr", obj=self.ref.ident, name=self.name)
        return getattr(method, name)

    def __repr__(self) -> str:
        return f"<bound method {type(self.owner).__qualname__}.{self.name}>"


class _RemoteClass(type):
    """The metaclass of every proxy class: calling it constructs in the worker; class
    attributes are the worker's; setting one (monkeypatch) sets it there."""

    def __call__(cls, *args, **kwargs):
        __tracebackhide__ = True
        ref = cls.__dict__.get(_REF)
        if ref is None:  # a class the tests derived from the candidate's
            return _tests_subclass_instance(cls, args, kwargs)
        return ref.peer.request("call", obj=ref.ident, args=args, kwargs=kwargs)

    def __getattr__(cls, name: str):
        __tracebackhide__ = True
        if name.startswith("__") and name not in _LOCAL_DUNDERS:
            raise AttributeError(name)
        ref = cls.__dict__.get(_REF)
        if ref is None:
            raise AttributeError(name)
        return ref.peer.request("getattr", obj=ref.ident, name=name)

    def __setattr__(cls, name: str, value) -> None:
        ref = cls.__dict__.get(_REF)
        if ref is None or name.startswith("__") or name.startswith("_evalpin"):
            return super().__setattr__(name, value)
        ref.peer.request("setattr", obj=ref.ident, name=name, args=[value])

    def __delattr__(cls, name: str) -> None:
        ref = cls.__dict__.get(_REF)
        if ref is None or name.startswith("__"):
            return super().__delattr__(name)
        ref.peer.request("delattr", obj=ref.ident, name=name)


def _tests_subclass_instance(cls: type, args: tuple, kwargs: dict):
    """An instance of a class the tests derived from a candidate class: it lives in the
    worker as an instance of a subclass made there, whose methods the tests' class
    overrides are forwarded back here (so the candidate's `self.transform(x)` runs the
    test's), then `__init__` runs here as Python would run it."""
    base = next(c for c in cls.__mro__ if _REF in c.__dict__)
    ref = base.__dict__[_REF]
    methods, values = [], {}
    for klass in cls.__mro__[: cls.__mro__.index(base)]:
        for name, value in vars(klass).items():
            if name.startswith("_") or name in methods or name in values:
                continue
            if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
                methods.append(name)
            else:
                values[name] = value
    obj = object.__new__(cls)
    peer = ref.peer
    ident = peer.subclassed(obj, methods)
    remote = peer.request(
        "subclass", obj=ref.ident, name=cls.__name__, args=[ident, methods, values]
    )
    if type(remote) is not int:
        raise ProtocolError("malformed subclass reply")
    object.__setattr__(obj, _REF, _Ref(peer, remote))
    peer.adopt(remote, obj)
    cls.__init__(obj, *args, **kwargs)
    return obj


class _Proxy(metaclass=_RemoteClass):
    """The root of every proxy class in the judge: no state but the reference, all
    behaviour forwarded by the class built for the candidate's class."""

    __slots__ = ()
    _evalpin_compares: frozenset = frozenset()
    _evalpin_snapshot: type | None = None

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        if name.startswith("__") and name not in _LOCAL_DUNDERS:
            raise AttributeError(name)
        ref = _ref(self)
        if ref is None:
            raise AttributeError(name)
        return ref.peer.request("getattr", obj=ref.ident, name=name)

    def __setattr__(self, name: str, value) -> None:
        ref = _ref(self)
        if ref is None or name.startswith("__"):
            return object.__setattr__(self, name, value)
        ref.peer.request("setattr", obj=ref.ident, name=name, args=[value])

    def __delattr__(self, name: str) -> None:
        ref = _ref(self)
        if ref is None or name.startswith("__"):
            return object.__delattr__(self, name)
        ref.peer.request("delattr", obj=ref.ident, name=name)

    def __copy__(self):
        ref = _ref(self)
        return ref.peer.request("copy", obj=ref.ident, args=[False])

    def __deepcopy__(self, memo):
        ref = _ref(self)
        return ref.peer.request("copy", obj=ref.ident, args=[True])

    def __reduce_ex__(self, protocol):
        _ref(self).peer.unsupported(f"pickling a {type(self).__qualname__} of the candidate's")


for _name_ in _COMPARISONS:
    setattr(_Proxy, _name_, _compare(_name_))
_Proxy.__hash__ = object.__hash__  # identity, unless the candidate's class hashes
del _name_


class _RemoteEnum(enum.EnumMeta):
    """The metaclass of a candidate's enum rebuilt here: members are real, class-level
    names that are not (a classmethod, a constant) are read from the worker."""

    def __getattr__(cls, name: str):
        __tracebackhide__ = True
        ref = cls.__dict__.get(_REF)
        if name.startswith("_") or ref is None:
            raise AttributeError(name)
        return ref.peer.request("getattr", obj=ref.ident, name=name)


def _dataclass_fields(spec) -> dict:
    """Real `dataclasses.Field`s built from names and flags, so `fields`, `asdict`,
    `replace` and pytest's dataclass diff work on a proxy."""
    import dataclasses

    kind = getattr(dataclasses, "_FIELD", None)
    fields = {}
    for entry in spec if type(spec) is list else []:
        if type(entry) is not list or len(entry) != 4 or type(entry[0]) is not str:
            raise ProtocolError("malformed dataclass field")
        name, compare, shown, init = entry
        if not _IDENT(name):
            raise ProtocolError("malformed dataclass field")
        field = dataclasses.field(compare=compare is True, repr=shown is True, init=init is True)
        field.name, field.type = name, object
        if kind is not None:
            field._field_type = kind
        fields[name] = field
    return fields


# -- containers shared with the worker ------------------------------------------------------


def _mutator(base: type, name: str):
    method = getattr(base, name)

    def change(self, *args, **kwargs):
        __tracebackhide__ = True
        result = method(self, *args, **kwargs)
        ref = object.__getattribute__(self, "__dict__")[_REF]
        ref.peer.request("method", obj=ref.ident, name=name, args=args, kwargs=kwargs)
        return self if name.startswith("__i") else result

    change.__name__ = name
    return change


def _live_class(base: type, names: str) -> type:
    """A real list, dict or set (the builtin's own comparisons and reads) whose changes
    are made on the worker's object too; the worker sends it again when it changes."""
    ns = {name: _mutator(base, name) for name in names.split()}
    return type(f"shared_{base.__name__}", (base,), ns)


LIVE = {
    "list": _live_class(
        list,
        "append extend insert pop remove clear sort reverse __setitem__ __delitem__ "
        "__iadd__ __imul__",
    ),
    "dict": _live_class(dict, "__setitem__ __delitem__ update pop popitem clear setdefault"),
    "set": _live_class(
        set,
        "add discard remove pop clear update difference_update intersection_update "
        "symmetric_difference_update __ior__ __iand__ __isub__ __ixor__",
    ),
}


def refill(obj, value) -> None:
    """Make a shared container hold `value`, without sending the change back."""
    base = type(obj).__mro__[1]
    if base is list:
        list.__setitem__(obj, slice(None), value)
    else:
        base.clear(obj)
        base.update(obj, value)
