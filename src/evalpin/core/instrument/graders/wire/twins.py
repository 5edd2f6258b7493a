"""The worker's classes standing for the classes the tests derive from the candidate's
(`class Doubler(m.Plugin)`, a mixin chain `class Fancy(m.Bold, Underline, m.Italic)`):
made with the same bases there (the candidate's classes and the classes made for the
tests' own subclasses among them), so the MRO and every `super()` of the candidate's go
the way they go in one process; each method the tests' class defines calls that very
class's own back in the test (`tests_own.override`). They live in a module of their own
(`copies.MADE`), so a pickle names them as the test's module would in-process."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from .copies import MADE, made

if TYPE_CHECKING:
    from .worker import Worker


def make(peer: Worker, bases: tuple, name: str, judge_id: int, spec: tuple, kw: dict) -> type:
    """The class for the tests' class `judge_id` (its methods, class and static methods,
    class values and qualified name in `spec`); the candidate's `__init_subclass__`
    runs now, with the class keywords."""
    methods, values, qualname, on_class = spec

    def on_tests_class(method: str):
        def call(cls, *args, **kwargs):
            bound_to = peer._subclasses.get(id(cls), judge_id)  # the tests' subclass
            args = [judge_id, *args]
            return peer.request("method", obj=bound_to, name=method, args=args, kwargs=kwargs)

        call.__name__ = method
        return classmethod(call)

    def forward(method: str):
        def call(self, *args, **kwargs):
            back = peer._tests_instances.get(id(self))
            if back is None:  # made here (`registry[name]()`): its twin there, first
                back = peer.request("adopt", args=[self])
                peer._tests_instances[id(self)] = back
            args = [judge_id, *args]  # whose method: this class's own, not a subclass's
            return peer.request("method", obj=back, name=method, args=args, kwargs=kwargs)

        call.__name__ = method
        return call

    namespace = {m: forward(m) for m in methods if type(m) is str and m.isidentifier()}
    for m in on_class if type(on_class) is list else ():
        if m in namespace:
            namespace[m] = on_tests_class(m)
    namespace.update({k: v for k, v in values.items() if type(k) is str and k.isidentifier()})
    namespace["__qualname__"] = qualname if type(qualname) is str else name
    namespace["__module__"] = MADE.__name__
    name = name if name.isidentifier() else "TestsSubclass"
    cls = types.new_class(name, bases, kw, lambda ns: ns.update(namespace))
    peer._subclasses[id(cls)] = judge_id
    made(cls)
    return cls
