"""What a reader is given: the file to sniff (`Probe`, each part read only when asked)
and the choices a foreign log leaves open (`ReadOptions`). Every reader module imports
these from here, never from the table in `formats/__init__.py` that imports them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.bounded import (
    MAX_DOCUMENT_BYTES,
    MAX_LINE_BYTES,
    TOO_DEEP,
    too_big,
)
from evalpin.core.errors import InputError
from evalpin.core.files import open_input

ZIP_MAGIC = b"PK\x03\x04"
_ANY = msgspec.json.Decoder()
_KEYS = msgspec.json.Decoder(dict[str, msgspec.Raw])


@dataclass(frozen=True)
class ReadOptions:
    """Choices a foreign log leaves open: which score decides pass/fail.

    `scorer` (inspect-ai): a scorer's name, or `NAME.KEY` for one value of a scorer whose
    score is a dict; None: the first the log lists (and its first key).
    `metric` and `filter` (lm-eval): each entry is `NAME` (for every task that has it)
    or `TASK=NAME` (for that task); a task named by neither keeps its first metric, and
    its first filter. Given as a string, a list or None; kept as a tuple.
    `prompt` and `provider` (promptfoo): which of a file's (prompt, provider) runs to
    read, by label or id; needed where the file holds several.
    """

    scorer: str | None = None
    metric: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()
    prompt: str | None = None
    provider: str | None = None

    def __post_init__(self) -> None:
        for name in ("metric", "filter"):
            value = getattr(self, name)
            if value is None:
                value = ()
            elif isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(str(v) for v in value))

    def choices(self, name: str) -> tuple[list[str], dict[str, str]]:
        """(plain names, {task: name}) of `metric` or `filter`."""
        plain: list[str] = []
        per_task: dict[str, str] = {}
        for entry in getattr(self, name):
            task, eq, value = entry.partition("=")
            if eq:
                per_task[task.strip()] = value.strip()
            else:
                plain.append(entry.strip())
        return plain, per_task

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (a child process's request); `from_json` reads it back."""
        return {
            "scorer": self.scorer,
            "metric": list(self.metric),
            "filter": list(self.filter),
            "prompt": self.prompt,
            "provider": self.provider,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReadOptions:
        return cls(
            data.get("scorer"),
            data.get("metric"),
            data.get("filter"),
            data.get("prompt"),
            data.get("provider"),
        )


class SeveralRuns(InputError):
    """A file holding several runs (promptfoo's (prompt, provider) pairs) read without a
    choice of one: the message lists them, `choices` are the options that read each
    (history reads them all)."""

    def __init__(self, path: str | Path, message: str, choices: list[ReadOptions]) -> None:
        super().__init__(path, message)
        self.choices = choices


class Probe:
    """What sniffing may look at, each part read only when a sniffer asks for it, each
    bounded (`core/bounded.py`): a first line over `MAX_LINE_BYTES`, a document over
    `MAX_DOCUMENT_BYTES` or JSON nested too deeply is InputError, never a sniff."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.is_dir = self.path.is_dir()
        self.first_lineno = 1  # the line `first_line` is on

    @cached_property
    def head(self) -> bytes:
        if self.is_dir:
            return b""
        with open_input(self.path) as fh:
            return fh.read(4)

    @cached_property
    def first_line(self) -> bytes:
        """The first non-blank line; InputError on an empty or all-blank file."""
        with open_input(self.path) as fh:
            line = fh.readline(MAX_LINE_BYTES + 1)
            while line and line.isspace():
                self.first_lineno += line.endswith(b"\n")
                line = fh.readline(MAX_LINE_BYTES + 1)
            if not line:
                raise InputError(
                    self.path, "empty file" if fh.tell() == 0 else "file holds only whitespace"
                )
        if len(line) > MAX_LINE_BYTES:
            msg = f"line longer than {MAX_LINE_BYTES:,} bytes"
            raise InputError(self.path, msg, self.first_lineno)
        return line

    @cached_property
    def first(self) -> Any:
        """The first line decoded as JSON, or None when it is not JSON."""
        try:
            return _ANY.decode(self.first_line)
        except msgspec.DecodeError:
            return None
        except RecursionError:
            raise InputError(self.path, TOO_DEEP, self.first_lineno) from None

    @cached_property
    def data(self) -> bytes:
        with open_input(self.path) as fh:
            size = os.fstat(fh.fileno()).st_size  # refused from its size, before it is read
            data = fh.read(MAX_DOCUMENT_BYTES + 1) if size <= MAX_DOCUMENT_BYTES else b""
        if size > MAX_DOCUMENT_BYTES or len(data) > MAX_DOCUMENT_BYTES:
            raise InputError(self.path, too_big(max(size, len(data)), MAX_DOCUMENT_BYTES))
        return data

    @cached_property
    def keys(self) -> frozenset[str]:
        """Top-level keys of a JSON document (of its first line, when that is a whole
        object: a document written on one line, or the first record of JSONL)."""
        if isinstance(self.first, dict):
            return frozenset(self.first)
        try:
            return frozenset(_KEYS.decode(self.data))
        except msgspec.MsgspecError:
            return frozenset()
        except RecursionError:  # skipping the values recurses too
            raise InputError(self.path, TOO_DEEP) from None
