"""The rules both ends share about the candidate's objects: which special methods a proxy
may forward, which builtin bases make a proxy value-backed, what such a stand-in answers
as its value, and which names a description may never make a method of a proxy. The
judge applies them to every description it gets, whatever the description claims."""

from __future__ import annotations

import operator

COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
# Each comparison as the operator that runs it (reflected operands and all).
COMPARING = {
    "__eq__": operator.eq,
    "__ne__": operator.ne,
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
}
BINARY = [
    "add",
    "sub",
    "mul",
    "matmul",
    "truediv",
    "floordiv",
    "mod",
    "divmod",
    "pow",
    "lshift",
    "rshift",
    "and",
    "xor",
    "or",
]
# Binary operators by their dunder names, each with the plain (non in-place) operator a
# value-backed stand-in falls back to.
OPERATORS = {f"__{n}__": f"__{n}__" for n in BINARY}
OPERATORS |= {f"__r{n}__": f"__r{n}__" for n in BINARY}
OPERATORS |= {f"__i{n}__": f"__{n}__" for n in BINARY if n != "divmod"}
UNARY = [
    "neg",
    "pos",
    "abs",
    "invert",
    "int",
    "float",
    "index",
    "complex",
    "round",
    "trunc",
    "floor",
    "ceil",
]
ASYNC = ["__aenter__", "__aexit__", "__aiter__", "__anext__"]
# The special methods a proxy may forward: what the candidate's class defines of these
# is forwarded, nothing else. Comparisons and hashing follow the comparison rule.
FORWARDED = frozenset(
    list(OPERATORS)
    + [f"__{n}__" for n in UNARY]
    + [
        f"__{n}__"
        for n in [
            "bool",
            "len",
            "length_hint",
            "iter",
            "next",
            "reversed",
            "contains",
            "getitem",
            "setitem",
            "delitem",
            "missing",
            "enter",
            "exit",
            "call",
            "repr",
            "str",
            "format",
            "bytes",
            "fspath",
            "dir",
            "get",
            "set",
            "delete",
            "set_name",
        ]
    ]
    + ASYNC
)

# Candidate classes derived from one of these hold their value in the judge: immutable
# ones as a local subclass of the builtin; mutable ones are compared as a fresh copy.
IMMUTABLE_BASES = {
    "int": (int, int.__index__),
    "float": (float, float.__float__),
    "str": (str, str.__str__),
    "bytes": (bytes, bytes.__bytes__),
    "tuple": (tuple, lambda v: tuple.__getitem__(v, slice(None))),
    "frozenset": (frozenset, lambda v: frozenset.union(v)),
}
MUTABLE_BASES = {
    "list": (list, list.copy),
    "dict": (dict, dict.copy),
    "set": (set, set.copy),
}
COPIES = {name: copier for name, (_, copier) in {**IMMUTABLE_BASES, **MUTABLE_BASES}.items()}
# The test's own operands a numeric stand-in computes with as its value, and what it
# does as its value alone: a number's unary operations.
NUMBERS = (int, float, complex)
NUMERIC_UNARY = frozenset(f"__{n}__" for n in UNARY)

# Attributes of a remote object the judge never asks for: names the import system,
# typing and pickling look up on any object, which are the proxy's own business.
LOCAL_ONLY = frozenset(
    [
        "__class__",
        "__getattribute__",
        "__reduce__",
        "__reduce_ex__",
        "__getstate__",
        "__setstate__",
        "__class_getitem__",
        "__init_subclass__",
        "__subclasshook__",
        "__instancecheck__",
        "__subclasscheck__",
        "__mro_entries__",
        "__set_name__",
        "__orig_class__",
        "__orig_bases__",
        "__parameters__",
        "__weakref__",
        "__isabstractmethod__",  # abc's question while a proxy class is made
        "__globals__",  # a function's module namespace: nothing to evaluate here
        "__builtins__",
    ]
)


def method_name(name: object) -> bool:
    """A name a description may make a forwarded method of a proxy class: an identifier
    that is not a special name (but `__init__`, for a tests' subclass's `super()`), and
    none of the proxy's own."""
    if type(name) is not str or not name.isidentifier() or name.startswith("_evalpin"):
        return False
    return not (name.startswith("__") and name.endswith("__")) or name == "__init__"
