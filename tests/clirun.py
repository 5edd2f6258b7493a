"""Running the real command line in tests: in-process (fast) or as a subprocess."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest

from evalpin.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def cli_process(*args: str, cwd=None, env=None, timeout: float = 120) -> Result:
    done = subprocess.run(
        [sys.executable, "-m", "evalpin", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)
