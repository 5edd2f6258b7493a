"""Closed input formats: an unknown key is invalid input, named with the nearest valid key.

Every format a person writes lists its keys: golden cases and their `defaults` line,
coding YAML (top level and items), slots files (top level and each provider's entry),
review notes, and locks (line by line). Anything else is a typo (`must_includ`,
`forbidden_import:`) or a key of another format, and a typo must never quietly switch
a check off: it is refused with the file, the line, the key and the valid key it most
looks like (`nearest`, difflib's closest match).

The one way to carry information evalpin does not read is a key that starts with `x-`
(`"x-owner": "ana"`, `x-ticket: 1432`), allowed in every mapping of those formats (a
lock is evalpin's own output and has none). evalpin ignores such keys, and hashes them
like the rest: they are part of a golden case's or a coding item's fixture hash and of
the set's dataset hash, so editing one is an edit of the set.

`Problems` is where a reader's problems go: raised at the first (every command but
`check`: one line, exit 3), or collected so `evalpin check` can list them all.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from evalpin.core.errors import InputError

EXTENSION_PREFIX = "x-"


def nearest(key: object, valid: Iterable[str]) -> str | None:
    """The valid key `key` most looks like, or None when none is close."""
    found = difflib.get_close_matches(str(key), sorted(valid), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_keys(mapping: Iterable[object], valid: Collection[str]) -> list[str]:
    """The keys of `mapping` that are neither valid nor an `x-` extension, in order."""
    return [
        str(key)
        for key in mapping
        if key not in valid and not str(key).startswith(EXTENSION_PREFIX)
    ]


def unknown_key(
    key: str, valid: Collection[str], where: str = "", *, extensions: bool = True
) -> str:
    """`case 'a': unknown key 'must_includ' (did you mean 'must_include'?)`: with the
    valid keys listed when none is close (and, for a format that takes them, how to
    name a key of one's own)."""
    guess = nearest(key, valid)
    if guess is not None:
        hint = f"did you mean {guess!r}?"
    else:
        hint = f"valid keys: {', '.join(sorted(valid))}"
        if extensions:
            hint += f"; a key of your own starts with {EXTENSION_PREFIX!r}"
    return f"{where}unknown key {key!r} ({hint})"


class Problems:
    """A reader's problems: raised at once (the default), or collected (`collect`)."""

    def __init__(self, path: str | Path, *, collect: bool = False) -> None:
        self.path = path
        self.collect = collect
        self.found: list[InputError] = []
        # Unknown keys among them: the file is not in its format (exit 3 wherever read,
        # `check` included), where the other problems are a set's faults (`check`: 1).
        self.unknown = 0

    def add(self, message: str, line: int | None = None) -> None:
        """A problem at `line` of the file (None: the file as a whole)."""
        self.error(InputError(self.path, message, line))

    def error(self, error: InputError) -> None:
        """A problem already worded as an InputError: raised, or kept."""
        if not self.collect:
            raise error
        self.found.append(error)

    def keys(
        self,
        mapping: Iterable[object],
        valid: Collection[str],
        line: int | None = None,
        where: str = "",
        lines: dict[str, int] | None = None,
    ) -> None:
        """Every unknown key of `mapping`, each a problem at its own line (`lines`: key
        -> line, where the format knows it) or else at `line`."""
        for key in unknown_keys(mapping, valid):
            at = (lines or {}).get(key, line)
            self.unknown += 1
            self.add(unknown_key(key, valid, where), at)

    def __bool__(self) -> bool:
        return bool(self.found)


_UNKNOWN_FIELD = re.compile(r"Object contains unknown field `(.*?)`(?: - at `\$(.*)`)?$", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[[^\]]*\]")


def struct_problem(message: str, root: Any) -> str:
    """msgspec's "Object contains unknown field `seds` - at `$.fixtures`" for a closed
    struct (`forbid_unknown_fields`) in evalpin's words, with the nearest valid key of
    the struct at that place: `unknown key 'seds' in fixtures (did you mean 'seeds'?)`.
    Any other message is returned as it is."""
    found = _UNKNOWN_FIELD.match(message)
    if found is None:
        return message
    key, at = found.group(1), found.group(2) or ""
    valid = _fields_at(root, at)
    where = f"in {at.lstrip('.')}: " if at else ""
    if valid is None:
        return f"{where}unknown key {key!r}"
    return unknown_key(key, valid, where, extensions=False)


def _fields_at(root: Any, at: str) -> frozenset[str] | None:
    """The keys the struct at path `at` (msgspec's `.name`, `[0]`, `[...]`) takes."""
    from msgspec import inspect

    kinds = [inspect.type_info(root)]
    for step in _STEP.finditer(at):
        name = step.group(1)
        nxt = []
        for kind in _structs(kinds):
            if name is not None:
                nxt += [f.type for f in kind.fields if f.encode_name == name]
        for kind in _containers(kinds):
            if name is None:
                nxt.append(getattr(kind, "item_type", None) or kind.value_type)
        kinds = nxt
    for kind in _structs(kinds):
        tag = [kind.tag_field] if kind.tag_field else []
        return frozenset([f.encode_name for f in kind.fields] + tag)
    return None


def _flat(kinds: list[Any]) -> list[Any]:
    from msgspec import inspect

    out = []
    for kind in kinds:
        out += _flat(list(kind.types)) if isinstance(kind, inspect.UnionType) else [kind]
    return out


def _structs(kinds: list[Any]) -> list[Any]:
    from msgspec import inspect

    return [k for k in _flat(kinds) if isinstance(k, inspect.StructType)]


def _containers(kinds: list[Any]) -> list[Any]:
    from msgspec import inspect

    shapes = (inspect.ListType, inspect.DictType, inspect.SetType, inspect.VarTupleType)
    return [k for k in _flat(kinds) if isinstance(k, shapes)]
