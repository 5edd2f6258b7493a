"""The one error type every command turns into exit 3 and a single line."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """An input file is unreadable or invalid.

    Carries the file, the 1-based line where there is one, and what is wrong, so the
    command line can print exactly one line and exit 3 without a traceback.
    """

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.message = message
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"
