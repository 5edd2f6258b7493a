"""Views: a candidate object compared with the tests' data by its own rule, decided by
the judge on the object's contents in the shape of the tests' operand.

`Version(1, 2) == [1, 2]`, `OrderedSet([1, 2]) == [1, 2]`, `multidict == {"a": 1}`,
`node == "text"`: in one process the candidate's own `__eq__` answers, and the judge
never takes that answer (an always-equal object would equal anything). Before it hands
the tests' operand over, the judge asks the worker for the object's contents as the
operand's kind (a `dict` through the object's own `keys()` and `[]`, a `list`,
`tuple` or `set` through its iteration, a `str` through `str()`, a number through its
conversion; a `deque`, `UserList`, `UserDict` or `UserString` read so and made as
itself here); the candidate's own answer is believed only where that kind's rule on
the view gives the same. The view is sound for the same reason a plain value is: it
is data the candidate produced without seeing the operand, so equal data is what a
correct answer would have returned. Where the two disagree the judge's own rule
decides (identity: `==` false, `!=` true; an order has none), as before views: a class
stricter than its contents (`isinstance` in its `__eq__`) is unequal to a tuple of
them, and a rule its contents do not show is noted (`witness:compared`)."""

from __future__ import annotations

import collections
import itertools
import operator

from .rules import COMPARING

NONE = object()  # no view: the object has none of the operand's kind, or it failed
LIMIT = 100_000  # items read into one view; a longer object has none
KINDS = (dict, list, tuple, set, frozenset, str, bytes, bool, int, float)
# The stdlib's sequence, mapping and set kinds the tests compare with that are no
# builtin's subclass: the view is read as the builtin kind named, and made here as the
# operand's own kind (`OrderedSet(...) == deque([1, 2])` by deque's rule); a dict's key
# and item views by the set rule they share with it.
STDLIB = {
    collections.deque: ("list", collections.deque),
    collections.UserList: ("list", collections.UserList),
    collections.UserDict: ("dict", collections.UserDict),
    collections.UserString: ("str", collections.UserString),
    type({}.keys()): ("set", set),
    type({}.items()): ("set", set),
}


def kind_of(other) -> str | None:
    """The builtin kind a view of the tests' `other` is read as: its own type's or its
    stdlib base's (an `OrderedDict` reads as a `dict`, a `deque` as a `list`), none for
    anything else."""
    return _made_as(other)[0]


def _made_as(other) -> tuple[str | None, type | None]:
    """The builtin kind the worker reads, and the class the view is made as here."""
    for base in type(other).__mro__:
        if base in KINDS:
            return base.__name__, base
        if base in STDLIB:
            return STDLIB[base]
    return None, None


def take(ref, other):
    """The view of the object behind `ref` for a comparison with `other`, read from the
    worker before `other` is handed to it; `NONE` where there is none."""
    kind, made = _made_as(other)
    if kind is None:
        return NONE
    try:
        view = ref.peer.request("view", obj=ref.ident, name=kind)
    except Exception:  # the candidate's code raised while reading it: no view
        return NONE
    if type(view).__name__ != kind or type(view) not in KINDS:
        return NONE
    return view if made is type(view) else made(view)


def against(cls: type, ref, name: str, other, verdict):
    """A proxy of `cls` compared (`name`) with the tests' `other`: a stdlib mapping or
    set kind by a copy of its contents; else, where the class has its own rule, by its
    view unless the candidate answers with an object of its own (a query, an
    expression: its stand-in, whose truth is the judge's `verdict`); else identity."""
    own = name in cls._evalpin_compares
    snapshot = cls._evalpin_snapshot
    if snapshot is not None:
        value = ref.peer.request("value", obj=ref.ident)
        held = type(value) is snapshot
        decided = getattr(snapshot, name)(value, other) if held else NotImplemented
        if decided is not NotImplemented or not own:
            return held_to(ref, cls.__name__, name, other, decided) if own else decided
    if not own:
        return NotImplemented
    return asked(ref, cls.__name__, name, other, verdict)


def held_to(ref, cls: str, name: str, other, decided):
    """The judge's own `decided` on the contents it holds, where the candidate's class
    has its own rule: that rule is asked too (its code runs as in one process: its
    warnings, its errors) where `other` is data of a kind a view reads (it crosses by
    value: never a test's tool such as `pytest.approx`), and noted where its answer
    differs or was not asked."""
    if kind_of(other) is None or _said(ref, name, other) is not decided:
        ref.peer.not_believed(cls, name, other)
    return decided


def _said(ref, name: str, other):
    """The candidate's own answer, asked after its contents were read."""
    return ref.peer.request("special", obj=ref.ident, name=name, args=[other])


def asked(ref, cls: str, name: str, other, verdict=None):
    """The candidate's own answer to the comparison `name` with the tests' `other`, as
    the judge takes it: its view read first (before `other` is handed over), then its
    answer, believed where `verdict` takes it (an object of its own) or the view agrees
    (`judge`); else `NotImplemented` (the judge's own rule), noted."""
    view = take(ref, other)
    answer = _said(ref, name, other)
    judged = NotImplemented if verdict is None else verdict(answer, name)
    if judged is not NotImplemented:
        return judged
    if view is not NONE:
        return judge(ref.peer, cls, name, view, other, answer)
    ref.peer.not_believed(cls, name, other)  # the candidate's word: said, should a test fail
    return NotImplemented


def judge(peer, cls: str, name: str, view, other, answer):
    """The candidate's own `answer` to the comparison `name` with the tests' `other`,
    believed only where its view agrees (the operand's kind's rule on it, as an operator:
    a dict's key view reflects a set's comparison); else the judge's own rule
    (`NotImplemented`: identity, no order), noted unless that is what the candidate said
    (`==` false, `!=` true: a class stricter than its contents)."""
    if answer is NotImplemented:
        return NotImplemented
    try:
        result = COMPARING[name](view, other)
    except TypeError:  # no order between them: nothing to agree with
        result = NotImplemented
    if type(answer) is bool and answer is result:
        return result
    if answer is not (name == "__ne__") or name not in ("__eq__", "__ne__"):
        peer.not_believed(cls, name, other)
    return NotImplemented


def view_of(target, kind: str):
    """The worker's side: `target`'s contents as `kind`, by its own methods."""
    if kind == "dict":
        keys = target.keys()
        return {k: target[k] for k in _bounded(keys)}
    if kind in ("list", "tuple", "set", "frozenset"):
        return _BUILD[kind](_bounded(target))
    if kind == "str":
        return str.__str__(str(target))
    if kind == "bytes":
        return bytes.__bytes__(bytes(target))
    if kind == "bool":
        if not hasattr(type(target), "__bool__"):  # every object is true: no view
            raise TypeError("no truth of its own")
        return bool(target)
    if kind == "int":
        return operator.index(target) if hasattr(type(target), "__index__") else int(target)
    if kind == "float":
        return float(target)
    raise TypeError(f"no view as {kind}")


def _bounded(iterable) -> list:
    items = list(itertools.islice(iter(iterable), LIMIT + 1))
    if len(items) > LIMIT:
        raise OverflowError("too long for a view")
    return items


_BUILD = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}
