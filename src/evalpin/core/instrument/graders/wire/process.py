"""The process state both sides keep in step, as one process has one: its environment
variables and its working folder. Each message carries what its sender changed since
the last one (the test's `monkeypatch.setenv` or `chdir`, the candidate's
`os.environ[...] = ...` or `os.chdir`), and the receiver applies it before it goes on.
Both processes see one filesystem, so a folder is the same path on either side.

pytest's own variables (`PYTEST_CURRENT_TEST` names the running test, and its
parameters) and the grader's (`EVALPIN_*`) never cross, either way.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys

from .protocol import ProtocolError

_NEVER = (b"PYTEST_", b"EVALPIN_")
# The wire's own reads and moves of the working folder: never what a test patched
# (`monkeypatch.setattr(os, "getcwd", spy)` counts the candidate's calls, not these).
getcwd, _chdir = os.getcwd, os.chdir
_moves = 0  # moves of the working folder made through `follow_moves`'s functions


def follow_moves() -> None:
    """Count the process's moves of its working folder (`os.chdir`, `os.fchdir`, the
    `posix` module's own: `monkeypatch.chdir`, `contextlib.chdir` and the candidate's
    code all call these), so that a message reads the folder, a system call, only after
    one (read for every message, it cost each call of a chatty test two system calls of
    its own). Installed before the tests or the candidate are imported, so a name either
    imports is the counted one; a move made otherwise (C code calling chdir(2)) is not
    seen, and is not followed."""
    for name in ("chdir", "fchdir"):
        original = getattr(os, name, None)
        if original is None or getattr(original, "_evalpin_counted", False):
            continue

        @functools.wraps(original)
        def counted(*args, _original=original, **kwargs):
            global _moves
            try:
                return _original(*args, **kwargs)
            finally:
                _moves += 1

        counted._evalpin_counted = True
        setattr(os, name, counted)
        native = sys.modules.get(os.name)  # `posix`, which `os` takes them from
        if getattr(native, name, None) is original:
            setattr(native, name, counted)


def environ(last: dict | None = None) -> dict:
    """The process environment as bytes, `last` itself when it has not changed: one C
    comparison of `os.environ`'s own mapping, cheap enough for every message."""
    data = getattr(os.environ, "_data", None)
    if type(data) is not dict:
        data = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    return last if last is not None and data == last else dict(data)


def now() -> tuple[dict, str, int]:
    """The state one side keeps in step: the environment (`environ()`), the working
    folder, and the moves `follow_moves` had counted when it last read the folder."""
    return environ(), getcwd(), _moves


def changes(into: dict, last: tuple[dict, str, int]) -> tuple[dict, str, int]:
    """Put into `into` what changed since `last` (`now()` when last in step); return
    the state as it is now."""
    env, cwd, seen = last
    now = environ(env)
    if now is not env:
        changed = {k: v for k, v in now.items() if env.get(k) != v and not k.startswith(_NEVER)}
        if changed:
            into["set"] = {os.fsdecode(k): os.fsdecode(v) for k, v in changed.items()}
        removed = [os.fsdecode(k) for k in env if k not in now and not k.startswith(_NEVER)]
        if removed:
            into["unset"] = removed
    if seen == _moves:  # not moved since the last look: the folder is where it was
        return now, cwd, seen
    seen = _moves
    try:
        here = getcwd()
    except OSError:  # the folder was removed: nothing to follow
        here = cwd
    if here != cwd:
        into["cwd"] = here
    return now, here, seen


def apply(data, last: tuple[dict, str, int]) -> tuple[dict, str, int]:
    """Apply what the other side changed (a message's `env`) to the state `last` in
    step; return the state now in step."""
    env, cwd, seen = last
    if type(data) is not dict:
        raise ProtocolError("malformed environment")
    updates, removed = data.get("set") or {}, data.get("unset") or []
    if type(updates) is not dict or type(removed) is not list:
        raise ProtocolError("malformed environment")
    env = dict(env)
    for key, value in updates.items():
        if type(key) is not str or type(value) is not str:
            raise ProtocolError("malformed environment")
        if not os.fsencode(key).startswith(_NEVER):
            os.environ[key] = value
            env[os.fsencode(key)] = os.fsencode(value)
    for key in removed:
        if type(key) is str and not os.fsencode(key).startswith(_NEVER):
            os.environ.pop(key, None)
            env.pop(os.fsencode(key), None)
    if "TZ" in updates or "TZ" in removed:
        import time

        time.tzset()
    where = data.get("cwd")
    if type(where) is str:
        with contextlib.suppress(OSError, ValueError):
            _chdir(where)
            cwd = where
    return env, cwd, seen
