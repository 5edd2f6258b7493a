"""What `--resume` asks of an unfinished run file: whether anything that decides a grade
changed since its header was written, and, for `--retry-errors`, its error cases and
trailer taken out, every other line kept byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from evalpin.core.read.runfile import RunWriter
from evalpin.core.records import ERROR, RunHeader


def resume_conflicts(old: RunHeader, new: RunHeader) -> list[str]:
    """What changed since the header was written; any change refuses the resume."""
    out = []
    pairs = {
        "fixtures (dataset hash)": (old.fixtures.dataset_hash, new.fixtures.dataset_hash),
        "fixtures (envelope hash)": (old.fixtures.envelope_hash, new.fixtures.envelope_hash),
        "grader version": (old.grader_version, new.grader_version),
        "model slot": (old.model_slot, new.model_slot),
        "slot settings": (old.slot, new.slot),
        "controls": (old.controls, new.controls),
        "environment digest": (old.env_digest, new.env_digest),
    }
    for name, (was, now) in pairs.items():
        if was != now:
            out.append(f"{name}: {was!r} then, {now!r} now")
    return out


class _Line(msgspec.Struct):
    """What dropping error cases reads of a line."""

    record: str | None = None
    status: str | None = None


_LINE = msgspec.json.Decoder(_Line)


def drop_errors(writer: RunWriter, out: Path) -> int:
    """Take the error cases and the trailer out of a run file (the writer holds its lock),
    every other line kept byte for byte; the number of error cases taken out."""
    kept: list[bytes] = []
    dropped = 0
    with open(out, "rb") as fh:
        for line in fh:
            if b'"status"' in line or b'"summary"' in line:
                try:
                    parsed = _LINE.decode(line)
                except (msgspec.MsgspecError, RecursionError):
                    parsed = _Line()
                if parsed.record == "summary":
                    continue
                if parsed.record == "case" and parsed.status == ERROR:
                    dropped += 1
                    continue
            kept.append(line)
    if dropped:
        writer.rewrite(b"".join(kept))
    return dropped
