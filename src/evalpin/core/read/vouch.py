"""Whether a run file's lines are still the bytes evalpin wrote: the trailer's CRC-32.

A JSON decoder keeps the last of a key written twice, silently, so every key of every
case line must be checked once (issue 51). Checking exactly means decoding each line
whole (every value made, every key counted): more than twice the cost of reading the
file into rows (core/read/row_keys.py). msgspec has no switch for it, for a struct or a
dict, and even the leanest exact decode (the top level as a dict of raw values) costs
more than the whole read.

So the writer vouches for its own bytes. `RunWriter` writes no key twice (each line is
a Python dict dumped) and no number JSON does not have, and it keeps the CRC-32 of every
byte it writes; the summary trailer records it (`Summary.crc32`). A reader that finds
the trailer first (`trailer_vouch`, one read at the file's end) hashes the bytes before
it as they stream past (zlib, in C: a sixth of the read) and skips the per-line check;
where the CRC differs (a line changed by hand, by another tool, by a merge) every line
is checked exactly after all, and the first with a key twice is named. A file no
trailer vouches for (a run still going or killed, one made before the trailer carried
the CRC, header-less case records) has every block checked exactly as it is read.

The CRC is no seal: it tells evalpin's bytes from bytes changed since, not a forger's
file from an honest one (a run file is not signed; a forger could as well write the
values they want).
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from typing import BinaryIO

import msgspec

# The trailer is the file's last line, short (counts, a rate per seed, token usage): a
# longer last line is read without a vouch, every line checked.
_TAIL = 1 << 20


@dataclass(frozen=True)
class Vouch:
    """The trailer's word: the CRC-32 of the file's bytes before offset `at` (where the
    trailer starts)."""

    crc: int
    at: int


class _Trailer(msgspec.Struct):
    """All the vouch reads of the last line; the scan reads and checks it in full."""

    record: str | None = None
    crc32: int | None = None


_TRAILER = msgspec.json.Decoder(_Trailer)


def trailer_vouch(fh: BinaryIO, end: int | None = None) -> Vouch | None:
    """The vouch of the summary trailer that ends the file (or its first `end` bytes);
    None when the last line is not a whole trailer carrying a CRC."""
    if end is None:
        end = os.fstat(fh.fileno()).st_size
    start = max(0, end - _TAIL)
    fh.seek(start)
    tail = fh.read(end - start)
    if not tail.endswith(b"\n"):
        return None  # torn, or empty
    begin = tail.rfind(b"\n", 0, len(tail) - 1) + 1
    if not begin and start:
        return None  # a last line longer than the window
    try:
        said = _TRAILER.decode(tail[begin:])
    except (msgspec.MsgspecError, RecursionError):
        return None
    if said.record != "summary" or said.crc32 is None or not 0 <= said.crc32 < 1 << 32:
        return None
    return Vouch(said.crc32, start + begin)


class Hashing:
    """The CRC-32 of the bytes a scan reads from `start`, up to the vouch's `at`."""

    def __init__(self, vouch: Vouch | None) -> None:
        self.vouch = vouch
        self.crc = 0
        self.length = 0  # bytes hashed

    def add(self, chunk: bytes, at: int) -> None:
        """Hash `chunk`, read at file offset `at` (chunks come in file order)."""
        if self.vouch is None:
            return
        keep = self.vouch.at - at
        if keep <= 0:
            return
        view = memoryview(chunk)[:keep]
        self.crc = zlib.crc32(view, self.crc)
        self.length += len(view)

    def holds(self) -> bool:
        """Whether the bytes hashed, read from the file's start, are all the trailer
        vouches for and hash to its CRC."""
        v = self.vouch
        return v is not None and self.length == v.at and self.crc == v.crc


def crc32_file(fd: int) -> int:
    """The CRC-32 of a whole file, read through `fd` from its start."""
    crc, at = 0, 0
    while chunk := os.pread(fd, _TAIL, at):
        crc = zlib.crc32(chunk, crc)
        at += len(chunk)
    return crc


# -- joining two halves' CRCs (core/review/halves.py reads a big file in two processes)

_POLY = 0xEDB88320  # CRC-32's polynomial, reflected (zlib's)


def _times(matrix: list[int], vector: int) -> int:
    out, row = 0, 0
    while vector:
        if vector & 1:
            out ^= matrix[row]
        vector >>= 1
        row += 1
    return out


def _squared(matrix: list[int]) -> list[int]:
    return [_times(matrix, matrix[n]) for n in range(32)]


def crc32_combine(first: int, second: int, second_length: int) -> int:
    """The CRC-32 of A followed by B from the CRC of each and B's length: the CRC is
    linear over GF(2), so A's is carried through B's length of zero bits by a 32x32
    matrix raised to that power (squared per bit of the length)."""
    if second_length <= 0:
        return first
    step = [_POLY] + [1 << n for n in range(31)]  # one zero bit
    for _ in range(3):
        step = _squared(step)  # one zero byte
    length = second_length
    while length:
        if length & 1:
            first = _times(step, first)
        length >>= 1
        if length:
            step = _squared(step)
    return first ^ second
