"""The wire forms of lists, dicts and sets of plain values, made in one pass (the
wire's fast path: a call's usual arguments), and of containers in general."""

from __future__ import annotations

import re

from .protocol import SCALARS


def form(value, kind: type, e) -> list | dict:
    """A list's, dict's or set's wire form, its items encoded by `e`."""
    if kind is list:
        return [e(v) for v in value]
    if kind is dict:
        return {"t": "dict", "v": [[e(k), e(v)] for k, v in value.items()]}
    return {"t": "set", "v": [e(v) for v in value]}


def flat(value, kind: type) -> bool:
    """Whether a list, dict or set holds only scalars (keys and values): then nothing in
    it could be met again within it, and it needs no table of what was met."""
    return SCALAR_TYPES.issuperset(map(type, value)) and (
        kind is not dict or SCALAR_TYPES.issuperset(map(type, value.values()))
    )


def plain_form(value, kind: type, apart: tuple, keep) -> list | dict | None:
    """The wire form of a list, dict or set of scalars and of containers of scalars, each
    there once (nothing in it met again: no marks), made in one pass as `form` through
    `encode` would make it, each str as `keep` writes it (with its key: `crossed`); None
    for any other value, or when a scalar needs a tag (a special float, an int past
    JSON's digits) or a nested container is in a table of `apart`: the general way makes
    those. (Both ends' `encode` hand scalars and these containers straight to the
    codec's.)"""
    if kind is dict:
        if not _flat_keys(value):
            return None
        items = value.values()
    else:
        items = value
    out = []
    seen = set()
    for v in items:
        t = type(v)
        if t is list or t is dict or t is set:
            if id(v) in seen or any(id(v) in table for table in apart):
                return None
            seen.add(id(v))
            v = _flat_form(v, t, keep)
            if v is None:
                return None
        elif t is str:
            v = keep(v)
        elif (
            t not in SCALAR_TYPES
            or (t is float and v - v != 0.0)  # inf or nan
            or (t is int and not -BIG < v < BIG)
        ):
            return None
        out.append(v)
    if kind is list:
        return out
    if kind is dict:
        return {"t": "dict", "v": [[_kept(k, keep), v] for k, v in zip(value, out, strict=True)]}
    return {"t": "set", "v": out}


def _flat_form(value, kind: type, keep) -> list | dict | None:
    """A container of untagged scalars' wire form, or None."""
    if kind is dict:
        if not _flat_keys(value) or _untagged(value.values()) is None:
            return None
        return {"t": "dict", "v": [[_kept(k, keep), _kept(v, keep)] for k, v in value.items()]}
    texts = _untagged(value)
    if texts is None:
        return None
    items = [_kept(v, keep) for v in value] if texts else list(value)
    return items if kind is list else {"t": "set", "v": items}


def _kept(value, keep):
    return keep(value) if type(value) is str else value


def _flat_keys(value: dict) -> bool:
    return _untagged(value) is not None


def _untagged(scalars) -> bool | None:
    """None unless these are scalars that all cross as themselves (no special float, no
    int too long for JSON's decimal digits); else whether a str is among them (each goes
    with its key: without one, the items are their own wire form)."""
    kinds = set(map(type, scalars))
    if not SCALAR_TYPES.issuperset(kinds):
        return None
    if float in kinds or int in kinds:
        for v in scalars:
            t = type(v)
            if (t is float and v - v != 0.0) or (t is int and not -BIG < v < BIG):
                return None
    return str in kinds


def lists_of_scalars(data: list) -> bool:
    """Whether a list's wire form holds scalars and lists of scalars alone (no mark)."""
    return all(type(v) in SCALAR_TYPES or (type(v) is list and flat(v, list)) for v in data)


# An int Python would not write in decimal (`sys.set_int_max_str_digits`, 4300 digits
# by default) crosses in hexadecimal: a correct answer's 9**9**5 is no broken pipe.
BIG = 1 << 13000
HEX = re.compile(r"-?[0-9a-f]+")
SCALAR_TYPES = frozenset(SCALARS)
