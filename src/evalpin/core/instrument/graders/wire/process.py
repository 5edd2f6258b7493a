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
import os

from .protocol import ProtocolError

_NEVER = (b"PYTEST_", b"EVALPIN_")
# The wire's own reads and moves of the working folder: never what a test patched
# (`monkeypatch.setattr(os, "getcwd", spy)` counts the candidate's calls, not these).
getcwd, _chdir = os.getcwd, os.chdir


def environ(last: dict | None = None) -> dict:
    """The process environment as bytes, `last` itself when it has not changed: one C
    comparison of `os.environ`'s own mapping, cheap enough for every message."""
    data = getattr(os.environ, "_data", None)
    if type(data) is not dict:
        data = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    return last if last is not None and data == last else dict(data)


def changes(into: dict, env: dict, cwd: str) -> tuple[dict, str]:
    """Put into `into` what changed since `env` and `cwd` (as `environ()` and
    `os.getcwd()` were when last in step); return them as they are now."""
    now = environ(env)
    if now is not env:
        changed = {k: v for k, v in now.items() if env.get(k) != v and not k.startswith(_NEVER)}
        if changed:
            into["set"] = {os.fsdecode(k): os.fsdecode(v) for k, v in changed.items()}
        removed = [os.fsdecode(k) for k in env if k not in now and not k.startswith(_NEVER)]
        if removed:
            into["unset"] = removed
    try:
        here = getcwd()
    except OSError:  # the folder was removed: nothing to follow
        here = cwd
    if here != cwd:
        into["cwd"] = here
    return now, here


def apply(data, env: dict, cwd: str) -> tuple[dict, str]:
    """Apply what the other side changed (a message's `env`); return the state now in
    step (`env` and `cwd` with the change)."""
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
    return env, cwd
