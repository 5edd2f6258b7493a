"""A standard-library function the candidate holds that is not inert (`os.popen`,
`os.path.exists` on a deny-list or in a module wrapper of the candidate's), as the test
sees it (issue 48): still a proxy, so calling it runs in the worker (the judge's own
`os.popen` would be a capability the candidate could steer), but equal to and hashing
as the judge's own function of that name, as in one process (`result == os.path.exists`,
`DENIED >= {os.popen, os.system}`).

The name is the worker's word, as every value it sends is: a worker that names its
object `os.popen` gets no more than a candidate holding `os.popen` itself, whose calls
run in the worker all the same."""

from __future__ import annotations

import types

from . import stdlib
from .protocol import ProtocolError
from .proxies import REF, ref_of

_CLASSES: dict = {}  # (proxy class, the judge's function) -> the named proxy class
_SET_CLASS = object.__dict__["__class__"].__set__  # past a proxy's own `__class__` claim


def _named(own) -> bool:
    """A function of the standard library, or site's helper (`help`), here."""
    return isinstance(own, (types.FunctionType, types.BuiltinFunctionType)) or (
        type(own).__module__ == "_sitebuiltins"
    )


def came(data: dict, decode, importer):
    """A candidate's object the worker names as a stdlib function (tag `sfp`): its
    proxy, named where the name resolves here, else unnamed."""
    proxy = decode(data.get("p"))
    try:
        return adopt(proxy, stdlib.resolve("sfn", data, importer))
    except ProtocolError:
        return proxy


def adopt(proxy, own):
    """`proxy` (a candidate's object the worker names as the stdlib's `own`) compares
    and hashes as `own` from now on; anything else is left as it is."""
    ref = ref_of(proxy)
    if ref is None or not _named(own) or isinstance(proxy, type):
        return proxy
    cls = type(proxy)
    if cls.__dict__.get("_evalpin_named") is not None or cls.__dict__.get(REF) is None:
        return proxy  # named when it crossed before
    named = _CLASSES.get((cls, own))
    if named is None:
        named = _CLASSES[(cls, own)] = _named_class(cls, own)
    _SET_CLASS(proxy, named)
    return proxy


def _named_class(cls: type, own) -> type:
    def __eq__(self, other):
        return True if other is own else cls.__eq__(self, other)

    def __ne__(self, other):
        return False if other is own else cls.__ne__(self, other)

    def __hash__(self) -> int:
        return hash(own)

    ns = {
        "__slots__": (),
        "__eq__": __eq__,
        "__ne__": __ne__,
        "__hash__": __hash__,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__dict__.get("__doc__"),  # the proxy's (the object's own), not None
        "_evalpin_named": own,
        REF: cls.__dict__[REF],  # the same remote class: its class attributes, calls
    }
    # `type.__new__` itself: no `RemoteClass.__init__`, which would take this for a
    # tests' subclass and make it in the worker.
    return type.__new__(type(cls), cls.__name__, (cls,), ns)
