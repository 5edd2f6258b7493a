"""What a tests' iterator is not: the worker's handle on a generator or builtin iterator
has special methods no iterator has (its class holds them for other kinds, or blocks
them with None); the candidate asking (`hasattr(seq, "__len__")`) must hear "no", as in
one process, and take the iterating path."""

from __future__ import annotations

# The special methods a handle's classes define and no generator or builtin iterator has.
LACKED = frozenset(
    {
        *("__len__", "__getitem__", "__setitem__", "__delitem__", "__contains__"),
        *("__bool__", "__index__", "__int__", "__float__", "__enter__", "__exit__"),
        "__await__",
    }
)


class Unsized:
    """A mixin of the iterator handle: what it lacks is not there (its operations,
    `len()` or `in`, go by its class as before)."""

    __slots__ = ()

    def __getattribute__(self, name: str):
        if name in LACKED:
            raise AttributeError(f"an iterator has no attribute {name!r}")
        return object.__getattribute__(self, name)
