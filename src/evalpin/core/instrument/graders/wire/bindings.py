"""How a test's object behaves in the worker beyond its kind, as the judge says
(`kinds.descriptor`): the handle class for each. A test's generator is iterated, and
also resumed with a value, thrown into and closed (a candidate's wrapper forwarding
`send` to it: more-itertools' `serialize`); each is a step of the test's own code in
the test's process, as a callback's call is, never a look at its frame."""

from __future__ import annotations

from .handles import AsyncHandle, AsyncIterHandle, CallHandle, GetHandle, IterHandle, SetHandle


class GenHandle(IterHandle):
    # A test's generator (a comment, not a docstring: `__doc__` is the test's).

    __slots__ = ()

    def send(self, value):
        return self._op("send", value)

    def throw(self, *args):
        return self._op("throw", *args)

    def close(self) -> None:
        self._op("close")


BINDINGS = {
    None: CallHandle,
    "get": GetHandle,
    "set": SetHandle,
    "aiter": AsyncIterHandle,
    "async": AsyncHandle,
    "gen": GenHandle,
}
