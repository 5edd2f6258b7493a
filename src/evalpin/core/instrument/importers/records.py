"""Reading a benchmark's problem file: JSONL (one problem a line) or one JSON list,
gzipped or not (HumanEval ships `HumanEval.jsonl.gz`), every problem a JSON object with
its line (or list position).

Bounded before any work: a regular file only (`read_bounded`: never a FIFO or a link to
a device), in bytes before and after decompression, and in what decoding would build,
counted from the bytes first: at most `MAX_PROBLEMS` problems and `MAX_CONTAINERS`
objects and lists in all (a file of empty objects would otherwise cost a hundred times
its size in memory)."""

from __future__ import annotations

import gzip
import io
import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from evalpin.core.bounded import MAX_FIXTURE_BYTES, json_containers, loads, read_bounded, too_big
from evalpin.core.errors import InputError

MAX_PROBLEMS = 20_000  # HumanEval 164, MBPP 974, BigCodeBench 1,140, APPS 10,000
MAX_CONTAINERS = 2_000_000  # objects and lists in all (HumanEval+'s inputs included)
_CONTENT_LINE = re.compile(rb"^[ \t\r\f\v]*[^\s]", re.M)


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
    _check_size(path, data)
    if data.lstrip()[:1] == b"[":
        return _listed(path, data), raw
    return _lines(path, data), raw


def _check_size(path: Path, data: bytes) -> None:
    """InputError when decoding `data` would build more than the caps allow, told from
    its bytes alone (each count in C, or one match at a time)."""
    if data.count(b"\n") >= MAX_PROBLEMS and data.lstrip()[:1] != b"[":
        lines = _CONTENT_LINE.finditer(data)
        if next(islice(lines, MAX_PROBLEMS, None), None) is not None:
            msg = f"more than {MAX_PROBLEMS:,} problems (lines), over the limit"
            raise InputError(path, msg)
    containers = json_containers(data)
    if containers > MAX_CONTAINERS:
        msg = f"{containers:,} JSON objects and lists, over the {MAX_CONTAINERS:,} limit"
        raise InputError(path, msg)


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
    if len(value) > MAX_PROBLEMS:
        raise InputError(path, f"{len(value):,} problems, over the {MAX_PROBLEMS:,}-problem limit")
    return [Problem(v, None, f"problem {n}") for n, v in enumerate(value, start=1)]
