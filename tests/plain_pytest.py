"""Plain `python -m pytest`, once per case folder, from one interpreter per corpus.

The corpora prove each case passes (or, for an attack, fools) plain pytest in-process.
A fresh `python -m pytest` per case spent most of its time starting Python and loading
pytest and its plugins, about 120 times a suite. `run_sessions` starts this file once:
it loads pytest and every installed plugin, then forks one child per case, which goes
into the case's folder (sys.path and argv as `python -m pytest` sets them) and runs
`pytest.main` there. Each case is still a session of its own in a process of its own,
so nothing one case does (to modules, builtins, the environment) reaches another.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 120.0  # one session's; a hung case is killed and reported, never waited on
AT_ONCE = 2  # sessions at a time (the machine's two cores)


@dataclass(frozen=True)
class Plain:
    returncode: int
    stdout: str  # and stderr, interleaved as written


def run_sessions(sessions: dict[str, tuple[Path, list[str]]]) -> dict[str, Plain]:
    """Each name's pytest arguments run as plain pytest in its folder."""
    if not sessions:
        return {}
    jobs = [{"name": n, "cwd": str(cwd), "args": args} for n, (cwd, args) in sessions.items()]
    done = subprocess.run(
        [sys.executable, __file__],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S * len(jobs),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = {name: Plain(code, text) for name, (code, text) in json.loads(done.stdout).items()}
    assert set(results) == set(sessions), "a session was lost"
    return results


def _preload() -> None:
    """What every session would import first: pytest, its own plugins, and every
    installed plugin (the entry points a session loads)."""
    import importlib
    import importlib.metadata

    import pytest  # noqa: F401
    from _pytest.config import default_plugins

    for name in default_plugins:
        importlib.import_module(f"_pytest.{name}")
    for entry in importlib.metadata.entry_points(group="pytest11"):
        entry.load()
    gc.freeze()  # what is loaded stays: a session's collections (five at its end) skip it


def _child(job: dict, out: Path) -> None:
    import pytest

    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.chdir(job["cwd"])
    sys.path[0] = job["cwd"]  # `python -m` puts the working folder first
    sys.argv = [str(Path(pytest.__file__).with_name("__main__.py")), *job["args"]]
    # The plugins were imported before the session could mark them for its assertion
    # rewriting: it says so, once per plugin, in a warning that is noise here.
    args = ["-W", "ignore::pytest.PytestAssertRewriteWarning", *job["args"]]
    try:
        code = int(pytest.main(args))
    except BaseException:  # a case that breaks pytest itself is that case's failure
        import traceback

        traceback.print_exc()
        code = 99
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _main() -> None:
    jobs = json.loads(sys.stdin.read())
    _preload()
    sys.stdout.flush()
    results: dict[str, tuple[int, str]] = {}
    running: dict[int, tuple[dict, Path, float]] = {}
    pending = list(jobs)
    while pending or running:
        while pending and len(running) < AT_ONCE:
            job = pending.pop(0)
            out = Path(job["cwd"]).parent / f".{Path(job['cwd']).name}.pytest-out"
            pid = os.fork()
            if pid == 0:
                _child(job, out)
            running[pid] = (job, out, time.monotonic() + TIMEOUT_S)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for other, (_, _, deadline) in running.items():
                if time.monotonic() > deadline:
                    os.kill(other, 9)
            time.sleep(0.005)
            continue
        job, out, _ = running.pop(pid)
        text = out.read_text(errors="replace")
        out.unlink()
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            text += f"\n[plain_pytest] killed by signal {-code} (timeout {TIMEOUT_S} s?)"
        results[job["name"]] = (code, text)
    sys.stdout.write(json.dumps(results))


if __name__ == "__main__":
    _main()
