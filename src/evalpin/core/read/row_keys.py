"""A key written twice in a case line of a run file, found at the speed of reading.

A JSON decoder keeps the last of a key written twice, so `"pass": false, ..., "pass":
true` would read as a pass. Checking every line exactly (`bounded.keys_once`) costs a
second decode per line, so blocks of case lines are checked by counting instead, in C,
for the key that decides a grade: `"pass"` occurs in the block once a row. Where the
count differs (a duplicate, or the key's text inside a value), or the block holds a
`\\u` escape (a key can be spelled with one), the block's lines are checked exactly and
the first with a key twice is named. Each count is a pass over the block, about a sixth
of the read; the row's other keys are checked exactly wherever a line is read alone
(the header, a line across two blocks, a case shown in full) and where a count differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalpin.core.bounded import keys_once
from evalpin.core.errors import InputError

_PASS = b'"pass"'


def _counts_agree(block: bytes, rows: Sequence[Any]) -> bool:
    return block.count(_PASS) == len(rows)


def first_twice(block: bytes, rows: Sequence[Any]) -> tuple[int, str] | None:
    """(index of the line within `block`, what is wrong) for the first case line that
    writes a key twice; None when none does. `rows`: the block's lines, decoded."""
    if (b"\\" not in block or b"\\u" not in block) and _counts_agree(block, rows):
        return None
    for k, line in enumerate(block.split(b"\n")):
        if not line.strip():
            continue
        try:
            keys_once(line, "")
        except InputError as exc:
            return k, exc.message
    return None
