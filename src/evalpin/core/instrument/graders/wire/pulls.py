"""A candidate iterator drained by the test (`list(m.pairs(...))`, `tuple(it)`,
`sorted(it)`, `"".join(it)`): its items come over in batches, not one round trip each.

Pulling ahead is right only where nothing of the test's runs between two pulls, so the
judge does it only inside one call of a consumer that drains what it iterates: CPython's
own signal for that is the length hint (`list`, `tuple`, `sorted`, `str.join`, `bytes`,
`list.extend` ask the iterable for one before pulling; a `for` loop, `next()`, `any()`,
`zip()` or `in` never do). A hint marks the iterator the iterable's `__iter__` returned
in the same call of the test's (the same frame, at the same instruction; a sized
iterable's `len()` is its hint, as CPython asks it); that iterator's next items are then
pulled in batches for as long as its pulls come from that very call. The worker pulls
exactly as a consumer in one process would (the candidate's code, and the test's code it
calls back, run in the same order); an item it keeps a hold of is kept in step as a
single result is; an exception stops the batch and is raised at its own place in the
sequence. Items a batch brought that the consumer did not take (it stopped by an error
of its own) come first at the next pull, wherever it comes from: the sequence the test
sees is the iterator's own."""

from __future__ import annotations

import collections
import sys
import threading

from .protocol import MAX_SHARED_ITEMS, ProtocolError
from .proxies import REF, ref_of
from .values import mutable_name

FIRST = 16  # the first batch; each next one twice as big, up to MOST
MOST = 1024
BYTES = 1 << 20  # a batch stops once its strings and bytes hold about this much


class _Drain:
    """An iterator a consumer is draining: the call it is drained from, its batch size
    and the items pulled but not yet taken."""

    __slots__ = ("caller", "items", "size")

    def __init__(self, caller: tuple) -> None:
        self.caller = caller
        self.items: collections.deque = collections.deque()
        self.size = FIRST


class Pulls:
    """The judge's iterators being drained (by remote id), and each thread's last
    iterator an `__iter__` of a proxy returned (the call it returned in, its id)."""

    def __init__(self) -> None:
        self.draining: dict[int, _Drain] = {}
        self.last = threading.local()


def _caller(depth: int = 2) -> tuple:
    """The call of the test's this special method runs in: the frame and instruction
    that called the consumer (alive all along that call), and the thread."""
    frame = sys._getframe(depth)
    return (id(frame), frame.f_code, frame.f_lasti, threading.get_ident())


def iterated(forward):
    """A proxy class's `__iter__`: the candidate's (`forward`), remembering the iterator
    it returned and the call of the test's it returned in."""

    def __iter__(self):
        __tracebackhide__ = True
        result = forward(self)
        mine, theirs = ref_of(self), ref_of(result)
        if mine is not None and theirs is not None and theirs.peer is mine.peer:
            mine.peer.pulls.last.seen = (_caller(), theirs.ident)
        return result

    return __iter__


def hinted(forward):
    """A proxy class's `__length_hint__`: the candidate's own answer where its class has
    one (`forward`), else none (the consumer's default, as in one process); and the
    iterator the same call's `__iter__` returned is marked as being drained."""

    def __length_hint__(self):
        __tracebackhide__ = True
        answer = NotImplemented if forward is None else forward(self)
        _mark(self, _caller())
        return answer

    return __length_hint__


def sized(forward):
    """A proxy class's `__len__` where its class has `__iter__` too: the candidate's
    (`forward`); and, as `hinted`, the iterator the same call's `__iter__` returned is
    marked as being drained. CPython's length hint is `len()` where the type has one
    (`PyObject_LengthHint`): `list(x)`, `sorted(x)`, `tuple(x)` of a sized candidate
    object never ask its `__length_hint__`."""

    def __len__(self):
        __tracebackhide__ = True
        answer = forward(self)
        ref = ref_of(self)
        if ref is not None and getattr(ref.peer.pulls.last, "seen", None) is not None:
            _mark(self, _caller())
        return answer

    return __len__


def _mark(obj, caller: tuple) -> None:
    """The iterator `obj`'s `__iter__` last returned in `caller`, marked as drained
    there (the length hint of one consumer's call)."""
    ref = ref_of(obj)
    if ref is None:
        return
    pulls = ref.peer.pulls
    seen = getattr(pulls.last, "seen", None)
    pulls.last.seen = None
    if seen is not None and seen[0] == caller:
        drain = pulls.draining.get(seen[1])
        if drain is None:
            pulls.draining[seen[1]] = _Drain(caller)
        else:  # items an earlier consumer left stay first
            drain.caller = caller


def pulled(forward):
    """A proxy class's `__next__`: items pulled ahead first; inside the call that drains
    it, a batch; else the candidate's `__next__` (`forward`), one round trip."""

    def __next__(self):
        __tracebackhide__ = True
        if REF not in type(self).__dict__:  # a tests' subclass's instance: as it was
            return forward(self)
        ref = ref_of(self)
        pulls = ref.peer.pulls
        drain = pulls.draining.get(ref.ident)
        if drain is None:
            return forward(self)
        if drain.items:
            return drain.items.popleft()
        if drain.caller != _caller():
            del pulls.draining[ref.ident]
            return forward(self)
        try:
            items = ref.peer.request("pull", obj=ref.ident, args=[drain.size])
            if type(items) is not list or not items:
                raise ProtocolError("malformed batch")
        except BaseException:
            pulls.draining.pop(ref.ident, None)
            raise
        drain.size = min(drain.size * 2, MOST)
        drain.items.extend(items[1:])
        return items[0]

    return __next__


class Batches:
    """The worker's end: each batch pulled, and the exception an iterator's batch
    stopped at (after items), raised at its next pull, batched or not."""

    def __init__(self) -> None:
        self.stopped: dict[int, BaseException] = {}

    def check(self, ident: int) -> None:
        """Before a single `__next__`: the exception the last batch stopped at."""
        stopped = self.stopped.pop(ident, None)
        if stopped is not None:
            raise stopped

    def pull(self, step, ident: int, args: list, shares) -> list:
        """Up to `args[0]` items of `step()` (the iterator's own `__next__`), as a
        consumer in one process pulls them; an exception before any item is raised now,
        as a single `__next__` would raise it. The containers among them something else
        here holds are kept in step (`shares`), as a single result so held is."""
        self.check(ident)
        if len(args) != 1 or type(args[0]) is not int or not 0 < args[0] <= MOST:
            raise ProtocolError("malformed batch size")
        items: list = []
        held = 0
        for _ in range(args[0]):
            try:
                item = step()
            except BaseException as exc:
                if not items:
                    raise
                self.stopped[ident] = exc
                break
            items.append(item)
            held += len(item) if type(item) in (str, bytes) else 64
            if held > BYTES:
                break
        for item in _held_elsewhere(items):
            shares.start(item)
        return items


def _held_elsewhere(items: list) -> list:
    """The containers in a batch something besides the batch holds (an attribute, the
    generator's own frame), each once."""
    counts = collections.Counter(map(id, items))
    found, seen = [], set()
    for item in items:
        if id(item) in seen or not mutable_name(type(item)):
            continue
        seen.add(id(item))
        # held by the batch (once per place in it), this name, getrefcount's argument
        if sys.getrefcount(item) > counts[id(item)] + 2 and len(item) <= MAX_SHARED_ITEMS:
            found.append(item)
    return found
