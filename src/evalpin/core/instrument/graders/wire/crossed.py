"""Immutable values keep their identity across the wire (issue 48). A `str`, `bytes`,
`tuple` or `frozenset` crosses by value, so without this table one handed over and
handed back (a test's string the candidate passes to the test's callback, which asks
`value is target`), or sent twice (`m.y is m.y` of an attribute holding a tuple), would
arrive as two objects. So each end keeps a table of what crossed, by identity, for the
life of the session: each value it sends goes with a key (the sender's own, or the
key it arrived with), and a value that arrives under a key this end knows, with the
very same contents, is the object this end has under it: the one it sent, or the one
that arrived first.

Why the judge can believe it: a key of the judge's own names only an object it sent
(it is given when the value is written), and the worker's claim that a value is that
object is taken only when the value it sends is that object's exact contents; a
candidate that held the test's object could have returned it in one process, and one
that did not gets nothing it could not have made. A key of the worker's only ever
names what the worker sent before. The table is bounded (its oldest entries go first);
a value past the bound crosses as a new object, as before."""

from __future__ import annotations

import itertools
import math
import threading
from collections import OrderedDict

from .protocol import MAX_DEPTH, ProtocolError

LIMIT = 4096  # entries each end keeps (the oldest go first)
CHARS = 8 * 1024 * 1024  # what the kept values hold at once: characters, bytes, items
BIGGEST = 1024 * 1024  # a value holding more crosses as a new object each time
SAME_ITEMS = 10_000  # items compared at most to tell a value the same as one known
_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes})
_CONTAINERS = frozenset({tuple, list, dict, set, frozenset})
_PLAIN = frozenset({type(None), bool, int, float, str})  # (JSON's own scalars)


class Crossed:
    """One end's table: the keys of what it sent or received, and their objects."""

    def __init__(self, odd: bool) -> None:
        self._odd = int(odd)
        self._keys: dict[int, int] = {}  # id(object) -> its key
        # key -> object, oldest first: an OrderedDict, whose oldest is found at once (a
        # dict's first live entry is found past every one deleted before it)
        self._objects: OrderedDict[int, object] = OrderedDict()
        self._weights: dict[int, int] = {}  # key -> what it holds (`_weight`)
        self._chars = 0
        self._counter = itertools.count(2 + self._odd, 2)
        self._lock = threading.Lock()

    def key(self, value) -> int | None:
        """The key `value` goes with (None: too big to keep, it crosses as new)."""
        key = self._keys.get(id(value))
        if key is not None and self._objects.get(key) is value:
            return key  # (read without the lock: a race only loses identity, never adds)
        with self._lock:
            key = self._keys.get(id(value))
            if key is not None and self._objects.get(key) is value:
                return key
            weight = len(value) if type(value) is str else _weight(value)  # (str: hot)
            if weight > BIGGEST:
                return None
            key = next(self._counter)
            self._put(key, value, weight)
            return key

    def came(self, key, value):
        """The object a value that arrived under `key` is here."""
        if type(key) is not int or key < 2:
            raise ProtocolError("malformed key of a value")
        with self._lock:
            known = self._objects.get(key)
            if known is not None and (
                known == value if type(known) is str is type(value) else _same(known, value)
            ):
                return known
            weight = BIGGEST + 1 if key % 2 == self._odd else _weight(value)
            if weight > BIGGEST:
                return value  # (a key of ours names only what we sent: never rebound)
            if known is not None:
                self._drop(key)
            self._put(key, value, weight)
            return value

    def items(self, data: list) -> list | None:
        """A list's wire form of scalars and keyed strings, read in one pass (the wire's
        usual arguments and rows), or None for any other."""
        out = []
        objects = self._objects
        for v in data:
            kind = type(v)
            if kind is dict:
                text, key = v.get("v"), v.get("i")
                if v.get("t") != "s" or type(text) is not str or len(v) != 3:
                    return None
                known = objects.get(key)
                out.append(known if type(known) is str and known == text else self.came(key, text))
            elif kind in _PLAIN:
                out.append(v)
            else:
                return None
        return out

    def _put(self, key: int, value, weight: int) -> None:
        self._objects[key] = value
        self._weights[key] = weight
        self._keys[id(value)] = key
        self._chars += weight
        while len(self._objects) > LIMIT or self._chars > CHARS:
            self._drop(next(iter(self._objects)))

    def _drop(self, key: int) -> None:
        value = self._objects.pop(key)
        if self._keys.get(id(value)) == key:
            del self._keys[id(value)]
        self._chars -= self._weights.pop(key)


def _weight(value, most: int = BIGGEST, seen: set | None = None, depth: int = 0) -> int:
    """What keeping `value` holds on to: a str's or bytes' length, a tuple's or
    frozenset's items and theirs (a row of the worker's copies of the test's lists), up
    to just past `most`; each container once (a cycle through a tuple), and past the
    wire's depth as too much."""
    kind = type(value)
    if kind is str or kind is bytes:
        return len(value)
    if kind not in _CONTAINERS:
        return 1
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 1
    if depth > MAX_DEPTH:
        return most + 1
    seen.add(id(value))
    total = len(value)
    for item in value.values() if kind is dict else value:
        if total > most:
            break
        total += _weight(item, most - total, seen, depth + 1)
    return total


def _same(known, value, budget: list | None = None, pairs: set | None = None, depth=0) -> bool:
    """Whether `value` is exactly `known`'s contents, decided without running any code
    but the builtins' own: each item the very object, an equal atom of the same type,
    or a list, dict or set of such items (the worker's copy of a list the test's tuple
    holds, unchanged), up to `SAME_ITEMS` items in all; a pair met again inside itself
    (a cycle through a tuple) is the same if all else is, and past the wire's depth
    nothing is."""
    if known is value:
        return True
    kind = type(known)
    if kind is not type(value):
        return False
    if kind in _ATOMS:
        return _atom(known) == _atom(value)
    budget = [SAME_ITEMS] if budget is None else budget
    pairs = set() if pairs is None else pairs
    if (id(known), id(value)) in pairs:
        return True
    budget[0] -= len(known) if kind in _CONTAINERS else 0
    if kind not in _CONTAINERS or len(known) != len(value) or budget[0] < 0:
        return False
    if depth > MAX_DEPTH:
        return False
    pairs.add((id(known), id(value)))
    if kind is dict:
        known = [x for pair in known.items() for x in pair]  # (no pair of its own: ids)
        value = [x for pair in value.items() for x in pair]
    elif kind is set or kind is frozenset:
        atoms = _ATOMS.issuperset(map(type, known)) and _ATOMS.issuperset(map(type, value))
        typed = lambda s: {(type(x), _atom(x)) for x in s}  # noqa: E731
        return atoms and typed(known) == typed(value)
    return all(_same(a, b, budget, pairs, depth + 1) for a, b in zip(known, value, strict=True))


def _atom(value):
    """An atom as what tells it apart (-0.0 from 0.0, one NaN equal to another)."""
    if type(value) is float:
        return ("nan",) if math.isnan(value) else (value, math.copysign(1.0, value))
    if type(value) is complex:
        return (_atom(value.real), _atom(value.imag))
    return value
