"""Standard-library objects the tests hand the candidate (or get back) that are values
made of values (issue 48): each is rebuilt by the receiver with its own class from
parts that cross by the wire's own rules, so nothing of the sender's code runs and
nothing the sender says about it is believed beyond the parts themselves.

- `classmethod` and `staticmethod` around a function: the receiver's own wrapper around
  the function's stand-in (as `property` is);
- `time.struct_time` and `os.terminal_size`: their fields (a test's fake `localtime`);
- `dataclasses.Field`: its name, type, default or factory, flags and metadata (a
  test's `fields(X)[0]` handed to a helper), and a dataclass's flags (`frozen`);
- typing's constructs: `typed`;
- `ast`'s syntax trees (`ast.parse(...)` handed to a checker): each node its fields, put
  back into the test's tree when the candidate changed it;
- `collections.UserDict`, `UserList` and `UserString`: their contents (the first two
  put back into the test's object when the candidate changed them, as a dict is)."""

from __future__ import annotations

from .protocol import ProtocolError, ints, pairs, string


def _wrapped(v, e) -> list:
    return [e(v.__func__)]


def _unwrapped(p, d, c):
    if type(p) is not list or len(p) != 1:
        raise ProtocolError("malformed method wrapper")
    func = d(p[0])
    if not callable(func):
        raise ProtocolError("a method wrapper of something not callable")
    return c(func)


def _struct_time(v, e) -> list:
    return [list(v), v.tm_zone, v.tm_gmtoff]


def _unstruct_time(p, d, c):
    if type(p) is not list or len(p) != 3 or type(p[0]) is not list:
        raise ProtocolError("malformed struct_time")
    zone, offset = p[1], p[2]
    if not (zone is None or type(zone) is str) or not (offset is None or type(offset) is int):
        raise ProtocolError("malformed struct_time")
    return c(ints(p[0], 9), {"tm_zone": zone, "tm_gmtoff": offset})


# The sentinels a dataclass field holds, by name: the receiver's own.
_FIELD_MARKS = ("MISSING", "_FIELD", "_FIELD_CLASSVAR", "_FIELD_INITVAR")


def _mark(value, e):
    import dataclasses

    for name in _FIELD_MARKS:
        if value is getattr(dataclasses, name):
            return {"mark": name}
    return e(value)


def _unmark(data, d):
    import dataclasses

    if type(data) is dict and set(data) == {"mark"}:
        if data["mark"] not in _FIELD_MARKS:
            raise ProtocolError("malformed dataclass field")
        return getattr(dataclasses, data["mark"])
    return d(data)


_FLAGS = ("init", "repr", "hash", "compare", "kw_only")


def _field(v, e) -> list:
    metadata = None if not v.metadata else [[e(k), e(x)] for k, x in v.metadata.items()]
    flags = [_mark(getattr(v, f), e) for f in _FLAGS]
    return [
        v.name,
        _mark(v.type, e),
        _mark(v.default, e),
        _mark(v.default_factory, e),
        flags,
        metadata,
        _mark(v._field_type, e),
    ]


def _unfield(p, d, c):
    if type(p) is not list or len(p) != 7 or type(p[4]) is not list or len(p[4]) != 5:
        raise ProtocolError("malformed dataclass field")
    import dataclasses

    default, factory = _unmark(p[2], d), _unmark(p[3], d)
    if factory is not dataclasses.MISSING and not callable(factory):
        raise ProtocolError("a dataclass field's factory that is not callable")
    flags = dict(zip(_FLAGS, (_unmark(f, d) for f in p[4]), strict=True))
    metadata = None if p[5] is None else dict(pairs(p[5], d))
    made = c(default=default, default_factory=factory, metadata=metadata, **flags)
    made.name = None if p[0] is None else string(p[0])
    made.type = _unmark(p[1], d)
    kind = _unmark(p[6], d)
    if kind is not None and kind not in (getattr(dataclasses, n) for n in _FIELD_MARKS[1:]):
        raise ProtocolError("malformed dataclass field")
    made._field_type = kind
    return made


def _user_dict(p, d, c):
    made = c()
    made.data.update(pairs(p, d))
    return made


def _user_list(p, d, c):
    if type(p) is not list:
        raise ProtocolError("malformed UserList")
    return c([d(x) for x in p])


def _refill_user(obj, new) -> None:
    """A `UserDict` or `UserList` the other side changed: the same, in this one."""
    if isinstance(obj.data, dict):
        obj.data.clear()
        obj.data.update(new.data)
    else:
        obj.data[:] = new.data


def _params(v, e) -> list:
    return [getattr(v, name) for name in type(v).__slots__]


def _unparams(p, d, c):
    if type(p) is not list or len(p) != len(c.__slots__) or {*map(type, p)} - {bool}:
        raise ProtocolError("malformed dataclass flags")
    return c(*p)


def _node(v, e) -> list:
    names = (*v._fields, *v._attributes)
    return [[name, e(getattr(v, name))] for name in names if hasattr(v, name)]


def _unnode(p, d, c):
    made = c()
    names = (*c._fields, *c._attributes)
    for name, value in pairs(p, d):
        if name not in names:
            raise ProtocolError("malformed syntax tree node")
        setattr(made, name, value)
    return made


def _refill_node(obj, new) -> None:
    """A syntax tree the other side changed in place: the same fields, in this one."""
    for name in (*obj._fields, *obj._attributes):
        if hasattr(new, name):
            setattr(obj, name, getattr(new, name))
        elif hasattr(obj, name):
            delattr(obj, name)


def _nodes() -> dict[str, type]:
    """`ast`'s node classes, by wire name (not the deprecated `Num`, `Str`...)."""
    import ast

    return {
        f"ast.{name}": cls
        for name, cls in vars(ast).items()
        if type(cls) is type and issubclass(cls, ast.AST) and cls.__module__ == "ast"
    }


# name -> (module, class, to wire, from wire), as `values.VALUES`.
VALUES: dict[str, tuple] = {
    "classmethod": ("builtins", "classmethod", _wrapped, _unwrapped),
    "staticmethod": ("builtins", "staticmethod", _wrapped, _unwrapped),
    "struct_time": ("time", "struct_time", _struct_time, _unstruct_time),
    "terminal_size": (
        "os",
        "terminal_size",
        lambda v, e: list(v),
        lambda p, d, c: c(ints(p, 2)),
    ),
    "Field": ("dataclasses", "Field", _field, _unfield),
    "_DataclassParams": ("dataclasses", "_DataclassParams", _params, _unparams),
    # the collections' wrappers of a dict, list or str (exact types): their contents
    "UserDict": (
        "collections",
        "UserDict",
        lambda v, e: [[e(k), e(x)] for k, x in v.data.items()],
        _user_dict,
    ),
    "UserList": ("collections", "UserList", lambda v, e: [e(x) for x in v.data], _user_list),
    "UserString": (
        "collections",
        "UserString",
        lambda v, e: str(v.data),
        lambda p, d, c: c(string(p)),
    ),
}
VALUES.update({name: ("ast", cls.__name__, _node, _unnode) for name, cls in _nodes().items()})
REFILL = {"UserDict": _refill_user, "UserList": _refill_user}
REFILL.update(dict.fromkeys(_nodes(), _refill_node))
