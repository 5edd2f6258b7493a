"""A candidate class's methods as the test holds them: bound to an object or class of
the candidate's (called in the worker), a candidate class's own method for an instance
of a tests' subclass (`super().run(x)`), and a plain method read from its class. Each
presents to `isinstance` and `inspect` what it is in one process (a bound method, a
function), so `mock`'s autospec reads its signature as it would there."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from .rules import LOCAL_ONLY

if TYPE_CHECKING:
    from .proxies import Ref


class Unbound:
    """The candidate class's method for an instance of a tests' subclass."""

    __slots__ = ("instance", "name", "ref")

    def __init__(self, ref: Ref, name: str, instance) -> None:
        self.ref, self.name, self.instance = ref, name, instance

    def __call__(self, /, *args, **kwargs):  # `self=` may be the call's own
        __tracebackhide__ = True
        return self.ref.peer.request(
            "umethod",
            obj=self.ref.ident,
            name=self.name,
            args=[self.instance, *args],
            kwargs=kwargs,
        )


class Bound:
    """A bound method of a candidate object (or class), called in the worker."""

    __slots__ = ("name", "owner", "ref")

    def __init__(self, ref: Ref, name: str, owner) -> None:
        self.ref, self.name, self.owner = ref, name, owner

    def __call__(self, /, *args, **kwargs):  # `self=` may be the call's own
        __tracebackhide__ = True
        return self.ref.peer.request(
            "method", obj=self.ref.ident, name=self.name, args=args, kwargs=kwargs
        )

    def _method(self):
        return self.ref.peer.request("getattr", obj=self.ref.ident, name=self.name)

    def __getattr__(self, name: str):
        if name in LOCAL_ONLY:
            raise AttributeError(name)
        return getattr(self._method(), name)

    @property
    def __signature__(self):
        return self._method().__signature__

    @property
    def __doc__(self):
        return self._method().__doc__

    def __repr__(self) -> str:
        return f"<bound method {type(self.owner).__qualname__}.{self.name}>"

    @property
    def __class__(self):
        """A bound method, as `isinstance` and `inspect` see it in one process (`mock`'s
        autospec reads its signature so, without the instance)."""
        return types.MethodType


class Function(Bound):
    """A plain method read from its candidate class (`C.method`): a function in one
    process, its signature with `self`."""

    __slots__ = ()

    @property
    def __class__(self):
        return types.FunctionType
