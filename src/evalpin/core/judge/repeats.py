"""The repeat check of `history` (see `history.py` for what it holds): the digest first
seen per repeat key across the runs of one series under the same controls and slot
configuration, and the keys whose later digests differ. A group's first run is kept
packed into msgpack bytes a block of rows at a time, never as its rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import compress, count
from operator import attrgetter, ne
from typing import Any

import msgspec

from evalpin.core.columns import Columns
from evalpin.core.judge.series import HistoryRun, Key, RepeatConflict
from evalpin.core.judge.verdict import DIGEST, REPEAT_KEY
from evalpin.core.read.rundata import TRIPLE, RunFile
from evalpin.core.tiers import TIER_KEY

_BLOCK = 16_384  # rows a packed block of the reference holds
_PACK = msgspec.msgpack.Encoder()
_UNPACK = msgspec.msgpack.Decoder()
_KEY_FIELDS = ("case_id", "seed", *TRIPLE)  # REPEAT_KEY's, as columns


def _packed(columns: list[list[Any]]) -> list[bytes]:
    """Columns packed a block of rows at a time (msgpack of each column's slice)."""
    rows = len(columns[0])
    return [_PACK.encode([c[i : i + _BLOCK] for c in columns]) for i in range(0, rows, _BLOCK)]


@dataclass
class _Reference:
    """The first run of a repeat group, packed a block of rows at a time: its key
    columns and its digests as msgpack bytes, ~70 bytes a row where key tuples and
    their strings held ~400, so a reference never outweighs a run's rows.

    `first`: the digest first seen per key where the reference has none; every key's,
    once a run came in another order (or the reference repeats a key) and the
    reference had to be unpacked into it.
    """

    path: str
    keys: list[bytes]
    digests: list[bytes]
    unique: bool
    first: dict[tuple[Any, ...], tuple[str, str]] = field(default_factory=dict)
    unpacked: bool = False

    def unpack(self) -> None:
        """Every key's first digest into `first`, in row order (the first repeat wins)."""
        if self.unpacked:
            return
        for packed_keys, packed_digests in zip(self.keys, self.digests, strict=True):
            keys = zip(*_UNPACK.decode(packed_keys), strict=True)
            for key, digest in zip(keys, _UNPACK.decode(packed_digests)[0], strict=True):
                if digest is not None:
                    self.first.setdefault(key, (digest, self.path))
        self.unpacked = True


class RepeatCheck:
    """Across runs of one series under the same controls and slot configuration: the
    digest first seen per repeat key, and the keys whose later digests differ.

    Nightly runs list the same keys in the same order, so a run is compared with the
    group's first run block by block: equal packed bytes skip a block, and only the rows
    whose digests differ are looked at in Python. A run in another order falls back to
    a dict of every key.
    """

    def __init__(self) -> None:
        self._refs: dict[tuple[Key, str], _Reference] = {}
        self.conflicts: dict[Key, dict[tuple[Any, ...], RepeatConflict]] = {}

    def add(self, point: HistoryRun, run: RunFile) -> None:
        controls = {k: v for k, v in point.controls.items() if k != "seeds"}
        slot = {k: v for k, v in point.slot.items() if k != TIER_KEY}
        request = json.dumps([controls, slot], sort_keys=True, default=str)
        path, rows = point.path, run.rows
        keys = _packed([list(map(attrgetter(k), rows)) for k in _KEY_FIELDS])
        digests = list(map(DIGEST, rows))
        packed = _packed([digests])
        found = self.conflicts.setdefault(point.key, {})
        ref = self._refs.get(group := (point.key, request))
        if ref is None:
            unique = Columns(rows).unique_keys
            self._refs[group] = ref = _Reference(path, keys, packed, unique)
            if not unique:
                ref.unpack()  # its own repeats decide which digest came first
            return  # a run's repeats of its own keys are the verdict's to flag
        if ref.unique and keys == ref.keys:
            for b, (mine, theirs) in enumerate(zip(packed, ref.digests, strict=True)):
                if mine == theirs:
                    continue
                start = b * _BLOCK
                before = _UNPACK.decode(theirs)[0]
                for j in compress(count(), map(ne, digests[start : start + _BLOCK], before)):
                    i = start + j
                    self._check(found, ref, REPEAT_KEY(rows[i]), digests[i], path, before[j])
            return
        ref.unpack()
        for key, digest in zip(map(REPEAT_KEY, rows), digests, strict=True):
            self._check(found, ref, key, digest, path, None)

    @staticmethod
    def _check(
        found: dict[tuple[Any, ...], RepeatConflict],
        ref: _Reference,
        key: tuple[Any, ...],
        digest: str | None,
        path: str,
        before: str | None,
    ) -> None:
        """One row against the digest first seen for its key (`before`: the
        reference's, at the same place in a run of the same order)."""
        if digest is None:
            return  # no completion: no evidence either way
        seen = (
            (before, ref.path) if before is not None else ref.first.setdefault(key, (digest, path))
        )
        if seen[0] == digest or seen[1] == path:
            return  # reproduced, or a repeat within this run (the verdict's to flag)
        if key in found:
            found[key].runs_differing += 1
        else:
            found[key] = RepeatConflict(key[0], key[1], seen[1], seen[0], path, digest)
