"""Views: a candidate object compared with the tests' data by its own rule, decided by
the judge on the object's contents in the shape of the tests' operand.

`Version(1, 2) == [1, 2]`, `OrderedSet([1, 2]) == [1, 2]`, `multidict == {"a": 1}`,
`node == "text"`: in one process the candidate's own `__eq__` answers, and the judge
never takes that answer (an always-equal object would equal anything). Before it hands
the tests' operand over, the judge asks the worker for the object's contents as the
operand's builtin kind (a `dict` through the object's own `keys()` and `[]`, a `list`,
`tuple` or `set` through its iteration, a `str` through `str()`, a number through its
conversion); the candidate's own answer is believed only where the builtin's rule on
that view gives the same. The view is sound for the same reason a plain value is: it
is data the candidate produced without seeing the operand, so equal data is what a
correct answer would have returned. Where the two disagree the judge's own rule
decides (identity: `==` false, `!=` true; an order has none), as before views: a class
stricter than its contents (`isinstance` in its `__eq__`) is unequal to a tuple of
them, and a rule its contents do not show is noted (`witness:compared`)."""

from __future__ import annotations

import itertools
import operator

NONE = object()  # no view: the object has none of the operand's kind, or it failed
LIMIT = 100_000  # items read into one view; a longer object has none
KINDS = (dict, list, tuple, set, frozenset, str, bytes, bool, int, float)


def kind_of(other) -> str | None:
    """The builtin kind a view of the tests' `other` takes: its own type's or its
    stdlib base's (an `OrderedDict` reads as a `dict`), none for anything else."""
    for base in type(other).__mro__:
        if base in KINDS:
            return base.__name__
    return None


def take(ref, other):
    """The view of the object behind `ref` for a comparison with `other`, read from the
    worker before `other` is handed to it; `NONE` where there is none."""
    kind = kind_of(other)
    if kind is None:
        return NONE
    try:
        view = ref.peer.request("view", obj=ref.ident, name=kind)
    except Exception:  # the candidate's code raised while reading it: no view
        return NONE
    return view if type(view).__name__ == kind and type(view) in KINDS else NONE


def against(cls: type, ref, name: str, other, verdict):
    """A proxy of `cls` compared (`name`) with the tests' `other`: a stdlib mapping or
    set kind by a copy of its contents; else, where the class has its own rule, by its
    view (`judge`) unless the candidate answers with an object of its own (a query, an
    expression: its stand-in, whose truth is the judge's `verdict`); else identity."""
    own = name in cls._evalpin_compares
    snapshot = cls._evalpin_snapshot
    if snapshot is not None:
        value = ref.peer.request("value", obj=ref.ident)
        held = type(value) is snapshot
        decided = getattr(snapshot, name)(value, other) if held else NotImplemented
        if decided is not NotImplemented or not own:
            if own:  # decided by its contents, not its rule
                ref.peer.not_believed(cls.__name__, name, other)
            return decided
    if not own:
        return NotImplemented
    view = take(ref, other)  # read before the tests' data is handed over
    answer = ref.peer.request("special", obj=ref.ident, name=name, args=[other])
    judged = verdict(answer, name)
    if judged is NotImplemented and view is not NONE:
        return judge(ref.peer, cls.__name__, name, view, other, answer)
    if judged is NotImplemented:  # the candidate's word: said, should a test fail
        ref.peer.not_believed(cls.__name__, name, other)
    return judged


def judge(peer, cls: str, name: str, view, other, answer):
    """The candidate's own `answer` to the comparison `name` with the tests' `other`,
    believed only where its view agrees (the builtin's rule on it); else the judge's
    own rule (`NotImplemented`: identity, no order), noted unless that is what the
    candidate said (`==` false, `!=` true: a class stricter than its contents)."""
    if answer is NotImplemented:
        return NotImplemented
    result = getattr(type(view), name)(view, other)
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
