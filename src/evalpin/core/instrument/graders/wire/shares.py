"""Containers kept in step between the two ends: a list, dict, set, deque, Counter,
bytearray... that lives on where it was made (a module's registry, an object's
attribute, a cached result, an argument the candidate kept; on the test's side, an
attribute of a test's object the candidate reads) is one object on each side, under one
key; whatever changes it on either side is sent with the next message, and the other
side refills its own object in place."""

from __future__ import annotations

import itertools
import sys

from .protocol import MAX_SHARED, SCALARS
from .values import BY_REFERENCE, REFILL, mutable_name

_PLAIN = (*SCALARS, bytes)
_PLAIN_KINDS = frozenset(_PLAIN)
_FLAT_KINDS = _PLAIN_KINDS | {tuple}


def fingerprint(obj, depth: int = 0, apart=None):
    """A comparable picture of a container's contents that runs no code of anyone's:
    values of plain data, identities of everything else (and of the containers nested
    in it that are kept in step themselves, `apart`: each is checked on its own). Taken
    of every container kept in step at every message, so plain contents (and flat
    tuples of them) are taken at C speed, whole."""
    kind = type(obj)
    if kind in _PLAIN:
        return obj
    if depth > 8 or (depth and apart and id(obj) in apart):
        return id(obj)
    if kind is list or kind is tuple:
        return (kind, _items(tuple(obj), depth, apart))
    if kind is dict:
        return (kind, _pairs(obj, dict.items(obj), depth, apart))
    if kind is set or kind is frozenset:
        return (kind, _items(tuple(obj), depth, apart))
    if kind is bytearray:
        return (kind, bytes(obj))
    name = mutable_name(kind)
    if name in ("Counter", "OrderedDict", "defaultdict"):
        return (kind, _pairs(obj, dict.items(obj), depth))
    if name == "deque":
        return (kind, obj.maxlen, _items(tuple(obj), depth))
    if name == "array":
        return (kind, obj.typecode, obj.tobytes())
    if name == "Random":
        return (kind, obj.getstate())
    if name in ("SimpleNamespace", "Namespace"):
        return (kind, fingerprint(dict(vars(obj)), depth + 1))
    if name in ("UserDict", "UserList"):
        return (kind, fingerprint(obj.data, depth + 1))
    if name is not None and name.startswith("ast."):
        return (kind, tuple([fingerprint(getattr(obj, f, None), depth + 1) for f in obj._fields]))
    if name in ("StringIO", "BytesIO"):
        return (kind, obj.getvalue(), obj.tell()) if not obj.closed else (kind, None)
    base = container_base(kind)
    if base is list:  # a subclass: its storage, read with the builtin's own methods
        return (kind, _items(tuple(list.copy(obj)), depth))
    if base is dict:
        return (kind, _pairs(obj, dict.items(obj), depth))
    if base is set:
        return (kind, _items(tuple(set.copy(obj)), depth))
    return id(obj)


def _plain(items: tuple) -> bool:
    """Whether every item is plain data or a tuple of plain data (no code runs)."""
    kinds = set(map(type, items))
    if kinds <= _PLAIN_KINDS:
        return True
    if not kinds <= _FLAT_KINDS:
        return False
    tuples = [x for x in items if type(x) is tuple]
    return set(map(type, itertools.chain.from_iterable(tuples))) <= _PLAIN_KINDS


def _items(items: tuple, depth: int, apart=None) -> tuple:
    if _plain(items):
        return items
    return tuple([fingerprint(x, depth + 1, apart) for x in items])


def _pairs(obj, pairs, depth: int, apart=None) -> tuple:
    if _plain(tuple(dict.keys(obj))) and _plain(tuple(dict.values(obj))):
        return tuple(pairs)
    return tuple([(fingerprint(k), fingerprint(v, depth + 1, apart)) for k, v in pairs])


def container_base(kind: type) -> type | None:
    """list, dict or set, when `kind` derives from one (the first in its MRO)."""
    for base in kind.__mro__:
        if base is list or base is dict or base is set:
            return base
    return None


def merge(original, state, apart=(), adopt=None) -> None:
    """Make `original` hold `state` (a fresh copy of the same type), keeping the
    containers nested in it where one of the same type stands at the same place (each
    once: a linked structure's cycles are merged once, what the state shares stays
    shared). A container kept in step itself (its id in `apart`) is one object known
    by its key, never matched by place: the state holds it as it is, unless it is new
    here and `adopt` gives its key to the container standing at its place (once: the
    containers an argument kept held before they were kept in step each)."""
    kind = type(original)
    if kind is type(state) and (kind is list or kind is dict):
        items = state if kind is list else state.values()
        if _PLAIN_KINDS.issuperset(map(type, items)):  # nothing nested to keep
            if original is not state:
                if kind is list:
                    original[:] = state
                else:
                    original.clear()
                    original.update(state)
            return
    _merge(original, state, {}, set(), apart, adopt)


def _merge(original, state, seen: dict, used: set, apart, adopt=None) -> None:
    seen[id(state)] = original  # the state's container -> the original now holding it
    used.add(id(original))

    def kept(old, new):
        if id(new) in seen:
            return seen[id(new)]
        free = _mergeable(old, new) and id(old) not in used and id(old) not in apart
        if id(new) in apart:  # refilled under its own key
            if free and adopt is not None and adopt(new, old):
                _merge(old, new, seen, used, apart, adopt)
                return old
            return new
        if free:
            _merge(old, new, seen, used, apart, adopt)
            return old
        if type(new) in (list, dict):  # a new container: what it holds, redirected too
            _merge(new, new, seen, used, apart, adopt)
        return new

    kind = type(original)
    if kind is list:
        for i in range(len(state)):
            state[i] = kept(original[i] if i < len(original) else None, state[i])
        if original is not state:
            original[:] = state
    elif kind is dict:
        for key, value in state.items():
            state[key] = kept(original.get(key), value)
        if original is not state:
            original.clear()
            original.update(state)
    elif mutable_name(kind) is not None:
        REFILL[mutable_name(kind)](original, state)
    else:  # a subclass of list, dict or set: its storage, with the builtin's methods
        base = container_base(kind)
        if base is list:
            list.__setitem__(original, slice(None), state)
        else:
            base.clear(original)
            base.update(original, state)


def _mergeable(old, new) -> bool:
    return old is not new and type(old) is type(new) and type(old) in (list, dict, set)


class Shares:
    """The containers this end keeps in step: key -> [object, fingerprint, kind name].
    Either end starts keeping one in step (the end whose object it is); either lets go
    of it when nothing holds it there any more."""

    def __init__(self, sign: int = 1) -> None:
        self.entries: dict[int, list] = {}
        self.ids: dict[int, int] = {}  # id(object) -> key
        self._keys = itertools.count(sign, sign)  # each end its own keys: + worker, - judge
        self._sign = sign
        self.fresh: set[int] = set()  # keys first met in the contents being read
        self.unsent: set[int] = set()  # keys started here whose contents never went out
        self._adopted: list[int] = []

    def owns(self, key: int) -> bool:
        """Whether this end made the key (the other end never introduces one of these)."""
        return (key > 0) == (self._sign > 0)

    def add(self, key: int, obj, name: str) -> None:
        # A key names one object: one it named before is no longer found by its id
        # (that id may be reused once the object is gone).
        old = self.entries.get(key)
        if old is not None and old[0] is not obj and self.ids.get(id(old[0])) == key:
            del self.ids[id(old[0])]
        self.ids[id(obj)] = key
        self.entries[key] = [obj, fingerprint(obj, 0, self.ids), name]

    def start(self, obj) -> int:
        """Keep `obj` in step from now on (the worker's end); its key."""
        key = self.ids.get(id(obj))
        if key is None:
            key = next(self._keys)
            name = mutable_name(type(obj)) or container_base(type(obj)).__name__
            self.add(key, obj, name)
            self.unsent.add(key)
        else:
            self.entries[key] = self.entries.pop(key)  # most recently used last
        return key

    def refill(self, key: int, new) -> None:
        entry = self.entries[key]
        merge(entry[0], new, self.ids, self._adopt)
        entry[1] = fingerprint(entry[0], 0, self.ids)
        for adopted in self._adopted:  # filled since their key moved to them
            self.entries[adopted][1] = fingerprint(self.entries[adopted][0], 0, self.ids)
        self._adopted.clear()

    def _adopt(self, new, old) -> bool:
        """A container first met in these contents, where one of this side's own stands
        (a kept argument's nested list): its key moves to that one, which is refilled."""
        key = self.ids.get(id(new))
        if key not in self.fresh:
            return False
        self.fresh.discard(key)
        self.add(key, old, self.entries[key][2])
        self._adopted.append(key)
        return True

    def changed(self, peer) -> list:
        """[key, contents] of each container changed here since it was last sent."""
        updates = []
        for key, entry in list(self.entries.items()):
            now = fingerprint(entry[0], 0, self.ids)
            if now != entry[1]:
                entry[1] = now
                form = peer.contents(entry[0])
                if form is BY_REFERENCE:
                    peer.not_kept(key, entry[0])
                else:
                    updates.append([key, form])
        return updates

    def drop(self, key: int) -> None:
        self.unsent.discard(key)
        entry = self.entries.pop(key, None)
        if entry is not None and self.ids.get(id(entry[0])) == key:
            del self.ids[id(entry[0])]

    def unused(self) -> list[int]:
        """Keys of containers nobody but this table holds any more, and the oldest ones
        beyond the cap (the worker lets go of them; the judge's copies stay as they are)."""
        gone = []
        for key, entry in self.entries.items():
            # held by the entry and by getrefcount's own argument only
            if sys.getrefcount(entry[0]) <= 2:
                gone.append(key)
        excess = len(self.entries) - len(gone) - MAX_SHARED
        if excess > 0:
            gone += [k for k in self.entries if k not in gone][:excess]
        for key in gone:
            self.drop(key)
        return gone
