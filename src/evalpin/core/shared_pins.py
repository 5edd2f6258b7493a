"""Lean rows whose repeated pins are one shared string, not a copy per row.

Every case line of a run repeats the same grader version, model slot, reported model
and slot settings digest. Decoded as plain `str` fields, a million rows hold a million
copies of each (about 250 of a lean row's ~550 bytes). A decoder whose pin fields are
typed `Literal[<the values this file uses>]` makes msgspec return the literal object
itself, so the copies are never made and decoding is faster too.

`PinSharing` learns the values from the header and the first case line, decodes blocks
with that typed decoder, and where a block holds a value it did not know, decodes the
block with the plain decoder and widens the literals (up to `MAX_VALUES` per pin; beyond
that the file is read with the plain decoder). The typed rows are instances of a
`CaseRow` subclass cached by its values, so two runs on the same instrument get the
same row type and still compare as equal structs, field for field.

The completion digest usually equals the text digest (no tool calls or files): the
text digest then points at the completion digest's string, one C-level pass a block.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from functools import lru_cache
from operator import attrgetter
from typing import Literal

import msgspec

from evalpin.core.records import CaseRow, RunHeader

PINS = ("grader_version", "model_slot", "reported_model", "slot_settings")
MAX_VALUES = 8  # distinct values per pin beyond which a file is read plainly

_PLAIN = msgspec.json.Decoder(CaseRow)

Values = tuple[tuple[str, ...], ...]  # per pin of PINS, its known values, sorted


@lru_cache(maxsize=32)
def row_type(values: Values) -> type[CaseRow]:
    """The CaseRow subclass whose pins decode to these shared strings (one per values)."""
    fields = {}
    for name, known in zip(PINS, values, strict=True):
        fields[name] = (Literal[known] | None) if known else None  # type: ignore[valid-type]
    namespace = {"__annotations__": fields, **dict.fromkeys(fields)}
    return type("SharedPinsRow", (CaseRow,), namespace, gc=False)


@lru_cache(maxsize=32)
def _decoder(values: Values) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(row_type(values))


class PinSharing:
    """Decodes a file's case blocks with shared pin strings (see the module docstring)."""

    def __init__(self, *, share_digests: bool = True) -> None:
        self.share_digests = share_digests  # point equal text digests at one string
        self.values: list[set[str]] = [set() for _ in PINS]
        self.learnt = False  # from the first case line
        self.off = False  # too many distinct values: plain decoding
        self.decoder: msgspec.json.Decoder | None = None

    def learn_header(self, header: RunHeader) -> None:
        self._widen([header], pins=("grader_version", "model_slot"))

    def decode(self, block: memoryview) -> list[CaseRow]:
        """Decode a block of case lines (MsgspecError when it holds anything else)."""
        if not self.learnt:
            self.learnt = True
            with suppress(msgspec.MsgspecError):  # a blank or odd first line: learn later
                self._widen([_PLAIN.decode(_first_line(block))])
        if self.decoder is None:
            return _PLAIN.decode_lines(block)
        try:
            rows = self.decoder.decode_lines(block)
        except msgspec.MsgspecError:
            rows = _PLAIN.decode_lines(block)  # raises for a block that is not all cases
            self._widen(rows)
            return rows
        if self.share_digests:
            _share_text_digests(rows)
        return rows

    def decode_line(self, line: bytes) -> CaseRow:
        """Decode one case line (a line split between two chunks), as `decode` would;
        the plain decoder's error where it is not one."""
        if self.decoder is not None:
            with suppress(msgspec.MsgspecError):
                return self.decoder.decode(line)
        return _PLAIN.decode(line)

    def _widen(self, rows: Sequence[object], pins: Sequence[str] = PINS) -> None:
        """Add the values `rows` carry; past MAX_VALUES a pin, stop sharing."""
        if self.off:
            return
        for known, pin in zip(self.values, PINS, strict=True):
            if pin in pins:
                known.update(v for v in set(map(attrgetter(pin), rows)) if isinstance(v, str))
        if max(map(len, self.values)) > MAX_VALUES:
            self.off, self.decoder = True, None
        else:
            self.decoder = _decoder(tuple(tuple(sorted(v)) for v in self.values))


def _first_line(block: memoryview) -> bytes:
    end = bytes(block[:65536]).find(b"\n")
    return bytes(block[: end + 1] if end >= 0 else block).split(b"\n", 1)[0]


def _share_text_digests(rows: list[CaseRow]) -> None:
    """Point each equal text digest at the completion digest's string (frees a copy).
    A plain loop: measured faster than the C-level map/compress/setattr chain here."""
    for row in rows:
        digest = row.completion_digest
        if row.text_digest == digest:
            row.text_digest = digest
