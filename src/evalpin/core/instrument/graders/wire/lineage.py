"""A tests' class's whole lineage in the worker (issue 48): the class the worker makes for
a tests' subclass of a candidate class has, as its bases, a class of the worker's for
every base the test's class has: the candidate's class itself, the class made for a
tests' subclass, or one made now for a class of the tests' own that derives from no
candidate class (a mixin `class Extra:` beside `m.Base`). So the worker's MRO is the
test's, and a `super()` call in a candidate's method reaches the tests' mixin after it
(its method called back in the test), as in one process.

Each class made there carries only its own names (`own_names`); what it defines is the
tests' code, called back (`tests_own.override`). Class keywords reach the candidate's
`__init_subclass__` as the tests' own hooks before it passed them on (`kept_keywords`):
a tests' class that takes `tag=` takes it in the test."""

from __future__ import annotations

import abc
import weakref
from typing import Generic

from .protocol import ProtocolError
from .rules import COMPARISONS, FORWARDED

_DECIDED = frozenset([*COMPARISONS, "__hash__"])  # a tests' class's own: the tests'
# The tests' own classes (no candidate base) made in the worker, for each judge (a
# process may hold more than one, one after another): class -> its id there.
_MADE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# What reached the candidate's `__init_subclass__` in the test, per class being made.
_KEYWORDS: dict[int, dict] = {}


def own_names(klass: type) -> tuple[list[str], dict, list[str]]:
    """The names `klass` defines itself that the worker's class for it holds: the
    methods (and descriptors) called back in the test, its class and static methods
    among them (`on_class`), and its plain class values, copied."""
    methods, values, on_class = [], {}, []
    for name, value in vars(klass).items():
        special = name == "__init__" or name in FORWARDED or name in _DECIDED
        # what binds (a function, a descriptor) is called back; a builtin function or a
        # class kept as a class value (`digest = hashlib.sha256`) is a value
        binds = callable(value) and hasattr(type(value), "__get__")
        method = binds or isinstance(value, (staticmethod, classmethod, property))
        hook = method and not name.startswith(("__", "_evalpin"))  # `self._step(x)` too
        if name.startswith("_") and not (special or hook):
            continue
        if method:
            methods.append(name)
            if isinstance(value, (staticmethod, classmethod)):
                on_class.append(name)  # called back on the tests' class itself
        else:
            values[name] = value
    return methods, values, on_class


def bases_there(peer, cls: type, twin, anchor: int) -> list:
    """The classes standing for `cls`'s bases in the worker, in order: `twin(base)` (an
    id) for a candidate's class or a tests' subclass of one; a class made now for a
    tests' own class (`anchor`: a candidate class's id, what the request is made on); an
    abstract base of the standard library's itself (crossing by name: the worker's
    own). Any other base (`object`, a builtin's layout) has none there."""
    found: list = []
    for base in cls.__bases__:
        ident = twin(base)
        if ident is None and abstract_base(base):  # the worker's own, by name
            found.append(base)
            continue
        if ident is None and _makeable(peer, base):
            ident = _made_for(peer, base, twin, anchor)
        if ident is not None:
            found.append(ident)
    return found


# Where the standard library's abstract bases live: mixin methods over the class's own
# (`Mapping.get` over a tests' `__getitem__`), no layout, no state of their own.
_ABSTRACT_MODULES = frozenset({"abc", "collections.abc", "numbers", "typing", "contextlib"})


def abstract_base(klass: type) -> bool:
    """A standard library's abstract base (`collections.abc.Mapping`, `abc.ABC`,
    `typing.Generic`): the worker's class takes the worker's own, so a candidate mixin's
    `self.get(k)` finds `Mapping.get` there as in one process."""
    module = getattr(klass, "__module__", None)
    return module in _ABSTRACT_MODULES and (isinstance(klass, abc.ABCMeta) or klass is Generic)


def _makeable(peer, klass: type) -> bool:
    """A class of the tests' own that the worker can stand for with a plain class: its
    metaclass is `type`'s (or abc's), and every class in its MRO is the tests' own, or
    `object`, or an abstract base of the standard library's (no layout of a builtin, no
    metaclass of its own to run)."""
    tests = getattr(peer, "_tests_modules", None)
    if tests is None or type(klass) not in (type, abc.ABCMeta):
        return False
    return all(k is object or abstract_base(k) or tests.tests_class(k) for k in klass.__mro__)


def _made_for(peer, klass: type, twin, anchor: int) -> int:
    """The worker's class for a tests' own class (made once): its bases there, its own
    names; its methods call the tests' class's own back."""
    made_here = _MADE.setdefault(peer, weakref.WeakKeyDictionary())
    made = made_here.get(klass)
    if made is not None:
        return made
    bases = bases_there(peer, klass, twin, anchor)
    methods, values, on_class = own_names(klass)
    ident = peer.subclassed(klass, methods)
    remote = peer.request(
        "subclass",
        obj=anchor,
        name=klass.__name__,
        args=[ident, methods, values, klass.__qualname__, on_class, bases],
    )
    if type(remote) is not int:
        raise ProtocolError("malformed subclass reply")
    made_here[klass] = remote
    return remote


def reached(cls: type, keywords: dict) -> None:
    """The class keywords the tests' hooks passed on to the candidate's classes' root
    (`ProxyBase.__init_subclass__`) while `cls` is made."""
    _KEYWORDS[id(cls)] = dict(keywords)


def kept_keywords(cls: type, keywords: dict) -> dict:
    """The class keywords for the candidate's `__init_subclass__` in the worker: those
    that reached it in the test (a tests' `__init_subclass__` took its own); none when
    a tests' hook passed nothing on (`keywords`, all of them, if nothing was recorded)."""
    return _KEYWORDS.pop(id(cls), keywords)
