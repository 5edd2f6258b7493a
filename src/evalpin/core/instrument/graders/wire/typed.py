"""typing's constructs handed across (issue 48): data about types, rebuilt by the
receiver's own `typing` from parts that cross by the wire's own rules, so no code of the
sender's runs and nothing it says is believed beyond the parts themselves.

- generic aliases (`Optional[int]`, `List[str]`, `Literal["a"]`, `Generic[T]`,
  `Protocol[T]`, `Callable[[int], str]`, `Annotated[int, "unit"]`): made again from
  their public name (or origin) and arguments;
- special forms and bare generics (`Optional`, `ClassVar`, `List`, `Callable`): by name,
  the receiver's own;
- `ForwardRef("Node")`: its text;
- type variables (`TypeVar`, `ParamSpec`, `TypeVarTuple`) and `NewType`s: by value (name,
  bound, constraints, variance; a new type's supertype), with their identity kept both
  ways, as they compare by identity: the same one crossing twice is one object on the
  other side, and one that comes home is the sender's own (`get_args(alias) == (T,)`).
  A receiver finds an object it sent only by the key it gave it, so a lying peer can
  name nothing of this side's but what this side sent it."""

from __future__ import annotations

import itertools
import threading

from .protocol import ByReference, ProtocolError, string

# typing's own generic aliases, by the public name that makes them (`Optional[int]` is
# `Union[int, None]`); a class's own (`Box[int]`) crosses by reference.
_TYPING = frozenset(
    [
        "Union",
        "Optional",
        "List",
        "Dict",
        "Set",
        "FrozenSet",
        "Tuple",
        "Type",
        "DefaultDict",
        "Deque",
        "Counter",
        "OrderedDict",
        "ChainMap",
        "Iterable",
        "Iterator",
        "Sequence",
        "MutableSequence",
        "Mapping",
        "MutableMapping",
        "AbstractSet",
        "MutableSet",
        "Collection",
        "Container",
        "Generator",
        "AsyncIterator",
        "AsyncIterable",
        "Awaitable",
        "Coroutine",
        "ClassVar",
        "Final",
        "Literal",
        "Generic",
        "Protocol",
    ]
)


def _typing_alias(v, e) -> list:
    import typing

    kind = type(v).__name__
    name = {"_UnionGenericAlias": "Union", "_LiteralGenericAlias": "Literal"}.get(kind, v._name)
    if name is None and v.__origin__ in (typing.Generic, typing.Protocol):
        name = v.__origin__.__name__
    if name not in _TYPING or getattr(typing, name, None) is None:
        raise ByReference
    return [name, [e(a) for a in v.__args__]]


def _untyping_alias(p, d, c):
    import typing

    if type(p) is not list or len(p) != 2 or p[0] not in _TYPING or type(p[1]) is not list:
        raise ProtocolError("malformed typing alias")
    args = tuple(d(a) for a in p[1])
    if p[0] == "Literal" and not {*map(type, args)} <= {str, int, bool, bytes, type(None)}:
        raise ProtocolError("a literal of something not plain")  # (its hash is run here)
    made = getattr(typing, p[0])[args if len(args) != 1 else args[0]]
    if type(made) is not c:
        raise ProtocolError("a typing alias of another kind")
    return made


def _callable(v, e) -> list:
    *params, result = v.__args__
    return [None if params == [Ellipsis] else [e(a) for a in params], e(result)]


def _uncallable(p, d, c):
    import typing

    if type(p) is not list or len(p) != 2 or not (p[0] is None or type(p[0]) is list):
        raise ProtocolError("malformed Callable alias")
    params = ... if p[0] is None else [d(a) for a in p[0]]
    return typing.Callable[params, d(p[1])]


def _annotated(v, e) -> list:
    return [e(v.__origin__), [e(m) for m in v.__metadata__]]


def _unannotated(p, d, c):
    import typing

    if type(p) is not list or len(p) != 2 or type(p[1]) is not list or not p[1]:
        raise ProtocolError("malformed Annotated alias")
    return typing.Annotated[(d(p[0]), *(d(m) for m in p[1]))]


def _by_name(v, e) -> str:
    """A special form or bare generic of typing's own (`Optional`, `List`): its name."""
    import typing

    name = getattr(v, "_name", None)
    if type(name) is not str or getattr(typing, name, None) is not v:
        raise ByReference
    return name


def _from_name(p, d, c):
    import typing

    found = getattr(typing, string(p), None) if string(p).isidentifier() else None
    if type(found) is not c:
        raise ProtocolError("not a typing special form")
    return found


# -- type variables and new types: by value, one object per variable on each side --------

_LOCK = threading.Lock()
_KEYS = itertools.count(1)
_SENT: dict[int, tuple] = {}  # id(ours) -> (ours, key): what this side gave a key
_OURS: dict[int, object] = {}  # key -> ours
_COPIES: dict[int, object] = {}  # the other side's key -> our copy of it
_KEY_OF_COPY: dict[int, tuple] = {}  # id(our copy) -> (copy, their key)


def _identity(v, fields) -> list:
    """`[0, key]` for a copy of the other side's (its own comes home), else `[1, key,
    *fields]` under the key this side gives its own object (once)."""
    with _LOCK:
        theirs = _KEY_OF_COPY.get(id(v))
        if theirs is not None and theirs[0] is v:
            return [0, theirs[1]]
        mine = _SENT.get(id(v))
        if mine is None or mine[0] is not v:
            mine = _SENT[id(v)] = (v, next(_KEYS))
            _OURS[mine[1]] = v
        return [1, mine[1], *fields]


def _rebuilt(p, build):
    """The object a `_identity` form names: ours come home, theirs made once."""
    if type(p) is not list or len(p) < 2 or p[0] not in (0, 1) or type(p[1]) is not int:
        raise ProtocolError("malformed type variable")
    with _LOCK:
        if p[0] == 0:
            if p[1] not in _OURS:
                raise ProtocolError("a type variable this side never sent")
            return _OURS[p[1]]
        made = _COPIES.get(p[1])
    if made is None:
        made = build(p[2:])
        with _LOCK:
            made = _COPIES.setdefault(p[1], made)
            _KEY_OF_COPY[id(made)] = (made, p[1])
    return made


def _variable(v, e) -> list:
    bound = getattr(v, "__bound__", None)
    constraints = [e(x) for x in getattr(v, "__constraints__", ())]
    flags = [bool(getattr(v, f"__{f}__", False)) for f in ("covariant", "contravariant")]
    return _identity(v, [v.__name__, e(bound), constraints, *flags, str(v.__module__)])


def _unvariable(p, d, c):
    def build(fields):
        if len(fields) != 6 or type(fields[2]) is not list:
            raise ProtocolError("malformed type variable")
        name, bound, constraints, co, contra, module = fields
        if {type(co), type(contra)} != {bool} or not string(name).isidentifier():
            raise ProtocolError("malformed type variable")
        given = {"bound": d(bound), "covariant": co, "contravariant": contra}
        if c.__name__ == "TypeVarTuple":
            made = c(name)
        elif c.__name__ == "ParamSpec":
            made = c(name, **given)
        else:
            made = c(name, *(d(x) for x in constraints), **given)
        made.__module__ = string(module)
        return made

    return _rebuilt(p, build)


def _new_type(v, e) -> list:
    return _identity(v, [v.__name__, e(v.__supertype__), str(v.__module__)])


def _unnew_type(p, d, c):
    def build(fields):
        if len(fields) != 3 or not string(fields[0]).isidentifier():
            raise ProtocolError("malformed NewType")
        made = c(fields[0], d(fields[1]))
        made.__module__ = string(fields[2])
        return made

    return _rebuilt(p, build)


def _forward(v, e) -> list:
    return [v.__forward_arg__, bool(v.__forward_is_argument__), bool(v.__forward_is_class__)]


def _unforward(p, d, c):
    if type(p) is not list or len(p) != 3 or {type(p[1]), type(p[2])} != {bool}:
        raise ProtocolError("malformed ForwardRef")
    return c(string(p[0]), is_argument=p[1], is_class=p[2])


# name -> (module, class, to wire, from wire), as `values.VALUES`.
VALUES: dict[str, tuple] = {
    **{
        f"typing.{kind}": ("typing", kind, _typing_alias, _untyping_alias)
        for kind in ("_GenericAlias", "_UnionGenericAlias", "_LiteralGenericAlias")
    },
    "typing._CallableGenericAlias": ("typing", "_CallableGenericAlias", _callable, _uncallable),
    "typing._AnnotatedAlias": ("typing", "_AnnotatedAlias", _annotated, _unannotated),
    **{
        f"typing.{kind}": ("typing", kind, _by_name, _from_name)
        for kind in ("_SpecialForm", "_SpecialGenericAlias", "_CallableType", "_TupleType")
    },
    **{
        f"typing.{kind}": ("typing", kind, _variable, _unvariable)
        for kind in ("TypeVar", "ParamSpec", "TypeVarTuple")
    },
    "typing.NewType": ("typing", "NewType", _new_type, _unnew_type),
    "typing.ForwardRef": ("typing", "ForwardRef", _forward, _unforward),
}
