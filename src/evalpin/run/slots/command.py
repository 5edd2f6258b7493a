"""The `command` provider: a local program answers one JSON request per process.

The program may run model-written code, so it gets the parent's environment minus anything
that looks like a secret, runs in its own process group (the whole group is killed on
timeout, so a forked helper cannot outlive the case), and starts in the slots file's folder
so that `argv: [python, agents/solve.py]` means the same wherever evalpin is run from.

The request carries the case's `tool_results` and `max_turns`, so a program can hold
its own tool conversation and answer with `turns`. Its stdout is read up to
`max_output_bytes` (8 MiB by default): past that the process group is killed and the case
is `provider_error:oversized`, so a runaway program cannot exhaust evalpin's memory.

The slot's identity (its settings digest) covers the code it runs: the sha256 of every
file its argv names that exists, and of every file matched by its `code:` paths or globs.
Editing the agent under the same label is then a re-pointed slot, not a regression.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import msgspec

from evalpin.core.bounded import keys_once
from evalpin.core.errors import InputError
from evalpin.core.instrument.conversation import recorded
from evalpin.core.reasons import PROVIDER_ERROR
from evalpin.core.records import Completion, CompletionRequest, ToolCall, Turn
from evalpin.core.schema import struct_problem
from evalpin.run.slots.base import Slot, SlotError
from evalpin.run.slots.config import Entry, SlotConfig


@dataclass(frozen=True, kw_only=True)
class CommandConfig(SlotConfig):
    """A local program that answers one JSON request on stdin; runs in `cwd`."""

    provider: ClassVar[str] = "command"
    keys: ClassVar[frozenset[str]] = frozenset({"argv", "timeout_s"})
    keys |= {"code", "max_output_bytes"}
    argv: tuple[str, ...]
    cwd: Path
    timeout_s: float = 60.0
    # Paths or globs (relative to the slots folder) of the code the program runs.
    code: tuple[str, ...] = ()
    max_output_bytes: int = 8 << 20

    @classmethod
    def parse(cls, entry: Entry) -> Self:
        argv = entry.entry.get("argv")
        if (
            not isinstance(argv, list)
            or not argv
            or not all(isinstance(a, str) and a for a in argv)
        ):
            raise entry.fail("'argv' must be a non-empty list of non-empty strings")
        code = entry.entry.get("code", [])
        if not isinstance(code, list) or not all(isinstance(c, str) and c for c in code):
            raise entry.fail("'code' must be a list of paths or globs")
        config = cls(
            label=entry.label,
            source=entry.path,
            argv=tuple(argv),
            cwd=entry.base,
            timeout_s=entry.number("timeout_s", cls.timeout_s),
            code=tuple(code),
            max_output_bytes=entry.count("max_output_bytes", cls.max_output_bytes),
        )
        for pattern in code:
            if not config._matches(pattern):
                raise entry.fail(f"'code' entry {pattern!r} matches no file")
        return config

    def public_settings(self) -> dict[str, Any]:
        settings = {"provider": self.provider, "argv": list(self.argv), "timeout_s": self.timeout_s}
        code = self.code_hashes()
        return settings | {"code": code} if code else settings

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "argv": list(self.argv), "code": self.code_hashes()}

    def code_hashes(self) -> dict[str, str]:
        """sha256 of every file argv names that exists and every file `code:` matches,
        keyed by the path as written (relative to the slots folder)."""
        named: dict[str, Path] = {}
        for arg in self.argv:
            path = self.cwd / arg
            if path.is_file():
                named[arg] = path
        for pattern in self.code:
            named |= self._matches(pattern)
        return {name: _sha256(path) for name, path in sorted(named.items())}

    def _matches(self, pattern: str) -> dict[str, Path]:
        """The files a `code:` entry names: a file, every file under a folder (compiled
        caches aside), or a glob (`**` reaches into subfolders)."""
        base = self.cwd / pattern
        if base.is_file():
            return {pattern: base}
        if base.is_dir():
            found = base.rglob("*")
        elif Path(pattern).is_absolute():
            found = Path(Path(pattern).anchor).glob(str(Path(pattern).relative_to("/")))
        else:
            found = self.cwd.glob(pattern)
        return {
            _shown(path, self.cwd): path
            for path in found
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
        }

    def open(self) -> CommandSlot:
        return CommandSlot(self)


_SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_STDERR_CHARS = 200


def scrubbed_env(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without names that look like secrets (and every OPENAI_* variable)."""
    return {
        name: value
        for name, value in environ.items()
        if not name.upper().startswith("OPENAI_")
        and not any(marker in name.upper() for marker in _SECRET_MARKERS)
    }


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


def _shown(path: Path, base: Path) -> str:
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)


class _Output(msgspec.Struct, forbid_unknown_fields=True):
    """What the program must print: the replay line's shape, `text` required unless
    the answer is a tool conversation (`turns`)."""

    text: str | None = None
    tools: list[ToolCall] = []
    files: dict[str, str] = {}
    model: str | None = None
    turns: list[Turn] = []


class CommandSlot(Slot):
    """Runs `argv` once per request; thread-safe because nothing is shared between calls."""

    config: CommandConfig

    def __init__(self, config: CommandConfig) -> None:
        super().__init__(config)
        self._env = scrubbed_env(os.environ)
        self._argv = [_program(config, self._env.get("PATH")), *config.argv[1:]]

    def complete(self, request: CompletionRequest) -> Completion:
        timeout = self.config.timeout_s
        try:
            proc = subprocess.Popen(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.config.cwd,
                env=self._env,
                start_new_session=True,
            )
        except OSError as exc:
            detail = f"cannot start {self.config.argv[0]}: {exc.strerror or exc}"
            raise SlotError(PROVIDER_ERROR("command_failed"), detail) from None
        # Leaving the `with` closes the pipes and reaps the process, also after a kill.
        with proc:
            out, err = _exchange(proc, msgspec.json.encode(request), timeout, self.config)
        if proc.returncode != 0:
            detail = f"exit status {proc.returncode}{_stderr_tail(err)}"
            raise SlotError(PROVIDER_ERROR("command_failed"), detail)
        try:
            answer = msgspec.json.decode(out, type=_Output)
            keys_once(out, "stdout")
            if answer.text is None and not answer.turns:
                raise ValueError("needs 'text' (or 'turns')")
            return recorded(answer)
        except (msgspec.DecodeError, ValueError, RecursionError, InputError) as exc:
            said = struct_problem(str(exc), _Output) if isinstance(exc, ValueError) else exc
            detail = f"stdout must be one JSON completion (log to stderr): {said}"
            raise SlotError(PROVIDER_ERROR("bad_output"), detail) from None

    def close(self) -> None:
        """Nothing to release: each call's process is reaped before `complete` returns."""


def _program(config: CommandConfig, path_var: str | None) -> str:
    """argv[0] made absolute: a path is relative to the slots folder, a bare name is on PATH."""
    program = config.argv[0]
    if "/" in program:
        found = config.cwd / program
        if not found.is_file():
            raise InputError(config.where, f"slot {config.label!r}: no program {program!r}")
        return str(found)
    on_path = shutil.which(program, path=path_var)
    if on_path is None:
        raise InputError(config.where, f"slot {config.label!r}: {program!r} is not on PATH")
    return on_path


_STDERR_KEEP = 64 << 10


def _exchange(
    proc: subprocess.Popen[bytes], data: bytes, timeout: float, config: CommandConfig
) -> tuple[bytes, bytes]:
    """Write the request, read stdout (at most `max_output_bytes`) and the tail of
    stderr, and wait; the process group is killed on timeout or oversized output."""
    cap = config.max_output_bytes
    out, err = bytearray(), bytearray()
    oversized = threading.Event()

    def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError):  # the program may exit without reading
            proc.stdin.write(data)
            proc.stdin.close()

    def drain_out() -> None:
        assert proc.stdout is not None
        while chunk := proc.stdout.read1(1 << 16):
            out.extend(chunk)
            if len(out) > cap:
                oversized.set()
                _kill_group(proc)
                return

    def drain_err() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read1(1 << 16):
            err.extend(chunk)
            del err[:-_STDERR_KEEP]

    threads = [threading.Thread(target=f, daemon=True) for f in (feed, drain_out, drain_err)]
    for thread in threads:
        thread.start()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        detail = f"no answer within {timeout:g}s; process group killed"
        raise SlotError(PROVIDER_ERROR("timeout"), detail) from None
    except BaseException:  # the run was interrupted: its answer would never be recorded
        _kill_group(proc)
        raise
    finally:
        for thread in threads:
            # A helper that left the process group may hold a pipe open: do not wait
            # on it forever.
            thread.join(timeout=5)
    if oversized.is_set():
        detail = f"stdout passed {cap:,} bytes; process group killed"
        raise SlotError(PROVIDER_ERROR("oversized"), detail)
    return bytes(out), bytes(err)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # ProcessLookupError: the whole group exited between the timeout and the kill.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _stderr_tail(err: bytes) -> str:
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return f": {lines[-1][-_STDERR_CHARS:]}" if lines else ""
