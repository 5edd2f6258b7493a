"""A tests' class's `__dict__` as the worker sees it (issue 48). Code that finds a
method on its owner by `owner.__dict__[name]` (a caching descriptor pickled by
reference, `inspect.getattr_static`'s like) must find there what the tests' class holds
in its own namespace. So the worker's stand-in class answers `__dict__` with a read-only
mapping: the names the stand-in holds itself (its machinery, a named tuple's fields, an
ABC's mixins) as they are there, then the tests' class's own public names, each read
from the judge as it is in the class's namespace (a candidate's object comes back as
itself, a test's function as a callable that calls it back, data as its value).

The judge (`read`) answers only what the candidate may read of the class anyway: public
names, or the private ones it stored itself; never a module. A class's namespace is
read-only in one process too (`mappingproxy`): no write reaches the judge."""

from __future__ import annotations

import types
from collections.abc import Mapping

_OWN = type.__dict__["__dict__"].__get__  # the stand-in class's real namespace


def own_namespace(cls: type):
    """The stand-in class's own namespace, past its `__dict__` property."""
    return _OWN(cls)


class ClassSpace(Mapping):
    """In the worker: a stand-in class's `__dict__` (see the module's docstring)."""

    __slots__ = ("_cls",)

    def __init__(self, cls: type) -> None:
        self._cls = cls

    def _ask(self, how: str, name=None):
        peer, ident = _OWN(self._cls)["_evalpin_class"]
        return peer.request("own", obj=ident, name=name, args=[how])

    def __getitem__(self, name):
        local = _OWN(self._cls)
        if name in local:
            return local[name]
        if type(name) is not str:
            raise KeyError(name)
        return self._ask("get", name)

    def __iter__(self):
        local = list(_OWN(self._cls))
        names = self._ask("names")
        theirs = [n for n in names if type(n) is str] if type(names) is list else []
        return iter(local + [n for n in theirs if n not in local])

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __repr__(self) -> str:
        return f"mappingproxy({{{', '.join(map(repr, self))}}})"  # the names, no value


def read(cls: type, how, name, written=()):
    """In the judge: a tests' class's own namespace as the candidate may read it (its
    public names, the private ones it stored itself), never changed."""
    space = vars(cls)

    def readable(n) -> bool:
        return type(n) is str and (not n.startswith("_") or n in written)

    if how == "names":
        return [n for n in space if readable(n) and not isinstance(space[n], types.ModuleType)]
    if how != "get":
        raise TypeError("'mappingproxy' object does not support item assignment")
    if not readable(name) or name not in space or isinstance(space[name], types.ModuleType):
        raise KeyError(name)
    return space[name]
