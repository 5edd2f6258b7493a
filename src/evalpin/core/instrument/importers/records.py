"""Reading a benchmark's problem file: JSONL (one problem a line) or one JSON list,
gzipped or not (HumanEval ships `HumanEval.jsonl.gz`), bounded before and after
decompression, every problem a JSON object with its line (or list position)."""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalpin.core.bounded import MAX_FIXTURE_BYTES, loads, read_bounded, too_big
from evalpin.core.errors import InputError


@dataclass(frozen=True)
class Problem:
    """One problem of the file, and where it is (a line, or the position in a list)."""

    fields: dict[str, Any]
    line: int | None
    where: str

    def text(self, path: Path, *keys: str, required: bool = True) -> str:
        """The first of `keys` the problem has, as a string ("" when none and not
        required)."""
        for key in keys:
            if key in self.fields:
                value = self.fields[key]
                if isinstance(value, int) and not isinstance(value, bool):
                    return str(value)
                if not isinstance(value, str):
                    raise self.fail(path, f"'{key}' must be a string")
                return value
        if required:
            raise self.fail(path, f"no {' or '.join(repr(k) for k in keys)}")
        return ""

    def texts(self, path: Path, key: str) -> list[str]:
        value = self.fields.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(path, f"'{key}' must be a list of strings")
        return value

    def fail(self, path: Path, message: str) -> InputError:
        return InputError(path, f"{self.where}: {message}", self.line)


def read_problems(path: Path) -> tuple[list[Problem], bytes]:
    """The problems of a JSONL or JSON-list file (gzip told by its magic bytes), and the
    file's own bytes (for its sha256)."""
    raw = read_bounded(path, MAX_FIXTURE_BYTES, folder="is a directory, not a problem file")
    data = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
                data = unzipped.read(MAX_FIXTURE_BYTES + 1)
        except (OSError, EOFError) as exc:
            raise InputError(path, f"not a readable gzip file: {exc}") from None
        if len(data) > MAX_FIXTURE_BYTES:
            raise InputError(path, "decompressed, " + too_big(len(data), MAX_FIXTURE_BYTES))
    if not data.strip():
        raise InputError(path, "empty file")
    if data.lstrip()[:1] == b"[":
        return _listed(path, data), raw
    return _lines(path, data), raw


def _decode(path: Path, data: bytes, line: int | None) -> Any:
    """One JSON value, exactly (`bounded.loads`: no key twice, no NaN, bounded numbers)."""
    return loads(data, path, line)


def _lines(path: Path, data: bytes) -> list[Problem]:
    problems = []
    for n, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        value = _decode(path, raw, n)
        if not isinstance(value, dict):
            raise InputError(path, "a problem is a JSON object", n)
        problems.append(Problem(value, n, f"line {n}"))
    return problems


def _listed(path: Path, data: bytes) -> list[Problem]:
    value = _decode(path, data, None)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(path, "a JSON problem file is a list of objects")
    return [Problem(v, None, f"problem {n}") for n, v in enumerate(value, start=1)]
