"""The `command` provider: a local program answers one JSON request per process.

The program may run model-written code, so it gets the parent's environment minus anything
that looks like a secret, runs in its own process group (the whole group is killed on
timeout, so a forked helper cannot outlive the case), and starts in the slots file's folder
so that `argv: [python, agents/solve.py]` means the same wherever evalpin is run from.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.reasons import PROVIDER_ERROR
from evalpin.core.records import Completion, CompletionRequest, ToolCall
from evalpin.run.slots.base import Slot, SlotError
from evalpin.run.slots.config import Entry, SlotConfig


@dataclass(frozen=True, kw_only=True)
class CommandConfig(SlotConfig):
    """A local program that answers one JSON request on stdin; runs in `cwd`."""

    provider: ClassVar[str] = "command"
    keys: ClassVar[frozenset[str]] = frozenset({"argv", "timeout_s"})
    argv: tuple[str, ...]
    cwd: Path
    timeout_s: float = 60.0

    @classmethod
    def parse(cls, entry: Entry) -> Self:
        argv = entry.entry.get("argv")
        if (
            not isinstance(argv, list)
            or not argv
            or not all(isinstance(a, str) and a for a in argv)
        ):
            raise entry.fail("'argv' must be a non-empty list of non-empty strings")
        return cls(
            label=entry.label,
            source=entry.path,
            argv=tuple(argv),
            cwd=entry.base,
            timeout_s=entry.number("timeout_s", cls.timeout_s),
        )

    def public_settings(self) -> dict[str, Any]:
        return {"provider": self.provider, "argv": list(self.argv), "timeout_s": self.timeout_s}

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


class _Output(msgspec.Struct):
    """What the program must print: the replay line's shape, `text` required."""

    text: str
    tools: list[ToolCall] = []
    files: dict[str, str] = {}
    model: str | None = None


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
            try:
                out, err = proc.communicate(msgspec.json.encode(request), timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                detail = f"no answer within {timeout:g}s; process group killed"
                raise SlotError(PROVIDER_ERROR("timeout"), detail) from None
        if proc.returncode != 0:
            detail = f"exit status {proc.returncode}{_stderr_tail(err)}"
            raise SlotError(PROVIDER_ERROR("command_failed"), detail)
        try:
            answer = msgspec.json.decode(out, type=_Output)
        except msgspec.DecodeError as exc:
            detail = f"stdout must be one JSON completion (log to stderr): {exc}"
            raise SlotError(PROVIDER_ERROR("bad_output"), detail) from None
        return Completion(
            text=answer.text, tools=answer.tools, files=answer.files, model=answer.model
        )

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


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # ProcessLookupError: the whole group exited between the timeout and the kill.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _stderr_tail(err: bytes) -> str:
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return f": {lines[-1][-_STDERR_CHARS:]}" if lines else ""
