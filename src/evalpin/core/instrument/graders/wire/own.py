"""A candidate's list, dict or set subclass's stand-in, as an object of its own: a real
local container whose reference lives in a slot (no instance dictionary here, so
`vars(d)` and `d.__dict__` are the worker's object's, never the wire's), whose instance
attributes are the worker's object's (one set over a builtin method's name, `d.values =
1`, reads back as set there, wherever it was set), and whose pickling hooks
(`__getstate__`, `__setstate__`) are its class's own, forwarded.

Why this is safe: an instance attribute is the worker's word about an attribute, as any
other attribute of a candidate object is; comparisons, hashing and truth are found on
the class, never on the instance, so no attribute the worker claims decides them."""

from __future__ import annotations

from .describe import SHADOW
from .proxies import REF, SLOTTED, ProxyBase, ref_of

HOOKS = ("__getstate__", "__setstate__")  # pickling hooks a stand-in forwards when defined


def _root(container: type) -> type:
    """The root of the stand-ins of `container`'s subclasses: the builtin's layout plus
    a slot for the reference (and weak references), nothing else."""
    weak = () if container.__weakrefoffset__ else ("__weakref__",)  # a set has its own
    space = {"__slots__": (REF, *weak), "__module__": __name__}
    root = type(f"Own{container.__name__.title()}", (container, ProxyBase), space)
    slot = root.__dict__[REF]
    SLOTTED.append((root, slot.__get__, slot.__set__))
    return root


ROOTS = {kind: _root(kind) for kind in (list, dict, set)}


def own_attribute(self, name: str):
    """`__getattribute__` of a container stand-in: a public name the builtin container
    defines is the worker's object's own attribute when that one shadows it there."""
    if name[:2] != "__":
        kind = type(self)
        container = type.__getattribute__(kind, "_evalpin_container")
        if container is not None and name in container.__dict__ and _builtin(kind, name):
            ref = ref_of(self)
            if ref is not None and _shadowed(ref, name):
                return ref.peer.request("getattr", obj=ref.ident, name=name)
    return object.__getattribute__(self, name)


def _builtin(kind: type, name: str) -> bool:
    """Whether `name` resolves on `kind` to the builtin container's own attribute (not
    to a method of the candidate's class, forwarded anyway)."""
    for klass in kind.__mro__:
        if name in klass.__dict__:
            return klass in (list, dict, set)
    return False


_ASKED: dict = {}  # (peer id, ident, name) -> (peer step, shadowed)


def _shadowed(ref, name: str) -> bool:
    """The worker's answer, asked again only after the worker ran something since."""
    key = (id(ref.peer), ref.ident, name)
    step = ref.peer.steps
    known = _ASKED.get(key)
    if known is not None and known[0] == step:
        return known[1]
    answer = ref.peer.request("getattr", obj=ref.ident, name=SHADOW + name) is True
    if len(_ASKED) > 4096:
        _ASKED.clear()
    _ASKED[key] = (ref.peer.steps, answer)
    return answer
