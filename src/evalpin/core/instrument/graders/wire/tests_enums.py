"""The tests' enums in the worker (issue 48): a test hands the candidate its own enum
class or a member (`Schema(Coerce(Choice))`, `parse(text, Level.DEBUG)`), and the
candidate's code asks what an enum answers: `issubclass(kind, Enum)`, its members by
iteration, `kind(1)`, `kind["EASY"]`, `member.value`, `isinstance(m, IntEnum)`.

So the worker makes a real enum of the stdlib's classes (the tests' class's nearest
`enum` base and its builtin mixin, `str` of `class Kind(str, Enum)`) with the same names
and values, plain scalars or tuples of them only (a class whose members hold anything
else crosses as any class of the tests'). A member handed over is that enum's member
of the same name, and one handed back is the test's own member, by the id the judge
gave it: nothing the worker says makes a member of the tests' class. Whatever else a
member or the class has (the tests' methods, properties, attributes set in its
`__init__`) is read from the test's own, and the special methods the tests' class
defines itself (an order, its text) are run by the test's member, as for any object of
the tests'."""

from __future__ import annotations

import enum

from .protocol import SCALARS, ProtocolError, is_ident

_MIXINS = {"int": int, "str": str, "float": float}
# The special methods a tests' enum may define itself (an order, its text, a hash), run
# by the test's own member: the ones a tests' object's stand-in forwards (`kinds`).
_FORWARDED = frozenset(
    [
        "__str__",
        "__repr__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__bool__",
        "__len__",
        "__iter__",
        "__contains__",
        "__getitem__",
        "__index__",
        "__int__",
        "__float__",
    ]
)


# -- the judge's side -----------------------------------------------------------------


def spec(cls: type, e, ident_of) -> list | None:
    """`[base, mixin, [[name, value, member id]...], special methods]` for a tests'
    enum class whose members' values are plain scalars or tuples of them (`ident_of`
    gives each member its id); None for any other class."""
    if not isinstance(cls, enum.EnumMeta):
        return None
    base = next(
        (b for b in cls.__mro__[1:] if b.__module__ == "enum" and isinstance(b, enum.EnumMeta)),
        enum.Enum,
    )
    mixin = getattr(cls, "_member_type_", object)
    mixin_name = mixin.__name__ if _MIXINS.get(mixin.__name__) is mixin else None
    members = []
    for name, member in cls.__members__.items():
        value = member._value_
        parts = list(value) if type(value) is tuple else [value]
        # sent as they are: a str plainly (never its keyed form), a number JSON holds
        if not all(type(x) is str or (type(x) in SCALARS and type(e(x)) is type(x)) for x in parts):
            return None
        members.append([name, parts if type(value) is tuple else value, ident_of(member)])
    own = {
        name
        for c in cls.__mro__
        if c.__module__ not in ("enum", "builtins")
        for name, method in vars(c).items()
        if name in _FORWARDED and getattr(method, "__module__", "enum") != "enum"
    }
    return [base.__name__, mixin_name, members, sorted(own)]


def _plain(value):
    """A member's value as `spec` sent it: a scalar, or a tuple of them (a list)."""
    if type(value) is list and all(type(x) in SCALARS for x in value):
        return tuple(value)
    if type(value) not in SCALARS:
        raise ProtocolError("malformed enum member")
    return value


def member_form(value, is_tests_class, e) -> dict | None:
    """A member of a tests' enum the worker makes as an enum: by its name there (a
    combination of flags by its value); None for anything else."""
    cls = type(value)
    if not isinstance(value, enum.Enum) or not is_tests_class(cls) or spec(cls, e, id) is None:
        return None
    if cls.__members__.get(value._name_) is value:
        return {"t": "em", "c": e(cls), "v": value._name_}
    return {"t": "em", "c": e(cls), "v": None, "x": e(value._value_)}


def member(cls, name, data: dict, d, remote: type, is_tests_class):
    """A member the worker names: of the candidate's enum rebuilt here (`remote`, its
    metaclass), or of a tests' enum; by its name, or a combination of flags by its value,
    made by the enum's own class here."""
    if not isinstance(cls, remote) and not (isinstance(cls, enum.EnumMeta) and is_tests_class(cls)):
        raise ProtocolError("malformed enum member")
    if type(name) is str and name in cls.__members__:
        return cls[name]
    try:  # a combination of flags
        return cls(d(data.get("x")))
    except (TypeError, ValueError):
        raise ProtocolError("malformed enum member") from None


# -- the worker's side ----------------------------------------------------------------


class TestsEnum(enum.EnumMeta):
    """The metaclass of the worker's enum for a tests' enum: a class-level name it does
    not have (a class method, a constant) is read from the tests' class."""

    def __getattr__(cls, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        peer, ident = type.__getattribute__(cls, "_evalpin_class")
        return peer.request("getattr", obj=ident, name=name)


def make(peer, ident: int, name: str, data, ns: dict) -> type:
    """The worker's enum for the tests' enum class `ident` (`data`: `spec`'s)."""
    if type(data) is not list or len(data) != 4 or type(data[2]) is not list:
        raise ProtocolError("malformed enum of the tests'")
    if type(data[3]) is not list or not all(n in _FORWARDED for n in data[3]):
        raise ProtocolError("malformed enum of the tests'")
    base = getattr(enum, data[0], None) if type(data[0]) is str else None
    if not (isinstance(base, enum.EnumMeta) and base.__module__ == "enum"):
        raise ProtocolError("malformed enum of the tests'")
    mixin = _MIXINS.get(data[1]) if data[1] is not None else None
    bases = (mixin, base) if mixin is not None and not issubclass(base, mixin) else (base,)
    members: dict[str, int] = {}
    body = TestsEnum.__prepare__(name, bases)
    for entry in data[2]:
        if type(entry) is not list or len(entry) != 3 or not is_ident(entry[0]):
            raise ProtocolError("malformed enum member")
        if entry[0].startswith("_") or type(entry[2]) is not int:
            raise ProtocolError("malformed enum member")
        if entry[0] not in members:
            body[entry[0]] = _plain(entry[1])
        members[entry[0]] = entry[2]
    body["__module__"], body["__qualname__"] = ns["__module__"], ns["__qualname__"]

    def __getattr__(member, attr: str):  # the tests' member's own (a method, a property)
        if attr.startswith("_"):
            raise AttributeError(attr)
        return peer.request("getattr", obj=members[member._name_], name=attr)

    body["__getattr__"] = __getattr__
    for special in data[3]:  # the tests' own, run by the test's member
        body[special] = _theirs(peer, members, special)
    cls = TestsEnum(name, bases, body)
    type.__setattr__(cls, "_evalpin_class", (peer, ident))
    type.__setattr__(cls, "_evalpin_members", (peer, members))
    return cls


def _theirs(peer, members: dict, name: str):
    def special(member, *args):
        return peer.request("special", obj=members[member._name_], name=name, args=args)

    special.__name__ = name
    return special


def member_id(value, peer) -> int | None:
    """The judge's id of the tests' member this worker's member stands for."""
    found = type(value).__dict__.get("_evalpin_members")
    if type(found) is not tuple or found[0] is not peer:
        return None
    return (
        found[1].get(value._name_) if type(value).__members__.get(value._name_) is value else None
    )
