"""The judge's proxies for the candidate's objects: the roots every proxy class derives
from, whose behaviour is forwarded to the worker (attributes, calls, special methods,
awaiting), and whose comparisons follow the wire's rule. `classes` builds the proxy
class of each candidate class on these roots."""

from __future__ import annotations

import enum
import types
import unittest
import weakref
from typing import TYPE_CHECKING

from . import lineage, views
from .bound import Bound, Function, Unbound
from .copies import MEMO, MEMOS, copying
from .protocol import GONE, ProtocolError, exact
from .rules import COMPARISONS, FORWARDED, LOCAL_ONLY

if TYPE_CHECKING:
    from .peer import Peer


class Ref:
    """Where a proxy's remote object is: its peer and id."""

    __slots__ = ("ident", "peer")

    def __init__(self, peer: Peer, ident: int) -> None:
        self.peer = peer
        self.ident = ident


REF = "_evalpin_ref"
FUNCTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # `functions`' made ones
VIRTUAL = "_evalpin_virtual"  # a proxy class's bases it could not really derive from
SLOTTED: list = []  # (root, get, set) of the container roots holding a reference (`own`)


def ref_of(obj) -> Ref | None:
    """The remote reference of a proxy (or proxy class), None for anything else; reads
    no attribute through the object's own code."""
    if _IS_PROXY(Proxy, obj):  # no metaclass hook: hot
        try:
            return _SLOT(obj)
        except (AttributeError, TypeError):  # (a test double whose `__class__` is a spec)
            return None
    for root, get, _ in SLOTTED:  # a candidate's list, dict or set subclass's
        if _IS_PROXY(root, obj):
            try:
                return get(obj)
            except AttributeError:
                return None
    if type(obj) is types.FunctionType:  # (never read from its `__dict__`: `wraps` copies it)
        return FUNCTIONS.get(obj)
    if isinstance(obj, type):
        ref = obj.__dict__.get(REF)
    else:
        try:
            ref = object.__getattribute__(obj, "__dict__").get(REF)
        except (AttributeError, TypeError):
            return None
    return ref if type(ref) is Ref else None


def attach(obj, ref: Ref) -> None:
    """Give a new proxy instance its reference."""
    if _IS_PROXY(Proxy, obj):
        return _SLOT_SET(obj, ref)
    for root, _, put in SLOTTED:
        if _IS_PROXY(root, obj):
            return put(obj, ref)
    object.__setattr__(obj, REF, ref)


def special(name: str):
    """A special method the candidate's class defines, forwarded to the worker."""

    def forward(self, *args):
        __tracebackhide__ = True
        base = _own_class(type(self), name, forward)
        if base is not None:  # own method, as `super().__str__()` means it
            return base.peer.request("umethod", obj=base.ident, name=name, args=[self, *args])
        ref = ref_of(self)
        return ref.peer.request("special", obj=ref.ident, name=name, args=args)

    forward.__name__ = name
    return forward


def _own_class(kind: type, name: str, method) -> Ref | None:
    """On a tests' subclass's instance: the candidate class whose `method` this is, whose
    own runs there (`super().__call__(v)`), never the object's class's lookup, which
    would find the tests' override again; None on a candidate object."""
    if REF in _CLASS_DICT(kind):  # (not `kind.__dict__`: RemoteClass's hook, every call)
        return None
    owner = next((c for c in kind.__mro__ if _CLASS_DICT(c).get(name) is method), kind)
    return _CLASS_DICT(owner).get(REF)


def compare(name: str):
    """Between two candidate objects: the candidate's comparison. Against the tests'
    data: the judge's rule (`views.against`), never the candidate's word."""

    def decide(self, other):
        __tracebackhide__ = True
        ref = ref_of(self)
        theirs = ref_of(other)
        if theirs is not None and theirs.peer is ref.peer:
            kind = type(self)  # a tests' class mixing the candidate's: the worker's MRO finds it
            if name in kind._evalpin_compares or REF not in kind.__dict__:
                return ref.peer.request("special", obj=ref.ident, name=name, args=[other])
            return NotImplemented
        return views.against(type(self), ref, name, other, verdict)

    decide.__name__ = name
    return decide


def verdict(answer, name: str):
    """The candidate's answer to a comparison with the tests' data, as the judge takes
    it: an object of the candidate's comes back as its stand-in, whose truth is what the
    judge's own rule decides (identity for `==` and `!=`, none for an order); a truth,
    or any other plain value, is never believed: the judge decides by its own rule
    (`NotImplemented`: the tests' operand, then identity)."""
    answered = ref_of(answer)
    if answered is None or isinstance(answer, type) or _holds_value(type(answer)):
        return NotImplemented
    verdicts = answered.peer.verdicts
    mine = {"__eq__": False, "__ne__": True}.get(name, name)
    before = verdicts.get(answered.ident, mine)
    # One object answering two comparisons (a shared singleton) has no one truth: none.
    verdicts[answered.ident] = mine if before == mine else CONFLICTING
    return answer


CONFLICTING = "conflicting"  # the verdict of an answer to comparisons that disagree


def _holds_value(cls: type) -> bool:
    """Whether a stand-in of `cls` is a value here (a number, string, tuple, container or
    a copy of its contents): as an answer it is a plain value, never believed."""
    return (
        cls._evalpin_value is not None
        or cls._evalpin_container is not None
        or (cls._evalpin_snapshot is not None or issubclass(cls, BaseException))
    )


def call(self, /, *args, **kwargs):
    __tracebackhide__ = True
    base = _own_class(type(self), "__call__", call)
    if base is not None:
        return base.peer.request(
            "umethod", obj=base.ident, name="__call__", args=[self, *args], kwargs=kwargs
        )
    ref = ref_of(self)
    return ref.peer.request("call", obj=ref.ident, args=args, kwargs=kwargs)


def remote_hash(self) -> int:
    ref = ref_of(self)
    return exact(ref.peer.request("special", obj=ref.ident, name="__hash__"), int)


def identity_hash(self) -> int:
    """The hash of a proxy whose class defines none: identity; on an instance of a tests'
    class mixing candidate classes, as the worker's MRO finds it there (a candidate
    mixin after the first one may hash: `class P(m.Repr, m.Eq)`)."""
    if REF not in type(self).__dict__ and ref_of(self) is not None:
        return remote_hash(self)
    return object.__hash__(self)


def _await(self):
    """Await an awaitable of the candidate's: it runs as a task in the worker's own event
    loop while this one keeps running (polled, so the test's timeouts, cancellations and
    other tasks hold); what it awaits of the test's runs in this loop."""
    __tracebackhide__ = True
    ref = ref_of(self)
    peer = ref.peer
    peer.note_loop()
    task = peer.request("start", obj=ref.ident)
    done = False
    try:
        while True:
            done, value = peer.request("poll", args=[task])
            if done:
                return value
            yield  # a bare yield: this loop runs its other tasks once, then polls again
    finally:
        if not done:
            peer.request("cancel", args=[task])


def _send(self, value):
    return _stepper(self).send(value)


def _throw(self, kind, value=None, traceback=None):
    return _stepper(self).throw(kind, value, traceback)


def _close(self) -> None:
    ref = ref_of(self)
    stepper = ref.peer.stepping.pop(ref.ident, None)
    if stepper is not None:
        stepper.close()


def _stepper(self):
    """The generator a task steps when it drives the awaitable through `send`."""
    ref = ref_of(self)
    stepper = ref.peer.stepping.get(ref.ident)
    if stepper is None:
        stepper = ref.peer.stepping[ref.ident] = _await(self)
    return stepper


# What makes a proxy of an awaitable a `collections.abc.Coroutine`: `asyncio.run(m.main())`,
# `await m.fetch()`, `async with`/`async for`, `asyncio.wait_for(m.slow(), 1)`.
AWAITABLE = {"__await__": _await, "send": _send, "throw": _throw, "close": _close}


class RemoteMethod:
    """A method of the candidate's class: one request per call, looked up live there.
    On an instance of a tests' subclass it is the candidate class's own method, called
    unbound (what `super().run(x)` or an inherited method means)."""

    def __init__(self, name: str, bound_to_class: bool = False) -> None:
        self.name = self.__name__ = name
        self.owner: type | None = None
        self.bound_to_class = bound_to_class  # a class method: `Sub.parse(...)` binds Sub

    def __set_name__(self, owner, name) -> None:
        self.name, self.owner = name, owner
        self.__name__ = name

    @property
    def __class__(self):
        """A plain method in its class's namespace is a function, in one process: what
        `mock`'s autospec asks (`isinstance(vars(C)[name], FunctionType)`) to know that
        an instance's call drops `self` from the signature; a class method is not."""
        return RemoteMethod if self.bound_to_class else types.FunctionType

    def __getattr__(self, name: str):
        """What else a function has (its signature, `__code__`, `__defaults__`): the
        candidate's function's, as `inspect` and `mock` read it."""
        ref = None if self.owner is None else self.owner.__dict__.get(REF)
        if ref is None or name in LOCAL_ONLY or name.startswith("_evalpin"):
            raise AttributeError(name)
        return getattr(ref.peer.request("getattr", obj=ref.ident, name=self.name), name)

    def __call__(self, instance, /, *args, **kwargs):
        """`C.__dict__["m"](obj, ...)`: called with `obj` as its instance, as a function
        in a class's namespace is (what `mock.patch.object(..., autospec=True)` needs)."""
        __tracebackhide__ = True
        return self.__get__(instance, type(instance))(*args, **kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            ref = owner.__dict__.get(REF)  # none: a tests' subclass (`Sub.__init__(obj)`)
            if ref is not None:
                return (Bound if self.bound_to_class else Function)(ref, self.name, owner)
            if self.bound_to_class and self.owner is not None:  # `super().parse(...)` too
                return Unbound(self.owner.__dict__[REF], self.name, owner)
            return self
        ref = ref_of(instance)
        if REF in type(instance).__dict__ or self.owner is None:
            return Bound(ref, self.name, instance)
        return Unbound(self.owner.__dict__[REF], self.name, instance)


class RemoteClass(type):
    """The metaclass of every proxy class: calling it constructs in the worker; class
    attributes are the worker's; setting one (monkeypatch) sets it there. A class the
    tests derive from a proxy class is made in the worker too, when it is defined (its
    `__init_subclass__` runs there)."""

    def __new__(mcs, name, bases, ns, /, **kwargs):
        return super().__new__(mcs, name, bases, ns, **kwargs)  # the tests' hooks take theirs

    def __init__(cls, name, bases, ns, /, **kwargs) -> None:
        super().__init__(name, bases, ns)
        if REF not in ns and any(type(c.__dict__.get(REF)) is Ref for c in cls.__mro__[1:]):
            cls._evalpin_sub = _tests_subclass(cls, kwargs)

    def __instancecheck__(cls, instance) -> bool:
        if super().__instancecheck__(instance):
            return True
        return REF in cls.__dict__ and _virtually(type(instance), cls)

    def __subclasscheck__(cls, sub) -> bool:
        if super().__subclasscheck__(sub):
            return True
        return REF in cls.__dict__ and _virtually(sub, cls)

    def __call__(cls, /, *args, **kwargs):
        __tracebackhide__ = True
        ref = cls.__dict__.get(REF)
        if ref is None:  # a class the tests derived from the candidate's
            return _tests_subclass_instance(cls, args, kwargs)
        return ref.peer.request("call", obj=ref.ident, args=args, kwargs=kwargs)

    def __getattribute__(cls, name: str):
        if name == "__slots__":  # the candidate class's, not the proxy's own layout
            ref = type.__getattribute__(cls, "__dict__").get(REF)
            if ref is not None:
                return ref.peer.request("getattr", obj=ref.ident, name=name)
        return type.__getattribute__(cls, name)

    def __dir__(cls):
        """The candidate class's own names (as its metaclass lists them), in the worker;
        a tests' subclass's are its own and its bases', none of the proxy's own."""
        ref = cls.__dict__.get(REF)
        names = None if ref is None else ref.peer.request("special", obj=ref.ident, name="__dir__")
        if type(names) is list and all(type(n) is str for n in names):
            return names
        return [n for n in type.__dir__(cls) if not n.startswith("_evalpin")]

    def __getattr__(cls, name: str):
        __tracebackhide__ = True
        if name in LOCAL_ONLY:
            raise AttributeError(name)
        ref = cls.__dict__.get(REF)
        made = cls.__dict__.get("_evalpin_sub")
        if ref is None and type(made) is int:  # a tests' subclass: its twin there
            base = next(c.__dict__[REF] for c in cls.__mro__ if REF in c.__dict__)
            ref = Ref(base.peer, made)
        if ref is None:
            raise AttributeError(name)
        return ref.peer.request("getattr", obj=ref.ident, name=name)

    def __setattr__(cls, name: str, value) -> None:
        ref = cls.__dict__.get(REF)
        local = name.startswith("__") or name.startswith("_evalpin")
        ready = ref is not None and cls.__dict__.get("_evalpin_ready")
        if ready and name in _PATCHABLE:  # a test's special method: both sides
            return _patch_special(cls, ref, name, value)
        if not ready or local:
            return super().__setattr__(name, value)  # while being made: its own
        if isinstance(value, RemoteMethod) and cls.__dict__.get(name) is value:
            # a patch undone with what the class held (mock.patch.object's exit)
            return ref.peer.request("restore", obj=ref.ident, name=name)
        ref.peer.request("setattr", obj=ref.ident, name=name, args=[value])

    def __delattr__(cls, name: str) -> None:
        ref = cls.__dict__.get(REF)
        if ref is not None and (cls.__dict__.get("_evalpin_saved") or {}).get(name) is GONE:
            del cls.__dict__["_evalpin_saved"][name]  # a patch of an inherited one undone
            ref.peer.request("restore", obj=ref.ident, name=name)
            return super().__delattr__(name)
        if ref is None or name.startswith("__"):
            return super().__delattr__(name)
        ref.peer.request("delattr", obj=ref.ident, name=name)


# Special methods a test may patch on a candidate class (`monkeypatch.setattr(C,
# "__eq__", spy)`): set here and in the worker, whose own lookups (a dict's) call it.
_PATCHABLE = frozenset(COMPARISONS) | FORWARDED | {"__hash__"}


def _patch_special(cls: type, ref: Ref, name: str, value) -> None:
    """The test's replacement of a special method, on the proxy class and the worker's
    class; set back to what the proxy class held (the judge's own rule: a patch undone),
    the worker's class gets its own back. The worker's `special` answers stay the
    candidate's own method's (the test's replacement calling the original)."""
    saved = cls.__dict__.get("_evalpin_saved") or {}
    if name not in saved:
        saved[name] = cls.__dict__.get(name, GONE)
        type.__setattr__(cls, "_evalpin_saved", saved)
    if value is saved[name]:
        del saved[name]
        ref.peer.request("restore", obj=ref.ident, name=name)
    else:
        ref.peer.request("setattr", obj=ref.ident, name=name, args=[value])
    type.__setattr__(cls, name, value)


def _virtually(sub, cls: type) -> bool:
    """Whether `sub` derives from `cls` through a base its proxy class could not really
    derive from (a mixin beside a value's layout: `classes.proxy_class`)."""
    if not isinstance(sub, RemoteClass):
        return False
    return any(issubclass(base, cls) for k in sub.__mro__ for base in k.__dict__.get(VIRTUAL, ()))


def _tests_subclass(cls: type, kwargs: dict) -> int:
    """Make, in the worker, the class standing for a class the tests derive from a
    candidate class: its bases there stand for each of its bases here (`lineage`: a
    mixin chain through the tests' and the candidate's classes has one MRO on both
    sides), its own methods call the tests' class back, its plain class values are
    copied, `__init_subclass__` runs there with the class keywords that reached it."""
    ref = next(c for c in cls.__mro__ if REF in c.__dict__).__dict__[REF]
    peer = ref.peer
    twins = lineage.bases_there(peer, cls, _twin, ref.ident)
    methods, values, on_class = lineage.own_names(cls)
    ident = peer.subclassed(cls, methods)
    remote = peer.request(
        "subclass",
        obj=ref.ident,
        name=cls.__name__,
        args=[ident, methods, values, cls.__qualname__, on_class, twins],
        kwargs=lineage.kept_keywords(cls, kwargs),
    )
    if type(remote) is not int:
        raise ProtocolError("malformed subclass reply")
    return remote


def _twin(klass: type) -> int | None:
    """The worker's id of the class standing for `klass` there: a candidate class's own,
    or the one made for a tests' subclass; None for a class of the tests' alone."""
    ref = klass.__dict__.get(REF)
    if type(ref) is Ref:
        return ref.ident
    made = klass.__dict__.get("_evalpin_sub")
    return made if type(made) is int else None


def _tests_subclass_instance(cls: type, args: tuple, kwargs: dict):
    """An instance of a class the tests derived from a candidate class: it lives in the
    worker as an instance of the class made there; `__init__` runs here as Python would
    run it (the candidate's own `__init__`, when inherited, in the worker)."""
    peer = next(ref_of(c) for c in cls.__mro__ if ref_of(c) is not None).peer
    error = issubclass(cls, BaseException)  # its twin there holds its arguments too
    harness = issubclass(cls, unittest.TestCase)  # and a test case its method's name
    if cls._evalpin_value is not None:  # its value would be the candidate's `__new__`'s
        peer.unsupported(f"an instance of the tests' {cls.__qualname__} of a candidate's value")
    container = cls._evalpin_container  # a list, dict or set: its contents in step
    obj = BaseException.__new__(cls, *args) if error else (container or object).__new__(cls)
    ident = peer.give(obj)
    # No `__init__` but object's, and arguments: Python lets them through only when a
    # `__new__` takes them (the candidate's, there), so they go to it there.
    to_new = cls.__init__ is object.__init__ and bool(args or kwargs) and not error
    made = [ident, *args] if error or harness or to_new else [ident]
    sub = cls.__dict__["_evalpin_sub"]
    remote = peer.request("new", obj=sub, args=made, kwargs=kwargs if to_new else {})
    key = None
    if container is not None and type(remote) is list and len(remote) == 2:
        remote, key = remote
    if type(remote) is not int or not (key is None or type(key) is int):
        raise ProtocolError("malformed subclass reply")
    attach(obj, Ref(peer, remote))
    if key is not None:
        peer.shares.add(key, obj, container.__name__)
    peer.adopt(remote, obj)
    if not to_new:
        cls.__init__(obj, *args, **kwargs)
    if error:  # what the candidate's `__init__` made of them, there
        BaseException.args.__set__(
            obj, exact(peer.request("getattr", obj=remote, name="args"), tuple)
        )
    return obj


_JUDGE: list = []  # the judge of this process, for `pickle.loads`


def bind(judge: Peer) -> None:
    """Make `judge` the one pickled proxies of this process are rebuilt from."""
    _JUDGE[:] = [judge]


def rebuild(ident: int):
    """What `pickle.loads` calls for a pickled proxy: the worker's own round trip copy."""
    if not _JUDGE:
        raise ValueError("a pickled object of the candidate's, outside its session")
    return _JUDGE[0].kept(ident)


class ProxyBase(metaclass=RemoteClass):
    """What every proxy does: attributes, copies and pickling through the worker."""

    __slots__ = ()
    # what the class built for the candidate's says (no annotations: `__annotations__`
    # of a proxy is the candidate's, read from the worker)
    _evalpin_compares = frozenset()
    _evalpin_snapshot = None  # a builtin a snapshot of the value compares as
    _evalpin_value = None  # the immutable builtin holding the value here
    _evalpin_container = None  # the list, dict or set holding the contents here

    def __init_subclass__(cls, **kwargs) -> None:
        # class keywords belong to the candidate's `__init_subclass__`, in the worker:
        # those the tests' own hooks before it passed on
        if REF not in cls.__dict__:
            lineage.reached(cls, kwargs)

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        if name == "__isabstractmethod__":  # as the worker found it, never asked for here
            return ref_of(self).ident in ref_of(self).peer.abstract
        if name in LOCAL_ONLY or name.startswith("_evalpin"):
            raise AttributeError(name)
        ref = ref_of(self)
        if ref is None:
            raise AttributeError(name)
        return ref.peer.request("getattr", obj=ref.ident, name=name)

    def __dir__(self):
        """The worker's `dir()` of the object (its own attributes, its properties, its
        classes' names), as in one process: what `mock`'s `spec=obj` allows."""
        ref = ref_of(self)
        names = None if ref is None else ref.peer.request("special", obj=ref.ident, name="__dir__")
        if type(names) is list and all(type(n) is str for n in names):
            return names
        return [n for n in object.__dir__(self) if not n.startswith("_evalpin")]

    def __setattr__(self, name: str, value) -> None:
        ref = ref_of(self)
        if ref is None or name in LOCAL_ONLY:
            return object.__setattr__(self, name, value)
        ref.peer.request("setattr", obj=ref.ident, name=name, args=[value])

    def __delattr__(self, name: str) -> None:
        ref = ref_of(self)
        if ref is None or name in LOCAL_ONLY:
            return object.__delattr__(self, name)
        ref.peer.request("delattr", obj=ref.ident, name=name)

    def __copy__(self):
        ref = ref_of(self)
        return ref.peer.request("copy", obj=ref.ident, args=["copy"])

    def __deepcopy__(self, memo):
        """The worker's deep copy, with one memo there per `deepcopy` here: the copies of
        candidate objects that refer to each other refer to each other's copies."""
        ref = ref_of(self)
        key = memo.get(MEMO)
        if key is None:
            key = memo[MEMO] = next(MEMOS)
        with copying(key, memo):  # the test's objects met there are copied in this memo
            return ref.peer.request("copy", obj=ref.ident, args=["deepcopy", key])

    def __reduce_ex__(self, protocol):
        """Pickled as the worker's own pickle round trip of the object: `pickle.loads`
        here gets that copy's proxy; no byte of the candidate's is ever unpickled."""
        ref = ref_of(self)
        copy = ref.peer.request("copy", obj=ref.ident, args=["pickle"])
        return rebuild, (ref.peer.keep(copy),)

    def __del__(self) -> None:
        ref = ref_of(self)
        if ref is not None:
            ref.peer.verdicts.pop(ref.ident, None)
            ref.peer.release(ref.ident)


for _name_ in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(ProxyBase, _name_, compare(_name_))
ProxyBase.__hash__ = object.__hash__  # identity, unless the candidate's class hashes
del _name_


class Proxy(ProxyBase):
    """The root of a proxy of an object that holds no value here: no state but its
    reference, so `vars()` and `__dict__` are the remote object's."""

    __slots__ = (REF, "__weakref__", "__orig_class__")  # what `Box[int](x)` sets here


_IS_PROXY = type.__instancecheck__
_SLOT = Proxy.__dict__[REF].__get__
_SLOT_SET = Proxy.__dict__[REF].__set__
_CLASS_DICT = type.__dict__["__dict__"].__get__  # a class's own names, no metaclass hook


class RemoteEnum(enum.EnumMeta):
    """The metaclass of a candidate's enum rebuilt here: members are real, class-level
    names that are not (a classmethod, a constant) are read from the worker."""

    def __getattr__(cls, name: str):
        __tracebackhide__ = True
        ref = cls.__dict__.get(REF)
        if name.startswith("_") or ref is None:
            raise AttributeError(name)
        return ref.peer.request("getattr", obj=ref.ident, name=name)
