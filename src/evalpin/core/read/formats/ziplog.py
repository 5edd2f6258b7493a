"""Reading the members of a log zip defensively, fast.

The central directory is parsed by `zipfile`; the members' bytes are then cut from one
read of the file and inflated here, because inspect-ai writes zstd members (method 93)
that `zipfile` cannot open before Python 3.14, and because one buffer is much faster
than a file object per member. Every member is checked before anything is used: a name
that leaves the archive, a declared size over the cap, a body that inflates past its
declared size (a bomb), or a CRC that does not match is refused with one line.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path
from typing import NoReturn

from evalpin.core.bounded import MAX_DOCUMENT_BYTES, too_big
from evalpin.core.errors import InputError

MAX_MEMBER = 256 << 20  # one member, decompressed
MAX_TOTAL = 4 << 30  # the whole archive, decompressed
MAX_MEMBERS = 2_000_000  # a directory of millions of empty members is an attack too
STORED, DEFLATED, ZSTD = 0, 8, 93
_LOCAL = struct.Struct("<4s2B4HL2L2H")


def _safe_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return not (name.startswith(("/", "\\")) or ".." in parts or (len(name) > 1 and name[1] == ":"))


class LogZip:
    """A zip's checked member list and its bytes, for reading members by name."""

    def __init__(self, path: str | Path) -> None:
        import zipfile  # only zip logs need it (and its import is not free)

        self.path = path
        try:
            with zipfile.ZipFile(path) as zf:
                infos = zf.infolist()
            with open(path, "rb") as fh:
                # Read, not mapped: inspect rewrites a live log in place, and a mapping of
                # a file that shrinks under it kills the process (SIGBUS). Refused from
                # its size before it is read when over the cap.
                size = os.fstat(fh.fileno()).st_size
                if size > MAX_DOCUMENT_BYTES:
                    raise InputError(path, too_big(size, MAX_DOCUMENT_BYTES))
                self.data = fh.read()
        except (zipfile.BadZipFile, EOFError, ValueError) as exc:
            raise InputError(path, f"not a readable zip: {exc}") from None
        except OSError as exc:
            raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
        if len(infos) > MAX_MEMBERS:
            raise InputError(path, f"zip holds {len(infos)} members, over the {MAX_MEMBERS} cap")
        total = 0
        for info in infos:
            if not _safe_name(info.filename):
                raise InputError(path, f"zip member name leaves the archive: {info.filename!r}")
            if info.file_size > MAX_MEMBER:
                raise InputError(
                    path, f"zip member {info.filename!r} too large ({info.file_size} bytes)"
                )
            if info.compress_type not in (STORED, DEFLATED, ZSTD):
                raise InputError(
                    path,
                    f"zip member {info.filename!r}: compression {info.compress_type} not supported",
                )
            total += info.file_size
        if total > MAX_TOTAL:
            raise InputError(path, f"zip decompresses to {total} bytes, over the {MAX_TOTAL} cap")
        self.infos = {info.filename: info for info in infos}

    def close(self) -> None:
        self.data = b""

    def __enter__(self) -> LogZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def names(self) -> list[str]:
        return list(self.infos)

    def read(self, name: str) -> bytes:
        info = self.infos[name]
        start = info.header_offset
        head = self.data[start : start + _LOCAL.size]
        if len(head) < _LOCAL.size or head[:4] != b"PK\x03\x04":
            self._fail(name, "local header missing (truncated zip?)")
        fields = _LOCAL.unpack(head)
        begin = start + _LOCAL.size + fields[-2] + fields[-1]
        body = self.data[begin : begin + info.compress_size]
        if len(body) != info.compress_size:
            self._fail(name, "data cut short (truncated zip)")
        out = self._inflate(name, info.compress_type, body, info.file_size)
        if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
            self._fail(name, "size or CRC does not match its directory entry")
        return out

    def _inflate(self, name: str, method: int, body: bytes, size: int) -> bytes:
        """The member's bytes, inflating at most one byte past its declared size."""
        if method == STORED:
            return body
        if method == ZSTD:
            return self._unzstd(name, body, size)
        try:
            out = zlib.decompressobj(-15).decompress(body, size + 1)
        except zlib.error as exc:
            self._fail(name, f"cannot decompress: {exc}")
        if len(out) > size:
            self._fail(name, f"inflates past its declared {size} bytes (a zip bomb?)")
        return out

    def _unzstd(self, name: str, body: bytes, size: int) -> bytes:
        import zstandard  # only logs with zstd members need it

        parts: list[bytes] = []
        got = 0
        try:
            with zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True) as r:
                while got <= size and (chunk := r.read(size + 1 - got)):
                    parts.append(chunk)
                    got += len(chunk)
        except zstandard.ZstdError as exc:
            self._fail(name, f"cannot decompress: {exc}")
        if got > size:
            self._fail(name, f"inflates past its declared {size} bytes (a zip bomb?)")
        return b"".join(parts)

    def _fail(self, name: str, why: str) -> NoReturn:
        raise InputError(self.path, f"zip member {name!r}: {why}")
