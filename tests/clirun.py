"""Running the real command line in tests: in-process (fast) or as a subprocess."""

from __future__ import annotations

import json
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


# One child imports evalpin once, then forks a process per command (its own output, an
# alarm as its deadline, `cap` bytes of address space if given): many commands that each
# need a process of their own (a hang or a memory blow-up must stay theirs) without an
# interpreter's start-up each.
_FORKED = """
import json, os, resource, signal, sys, tempfile, traceback
cap, deadline = int(sys.argv[1]), int(sys.argv[2])
if cap:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from evalpin.cli import main
results = []
for args in json.loads(sys.stdin.read()):
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        signal.alarm(deadline)
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    said = []
    for f in (out, err):
        f.seek(0)
        said.append(f.read().decode("utf-8", "replace"))
    results.append([code, *said])
print(json.dumps(results))
"""


def cli_forked(
    commands: list[tuple[str, ...]], *, cap: int = 0, timeout: int = 60, env=None
) -> list[Result]:
    """Each command's result, as `cli_process` gives it; a command still running after
    `timeout` seconds is killed by its alarm (code -14)."""
    done = subprocess.run(
        [sys.executable, "-c", _FORKED, str(cap), str(timeout)],
        input=json.dumps([list(args) for args in commands]),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout * len(commands) + 60,
        check=True,
    )
    return [Result(*result) for result in json.loads(done.stdout)]
