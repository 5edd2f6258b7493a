"""Where each case line of a JSONL run starts, kept sparse (`LineIndex`): what lets a
case's bulky detail stay on disk until it is shown (core/read/rundata.py)."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, islice, repeat
from operator import add
from typing import BinaryIO

from evalpin.core.errors import InputError

_CHUNK = 1 << 20  # as rundata's: the last segment is read this far, twice over


class LineIndex:
    """Where each case line starts, kept sparse: one segment per decoded block.

    A segment says "row r is the first non-blank line at byte b, and the rows after
    it follow line by line". Reading costs one entry per block; a segment's line
    starts are computed (and cached) only when one of its rows is shown.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.first_rows = array("q")
        self.starts = array("q")
        self._lines: dict[int, array] = {}

    def add(self, first_row: int, start: int) -> None:
        self.first_rows.append(first_row)
        self.starts.append(start)

    def offset(self, row: int, fh: BinaryIO) -> int:
        seg = bisect_right(self.first_rows, row) - 1
        if seg < 0:
            raise InputError(self.path, f"no case record {row}")
        lines = self._lines.get(seg)
        if lines is None:
            lines = self._lines[seg] = self._segment(seg, fh)
        k = row - self.first_rows[seg]
        if k >= len(lines):
            raise InputError(self.path, "file changed on disk since it was read")
        return lines[k]

    def lines(self, rows: Sequence[int], fh: BinaryIO) -> Iterator[tuple[int, bytes]]:
        """Each of `rows` (sorted) with its line's bytes, reading each segment that
        holds one once: many rows spread over a file cost one read of it, not a seek
        and a read per row."""
        k = 0
        while k < len(rows):
            seg = bisect_right(self.first_rows, rows[k]) - 1
            if seg < 0:
                raise InputError(self.path, f"no case record {rows[k]}")
            start, data = self._read(seg, fh)
            first = self.first_rows[seg]
            parts = self._plain_lines(seg, data)
            if parts is not None:  # no blank lines (the usual case): line k is part k
                while k < len(rows) and rows[k] - first < len(parts):
                    yield rows[k], parts[rows[k] - first]
                    k += 1
            else:
                lines = self._lines.get(seg)
                if lines is None:
                    lines = self._lines[seg] = self._starts(seg, start, data)
                while k < len(rows) and rows[k] - first < len(lines):
                    at = lines[rows[k] - first] - start
                    stop = data.find(b"\n", at)
                    yield rows[k], data[at : stop if stop >= 0 else len(data)]
                    k += 1
            if k < len(rows) and bisect_right(self.first_rows, rows[k]) - 1 == seg:
                raise InputError(self.path, "file changed on disk since it was read")

    def _plain_lines(self, seg: int, data: bytes) -> list[bytes] | None:
        """A segment's lines when it has no blank line (then row k is line k), else None."""
        last = seg + 1 == len(self.starts)
        parts = data.split(b"\n")
        if not last and not parts[-1]:
            parts.pop()
        elif last and parts and not parts[-1]:
            parts.pop()  # the file's final newline
        if b"" in parts or any(map(bytes.isspace, parts)):
            return None
        if not last:
            del parts[self.first_rows[seg + 1] - self.first_rows[seg] :]
        return parts

    def _read(self, seg: int, fh: BinaryIO) -> tuple[int, bytes]:
        start = self.starts[seg]
        last = seg + 1 == len(self.starts)
        fh.seek(start)
        return start, fh.read(_CHUNK * 2 if last else self.starts[seg + 1] - start)

    def _segment(self, seg: int, fh: BinaryIO) -> array:
        start, data = self._read(seg, fh)
        return self._starts(seg, start, data)

    def _starts(self, seg: int, start: int, data: bytes) -> array:
        last = seg + 1 == len(self.starts)
        want = (1 << 62) if last else self.first_rows[seg + 1] - self.first_rows[seg]
        parts = data.split(b"\n")
        if not last and not parts[-1]:
            parts.pop()  # the newline that ends the segment, not a blank line
        if b"" not in parts and not any(map(bytes.isspace, parts)):
            # No blank lines (the usual case): every start at C speed.
            starts = accumulate(map(add, map(len, parts), repeat(1)), initial=start)
            return array("q", islice(starts, min(len(parts), want)))
        lines = array("q")
        offset = start
        for part in parts:
            if len(lines) == want:
                break
            if part and not part.isspace():
                lines.append(offset)
            offset += len(part) + 1
        return lines
