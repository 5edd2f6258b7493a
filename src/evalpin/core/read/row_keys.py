"""Every key of a case line checked exactly, and every number: what the lean decode skips.

The scan decodes case lines into lean rows (`CaseRow`), skipping the fields a row does
not keep, and a JSON decoder keeps the last of a key written twice: `"pass": false, ...,
"pass": true` would read as a pass, a second `seed` or `status` would move the row, and
a skipped field's `1e999` would pass unseen. A line no trailer vouches for
(core/read/vouch.py) is checked here: its block decoded whole, the keys it keeps (their
count; or, where a line nests objects, the colons of the decoded lines encoded again)
counted against the colons written outside strings (`bounded.keys_once`'s count, for a
block at once), and only where they differ, or a number is past a limit, is each line
decoded exactly to name the first that is wrong.
"""

from __future__ import annotations

from itertools import repeat

import msgspec

from evalpin.core.bounded import TOO_DEEP, keys_once, keys_written, loads
from evalpin.core.errors import InputError

_ANY = msgspec.json.Decoder()
_TEXT = msgspec.json.Encoder()


def line_problem(line: bytes) -> str | None:
    """What is wrong with a JSON line a lenient decode took: a key written twice (named)
    or a number past a limit; None when nothing is, or when it is not JSON at all (the
    caller's own decoder says so)."""
    try:
        _ANY.decode(line)
    except msgspec.ValidationError as exc:  # the one kind a generic decode raises: numbers
        try:
            loads(line, "")  # names the number, where its limit is Python's too
        except InputError as said:
            return said.message
        return f"not JSON: {str(exc).split(' - at ')[0].lower()}"
    except msgspec.DecodeError:
        return None
    except RecursionError:
        return TOO_DEEP
    try:
        keys_once(line, "")
    except InputError as exc:
        return exc.message
    return None


def first_wrong(block: bytes) -> tuple[int, str] | None:
    """(byte offset within `block` of the first line that writes a key twice or holds a
    number past a limit, what is wrong); None when no line does."""
    try:
        lines = _ANY.decode_lines(block)
        written, objects = keys_written(block)
        if objects == len(lines) and all(map(isinstance, lines, repeat(dict))):
            kept = sum(map(len, lines))  # one object a line: its keys are all there are
        else:  # the decoded lines again as text, where each key kept is written once
            kept = keys_written(_TEXT.encode(lines))[0]
        if kept == written:
            return None
    except (msgspec.MsgspecError, RecursionError):
        pass  # named line by line below
    offset = 0
    for line in block.split(b"\n"):
        if line.strip() and (said := line_problem(line)) is not None:
            return offset, said
        offset += len(line) + 1
    return None
