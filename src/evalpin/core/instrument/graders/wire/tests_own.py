"""The judge's side of the tests' own classes the worker meets (issue 48): a tests'
class's own method called back for the class the worker made for it (so a `super()`
chain through the tests' and the candidate's classes runs each class's own), and what
the worker cannot carry of a tests' class, named by the judge itself (the worker only
says which of a fixed few it met, and of which of the tests' classes: never the words).
"""

from __future__ import annotations

from . import inherent
from .protocol import ProtocolError

# What the worker may say it cannot carry of a tests' class (`Judge` notes it
# `unsupported`, the case disputed): the judge's own words, the class's name filled in.
UNCARRIED = {
    # its objects would be the tests' class's, made by the candidate: an object lives in
    # one process, and the tests' class's layout and code are the test's
    "derived": "a class the candidate derives from the tests' class {}",
    # what refers to a tests' object (its instances, to a class) is in the test's process
    "referrers": "what refers to the tests' {} (gc.get_referrers/get_referents)",
}


def uncarried(target, what: str) -> str:
    """The judge's note for what the worker met (`what`, of `UNCARRIED`) on `target`."""
    if what not in UNCARRIED or (what == "derived" and not isinstance(target, type)):
        raise ProtocolError("unknown uncarried kind")
    cls, kind = (target, "class") if isinstance(target, type) else (type(target), "object of")
    name = f"{cls.__module__}.{cls.__qualname__}"[:200]
    return UNCARRIED[what].format(name if what == "derived" else f"{kind} {name}")


def adopt(judge, obj) -> int:
    """The id here of an instance of a tests' subclass the candidate made there."""
    if type(obj) not in judge._overrides:
        raise ProtocolError("not an instance of a tests' subclass")
    ident = judge.give(obj)
    judge._kinds[ident] = "subclass"
    return ident


def override(judge, target, on_class: bool, name: str, args: list, kwargs: dict):
    """A tests' class's own method that the worker's class made for it calls back (its
    first argument is that class's id here): looked up from that class on in the
    target's MRO (`super()` goes on from there), bound to the target."""
    owner = judge._objects.get(args[0]) if args and type(args[0]) is int else None
    kind = target if on_class else type(target)
    if not (isinstance(owner, type) and isinstance(kind, type) and issubclass(kind, owner)):
        raise ProtocolError("not a tests' class of the object")
    if name not in judge._overrides.get(owner, ()):
        raise AttributeError(f"{name!r} is not overridden by the tests' class")
    mro = kind.__mro__
    for klass in mro[mro.index(owner) :]:
        if name in klass.__dict__:
            bound = klass.__dict__[name].__get__(None if on_class else target, kind)
            return bound(*args[1:], **kwargs)
    raise AttributeError(name)


def frames(judge) -> None:
    """The candidate read a frame past its caller (`callers.watch`): in one process, a
    frame of the test's; noted for the running test, inherent (a process's frames are
    its own)."""
    inherent.note("the candidate read its caller's callers' frames (sys._getframe)")


# What the worker asks of the tests' classes' side before naming any object of theirs.
OPS = {"adopt": adopt, "frames": frames}
