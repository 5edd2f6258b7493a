"""Bounded parsing: the size and depth limits every reader holds its input to.

A hostile or broken file must end as one line and exit 3, never as a traceback, a
stack overflow or minutes of work. JSON decoders (msgspec, `json`) and PyYAML recurse
once per level of nesting, and PyYAML is slow on deep documents, so depth is decided
before a document is parsed:

- JSON: `json_too_deep` looks at the bytes alone (the brackets outside strings), at C
  speed; a line or document with at most `MAX_DEPTH` brackets in all is never scanned.
  `decode_json` checks, then decodes (a `RecursionError` still met is turned into the
  same one line).
- YAML: `yaml_document` walks the parser's events, counting depth and refusing aliases,
  and stops at the first level over `MAX_DEPTH` (libyaml's parser when PyYAML has it,
  so a 100,000-deep document is refused in milliseconds); only then is the document
  composed, with each key's line kept so errors can name it.

Sizes: `read_bounded` refuses a file over its kind's cap from its size alone, before
reading it; JSONL readers refuse a line over `MAX_LINE_BYTES`.

JSON is the standard's, exactly (issue 51): `NaN`, `Infinity` and numbers a float cannot
hold are not JSON (Python's `json` takes them, msgspec refuses them); an integer past
Python's own text limit (`MAX_DIGITS`) is one line, not a `ValueError` traceback; and a
key written twice in one object is refused wherever it is (every decoder keeps the last
one silently, so a second `"pass": true` would undo the first). `loads` decodes small
documents with those checks built in; `keys_once` checks what a faster decoder read, by
counting the colons outside strings against the keys decoded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, repeat
from operator import not_, sub
from pathlib import Path
from typing import Any, TypeVar

from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8, open_input

MAX_DEPTH = 100  # levels of nesting of any JSON or YAML value
MAX_CONFIG_BYTES = 16 << 20  # a slots file, a lock, a coding YAML, a disclosure list
MAX_FIXTURE_BYTES = 256 << 20  # a golden JSONL set, a replay recording, a notes file
MAX_LINE_BYTES = 64 << 20  # one line of a run file or another tool's JSONL log
MAX_DOCUMENT_BYTES = 1 << 30  # one whole JSON document (a report, an inspect-ai log)

TOO_DEEP = f"nested too deeply (more than {MAX_DEPTH} levels)"
# A `\ud800` escape alone decodes to a string no file, terminal or JSON reader takes back.
NOT_TEXT = "a lone UTF-16 surrogate (an escape such as \\ud800 alone) is not text"

_T = TypeVar("_T")
# Everything but brackets and quotes, deleted before depth is counted.
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_NOT_KEYED = bytes(sorted(set(range(256)) - set(b'":{')))
# Python's own limit on an integer's decimal digits (int <-> text): a longer one is refused.
MAX_DIGITS = 4300
# An opening bracket steps one level in, a closing one out: as 2 and 0, minus 1 each.
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_CONTAINERS = (dict, list)


def too_big(size: int, limit: int) -> str:
    return f"too large: {size:,} bytes, over the {limit:,}-byte limit"


def read_bounded(path: str | Path, limit: int, **names: Any) -> bytes:
    """An input file's bytes, or InputError naming it: over `limit` bytes (told from its
    size, before it is read), not a regular file, or unreadable in `open_input`'s words
    (`names`)."""
    with open_input(path, **names) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise InputError(path, too_big(size, limit))
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # grew while read
        raise InputError(path, too_big(len(data), limit))
    return data


# -- JSON ---------------------------------------------------------------------------


def has_surrogates(value: Any) -> bool:
    """Whether a decoded JSON or YAML value holds a lone surrogate in any string (or
    key): it could not be printed, hashed as UTF-8 or written to a run file that reads
    back. One `json.dumps` pass, in C."""
    import json

    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, TypeError, RecursionError):  # pragma: no cover - bounded, plain data
        return False
    return False


def check_text(value: Any, source: bytes | str, path: str | Path, line: int | None = None) -> None:
    """InputError (`NOT_TEXT`, naming the file and line) when a value decoded from JSON
    `source` holds a lone surrogate; only a `\\u` escape makes one, so a source without
    one is not walked."""
    if ("\\u" if isinstance(source, str) else b"\\u") in source and has_surrogates(value):
        raise InputError(path, NOT_TEXT, line)


def _outside_strings(data: bytes | bytearray | memoryview, keep: bytes) -> bytes:
    """The bytes of JSON text outside its strings, of those `keep` deletes none of.
    Linear, every pass in C: escaped backslashes and quotes dropped, then every byte
    `keep` deletes, then the string bodies (every other run between quotes)."""
    raw = bytes(data)
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(raw.translate(None, keep).split(b'"')[::2])


def json_depth(data: bytes | bytearray | memoryview) -> int:
    """How deep JSON text nests (brackets inside strings do not count)."""
    brackets = _outside_strings(data, _NOT_STRUCTURE).translate(_STEP)
    return max(accumulate(map(sub, brackets, repeat(1))), default=0)


def json_containers(data: bytes | bytearray | memoryview) -> int:
    """How many objects and lists JSON text holds (brackets inside strings do not
    count), told from its bytes before it is decoded: what decoding it would build."""
    if data.count(b"[") + data.count(b"{") == 0:
        return 0
    brackets = _outside_strings(data, _NOT_STRUCTURE)
    return brackets.count(b"[") + brackets.count(b"{")


def json_too_deep(data: bytes | bytearray | memoryview, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON text nests deeper than `limit`; text with at most `limit` brackets
    in all cannot, and is not scanned."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    return json_depth(data) > limit


def check_json(data: bytes | memoryview, path: str | Path, line: int | None = None) -> None:
    """InputError (`TOO_DEEP`, naming the file and line) when `data` nests too deeply."""
    if json_too_deep(data):
        raise InputError(path, TOO_DEEP, line)


def decode_json(
    decode: Callable[[Any], _T], data: Any, path: str | Path, line: int | None = None
) -> _T:
    """`decode(data)` for JSON within the depth limit: InputError when it is deeper
    (told before decoding; a `RecursionError` met anyway says the same), or when it
    writes a key twice (`keys_once`). The decoder's own errors pass through, for the
    caller to word."""
    raw = data if isinstance(data, bytes | memoryview) else data.encode("utf-8", "surrogatepass")
    check_json(raw, path, line)
    try:
        value = decode(data)
    except RecursionError:
        raise InputError(path, TOO_DEEP, line) from None
    keys_once(raw, path, line)
    return value


class _Twice(ValueError):
    """A key written twice in one JSON object."""


class _NotJson(ValueError):
    """A number JSON does not have (`NaN`, `Infinity`) or one past a limit."""


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Twice(key)
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON number")


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise _NotJson(f"a number of {digits:,} digits, over the {MAX_DIGITS:,}-digit limit")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        shown = text if len(text) <= 24 else text[:20] + "..."
        raise _NotJson(f"the number {shown} is too large for a float")
    return value


def twice_message(key: str) -> str:
    return f"duplicate key {key!r}: JSON keeps the last one written, silently"


def loads(text: str | bytes, path: str | Path, line: int | None = None) -> Any:
    """JSON text decoded exactly (module docstring): InputError naming the file and line
    for what is not JSON, a key written twice, a number past a limit, deep nesting or a
    lone surrogate. For documents a person writes (a golden line, a config)."""
    import json

    if isinstance(text, str):
        raw = text.encode("utf-8", "surrogatepass")
    else:
        raw = text
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise InputError(path, not_utf8(raw, bad), line) from None
    check_json(raw, path, line)
    try:
        value = json.loads(
            text,
            object_pairs_hook=_once,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=_float,
        )
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON: {exc.msg} at column {exc.colno}", line) from None
    except _Twice as twice:
        raise InputError(path, twice_message(twice.args[0]), line) from None
    except _NotJson as bad:
        raise InputError(path, f"not JSON: {bad}", line) from None
    except RecursionError:  # pragma: no cover - refused above
        raise InputError(path, TOO_DEEP, line) from None
    check_text(value, raw, path, line)
    return value


def keys_written(data: bytes | memoryview) -> tuple[int, int]:
    """How many keys JSON text writes (one colon outside strings each), in all its
    objects and lines, counting a key written twice twice; and how many objects."""
    outside = _outside_strings(data, _NOT_KEYED)
    return outside.count(b":"), outside.count(b"{")


def keys_kept(value: Any) -> int:
    """How many keys every object inside a decoded JSON value holds: a key written twice
    is kept once. Walked a level at a time, each level's containers picked out and
    opened by C-level passes (no Python frame per value, no recursion)."""
    count = 0
    level = [value] if isinstance(value, _CONTAINERS) else []
    while level:
        is_dict = list(map(isinstance, level, repeat(dict)))
        dicts = list(compress(level, is_dict))
        count += sum(map(len, dicts))
        inner = list(
            chain(
                chain.from_iterable(map(dict.values, dicts)),
                chain.from_iterable(compress(level, map(not_, is_dict))),
            )
        )
        level = list(compress(inner, map(isinstance, inner, repeat(_CONTAINERS))))
    return count


_GENERIC: Any = None


def keys_once(data: bytes | memoryview, path: str | Path, line: int | None = None) -> None:
    """InputError when JSON text (already decoded by a decoder that keeps the last of a
    key written twice) writes a key twice in one object: its colons outside strings,
    one per key written, against the keys it decodes to (msgspec, in C; the walk counts
    objects, not bytes). The key is named by a second, exact decode. A number past a
    limit in a value the first decoder skipped is refused too."""
    global _GENERIC
    import msgspec

    if _GENERIC is None:
        _GENERIC = msgspec.json.Decoder()
    raw = bytes(data)
    written = keys_written(raw)[0]
    if not written:
        return
    try:
        kept = keys_kept(_GENERIC.decode(raw))
    except msgspec.ValidationError:  # a number past a limit where the caller's decoder
        loads(raw, path, line)  # skipped it (a field it does not read): named here
        raise InputError(path, "not JSON: a number past a limit", line) from None
    except (msgspec.MsgspecError, RecursionError):
        return  # not JSON at all: the caller's own decoder says so
    if kept != written:
        loads(raw, path, line)  # names the key (or the first other problem)
        raise InputError(path, "a key written twice in one object", line)  # pragma: no cover


# -- YAML ---------------------------------------------------------------------------


@dataclass(frozen=True)
class YamlDoc:
    """A YAML document as plain Python, with the line of each key and list item.

    `lines` maps a path of keys and list indices, such as `("items", 2, "timeout_s")`,
    to the 1-based line it starts on; `line(*path)` answers for the deepest part of
    the path that is known, so an error about a missing key names its mapping's line."""

    value: Any
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict)

    def line(self, *path: Any) -> int | None:
        for end in range(len(path), -1, -1):
            found = self.lines.get(tuple(path[:end]))
            if found is not None:
                return found
        return None


def yaml_document(path: Path, data: bytes, what: str) -> YamlDoc:
    """A YAML file's one document: UTF-8, no aliases (the billion-laughs shape), nested
    at most `MAX_DEPTH` deep, all told before it is composed; InputError otherwise
    (`what`: the files this is, for the alias message)."""
    import yaml  # imported here: only YAML inputs pay for it

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data[: bad.start].count(b"\n") + 1
        raise InputError(path, not_utf8(data, bad), line) from None
    try:
        _walk(path, text, what)
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            # Lines first: constructing merges `<<:` keys into the node in place.
            lines = _key_lines(path, node) if node is not None else {}
            value = None if node is None else loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(
            path, f"invalid YAML: {problem}", mark.line + 1 if mark else None
        ) from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a date that does not exist
        raise InputError(path, f"invalid YAML value: {exc}") from None
    except RecursionError:  # pragma: no cover - the walk refuses what is this deep
        raise InputError(path, TOO_DEEP) from None
    if has_surrogates(value):
        raise InputError(path, NOT_TEXT)
    return YamlDoc(value, lines)


def _walk(path: Path, text: str, what: str) -> None:
    """The parser's events, counted: InputError at an alias or past `MAX_DEPTH`. With
    libyaml the walk costs milliseconds whatever the depth; where it finds a fault,
    PyYAML's own parser walks again to word it as `safe_load` would."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            _count(path, yaml.parse(text, Loader=fast), what)
            return
        except yaml.YAMLError as exc:
            if "nesting depth" in str(exc):  # libyaml's own limit, met while scanning ahead
                mark = getattr(exc, "problem_mark", None)
                raise InputError(path, TOO_DEEP, mark.line + 1 if mark else None) from None
    _count(path, yaml.parse(text, Loader=yaml.SafeLoader), what)


def _count(path: Path, events: Iterator[Any], what: str) -> None:
    import yaml

    depth = 0
    for event in events:
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(path, TOO_DEEP, event.start_mark.line + 1)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            line = event.start_mark.line + 1
            raise InputError(path, f"YAML aliases are not allowed in {what}", line)


def _key_lines(path: Path, root: Any) -> dict[tuple[Any, ...], int]:
    """The line of every mapping key and list item under `root` (without recursion);
    InputError at a key written twice in one mapping, which YAML would settle by
    keeping the last silently (a second `forbidden_imports:` undoing the first)."""
    import yaml

    lines: dict[tuple[Any, ...], int] = {}
    todo: list[tuple[tuple[Any, ...], Any]] = [((), root)]
    while todo:
        where, node = todo.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    at = (*where, key.value)
                    line = key.start_mark.line + 1
                    if at in lines:
                        msg = f"duplicate key {key.value!r} (first on line {lines[at]})"
                        raise InputError(path, msg, line)
                    lines[at] = line
                    todo.append((at, value))
        elif isinstance(node, yaml.SequenceNode):
            for n, item in enumerate(node.value):
                at = (*where, n)
                lines[at] = item.start_mark.line + 1
                todo.append((at, item))
    return lines
