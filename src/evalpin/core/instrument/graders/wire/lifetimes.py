"""How long a test's object lives on both sides: as long as the test holds it, as in one
process. The worker's stand-in (handle) of a test's object is one object for as long as
the test's object lives (so the candidate's `is`, weak dictionaries and caches keyed by
it hold across calls), and the judge holds the test's object only while the candidate
does: the worker says which of its handles are held by nothing of the candidate's
(`loose`) and which are again (`tight`); the judge then keeps a loose one by a weak
reference only, and when the test lets go of it, tells the worker (`dead`), whose handle
then goes, as the candidate's weak references to it do. A test's object that cannot be
weakly referenced is held as before (released when the worker's handle goes)."""

from __future__ import annotations

import collections
import sys
import weakref

from .kinds import marks
from .protocol import ProtocolError, pairs
from .proxies import ProxyBase


class TestsObjects:
    """The judge's side: the tests' objects the worker holds loosely, the deaths to tell
    it, and the private names the candidate stored on the tests' objects itself."""

    def __init__(self, objects: dict, ids: dict) -> None:
        self._objects = objects  # the codec's: id given -> object (held strongly)
        self._ids = ids  # the codec's: id(object) -> id given
        self.loose: dict[int, weakref.ref] = {}
        self.dead: collections.deque[int] = collections.deque()
        self._stored: dict[int, tuple] = {}
        self._pending: list[int] = []  # let go of there, once the message is read

    @staticmethod
    def weak(value) -> bool:
        """Whether the worker may hold its handle of `value` for as long as it lives."""
        try:
            weakref.ref(value)
        except TypeError:
            return False
        return True

    def apply(self, message: dict, decode) -> None:
        """The worker's news of its handles: those it took up are held again before the
        message's body is read; those it let go of once the body is (`settle`: the
        body may hand one back, the only hold of it there is then the test's). Also the
        marks the candidate set on the tests' functions (`handles.Functions`)."""
        if "fa" not in message and "tight" not in message and "loose" not in message:
            return  # (most messages: nothing to look at)
        for ident, marked in message.get("fa") or []:
            target = self._objects.get(ident) if type(ident) is int else None
            for name, value in pairs(marked, decode):
                if target is not None and marks(target, "call", name):
                    setattr(target, name, value)
        for key in ("tight", "loose"):
            idents = message.get(key)
            if idents is None:
                continue
            if type(idents) is not list or any(type(i) is not int for i in idents):
                raise ProtocolError(f"malformed {key} handles")
            if key == "tight":
                for ident in idents:
                    self.revive(ident)
            else:
                self._pending += idents

    def settle(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        for ident in pending:
            self._loosen(ident)

    def _loosen(self, ident: int) -> None:
        obj = self._objects.get(ident)
        if obj is None or ident in self.loose:
            return
        try:
            self.loose[ident] = weakref.ref(obj, lambda _, i=ident: self._died(i))
        except TypeError:
            return
        del self._objects[ident]

    def revive(self, ident: int):
        """The test's object under `ident`, held strongly again (None: it is gone)."""
        ref = self.loose.pop(ident, None)
        obj = ref() if ref is not None else None
        if obj is not None:
            self._objects[ident] = obj
        return obj

    def again(self, value) -> int | None:
        """The id the worker's handle of `value` has, when it still holds one (sent
        again: a loosening the worker told before it is void)."""
        ident = self._ids.get(id(value))
        if ident is None:
            return None
        if ident in self._pending:
            self._pending.remove(ident)
        if self._objects.get(ident) is value:
            return ident
        ref = self.loose.get(ident)
        if ref is None or ref() is not value:
            return None
        self.revive(ident)
        return ident

    def _died(self, ident: int) -> None:
        """A weak reference's callback (any thread, during a collection): no locks."""
        self.loose.pop(ident, None)
        self.dead.append(ident)

    def deaths(self) -> list[int]:
        """The ids whose objects died since last asked (for the next message)."""
        out = []
        while self.dead:
            ident = self.dead.popleft()
            if ident not in self._objects:
                out.append(ident)
        return out

    def written(self, target) -> frozenset | set:
        """The private names the candidate stored on this test's object itself."""
        found = self._stored.get(id(target))
        own = found[1] if found is not None and found[0]() is target else frozenset()
        copied = _copied(target)
        return own | copied if copied else own

    def write(self, target, name: str) -> None:
        found = self._stored.get(id(target))
        if found is None or found[0]() is not target:
            try:
                held = weakref.ref(target)
            except TypeError:  # kept alive with its names: a few objects of the test's
                held = (lambda obj: lambda: obj)(target)
            found = self._stored[id(target)] = (held, set())
        found[1].add(name)


class Holds:
    """The worker's side: the handles it keeps for as long as the tests' objects live,
    and which of them the candidate holds (`tight`) as the judge last heard."""

    def __init__(self) -> None:
        self.held: dict[int, object] = {}
        self._tight: set[int] = set()

    def hold(self, ident: int, handle) -> None:
        self.held[ident] = handle
        self._tight.add(ident)  # as the judge holds it when it sends it

    def news(self, message: dict, side=None, after: bool = True) -> None:
        """Which handles the candidate took up or let go of since the last message (a
        handle referenced by the message being sent counts as taken up). Told once the
        message's body is encoded and let go of (`after`): a tests' object a reply hands
        back is let go of with it. While other threads call (`side` busy), before the
        body, as the message was encoded before: a message on the other pipe, read
        apart, could then be overtaken by the news that its handle went."""
        if not self.held or after == (side is not None and side.busy):
            return
        tight, loose = [], []
        held = self.held
        for ident in list(held):
            # held here: by this table and getrefcount's argument (a handle the message
            # carries counts as taken up, or not: the judge reads the body first)
            now = sys.getrefcount(held[ident]) > 2
            if now != (ident in self._tight):
                (tight if now else loose).append(ident)
        if tight:
            self._tight.update(tight)
            message["tight"] = tight
        if loose:
            self._tight.difference_update(loose)
            message["loose"] = loose

    def drop(self, dead) -> None:
        """The tests' objects that died: their handles go (weak references to them too)."""
        if type(dead) is not list:
            raise ProtocolError("malformed dead handles")
        for ident in dead:
            if type(ident) is int:
                self.held.pop(ident, None)
                self._tight.discard(ident)


class TestsExceptions:
    """The worker's copies of the tests' exceptions, each the test's own again when it
    is raised or handed back, for as long as the candidate's code holds one. Exceptions
    take no weak reference, so a copy held by this table alone is let go of before each
    message (`prune`): one the candidate caught and dropped goes, and with it its
    traceback's frames and their locals (a test's object the test expects to die, as a
    weak dictionary's entry does in one process). The judge keeps the test's exception
    itself: a message of another thread's, on the other pipe, may still name it."""

    def __init__(self) -> None:
        self._found: dict[int, tuple] = {}  # id(our copy) -> (it, their id)

    def add(self, exc: BaseException, ident: int) -> None:
        self._found[id(exc)] = (exc, ident)

    def ident(self, value) -> int | None:
        found = self._found.get(id(value))
        return found[1] if found is not None and found[0] is value else None

    def prune(self) -> None:
        for key, (exc, _) in list(self._found.items()):
            # held here: by the table's tuple, this loop's name, getrefcount's argument
            if sys.getrefcount(exc) <= 3:
                del self._found[key]


def _copied(target) -> frozenset:
    """The private names of a test's object that hold only the candidate's objects (one,
    or a container of them): what the candidate stored on an object the test then
    copied (`pickle`, `deepcopy` copy a caching descriptor's state with the rest), its
    own there as on the original. Nothing of the test's is behind such a name."""
    try:
        space = vars(target)
    except TypeError:
        return frozenset()
    if type(space) is not dict:
        return frozenset()

    def theirs(value) -> bool:
        if isinstance(value, ProxyBase):
            return True
        if type(value) is dict:
            return bool(value) and all(map(theirs, [*value, *value.values()]))
        return type(value) in (list, tuple, set) and bool(value) and all(map(theirs, value))

    return frozenset(
        n for n, v in space.items() if type(n) is str and n.startswith("_") and theirs(v)
    )
