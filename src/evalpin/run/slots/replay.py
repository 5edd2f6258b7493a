"""The `replay` provider: completions recorded earlier, answered from memory.

The file is read and decoded once when the slot opens. A broken line (not UTF-8, not JSON,
wrong shape, or a duplicate key) does not make the whole recording unusable: it is skipped
and reported in `warnings` with its line number, and the cases it would have answered
become `no_completion`, which the run records. A missing or empty file is an `InputError`.

A line may hold a whole tool conversation as `turns` (what a live run's case record
keeps), so a recorded loop replays to the same grade; its `text` and `tools` are then
derived from the turns (core/conversation.py), and a line whose own `text` or `tools`
contradict its turns is skipped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Self

import msgspec

from evalpin.core.conversation import settle
from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8
from evalpin.core.records import Completion, CompletionRequest, ToolCall, Turn
from evalpin.run.slots.base import NO_COMPLETION, Slot, SlotError
from evalpin.run.slots.config import Entry, SlotConfig, read_input


@dataclass(frozen=True, kw_only=True)
class ReplayConfig(SlotConfig):
    """Recorded completions; `path_text` is the path as written, `path` as resolved."""

    provider: ClassVar[str] = "replay"
    keys: ClassVar[frozenset[str]] = frozenset({"path"})
    threads_help: ClassVar[bool] = False  # answered from memory: threads only cost
    path: Path
    path_text: str

    @classmethod
    def parse(cls, entry: Entry) -> Self:
        rel = entry.text("path")
        return cls(label=entry.label, source=entry.path, path=entry.base / rel, path_text=rel)

    @classmethod
    def parse_inline(cls, label: str, target: str) -> Self | None:
        if not target:
            return None
        return cls(label=label, source=None, path=Path(target).absolute(), path_text=target)

    @classmethod
    def inline_spec(cls, label: str, settings: dict[str, Any]) -> str | None:
        path = settings.get("path")
        return f"{label}={cls.provider}:{path}" if path else None

    def public_settings(self) -> dict[str, Any]:
        # The hash pins the recording: a re-recorded file under the same label shows up.
        digest = hashlib.sha256(read_input(self.path, "replay file")).hexdigest()
        return {"provider": self.provider, "path": self.path_text, "sha256": digest}

    def settings_digest(self) -> None:
        """None: a recording stands in for whatever made it (a live run replays to the same
        grade and compares with it); the file is pinned by `sha256` in the header, and its
        answers by their reported model and completion digests."""
        return None

    def open(self) -> ReplaySlot:
        return ReplaySlot(self)


# (case_id, seed or None for "every seed", repair loop)
_Key = tuple[str, int | None, int]


class _Line(msgspec.Struct):
    """One recorded completion; `loop` numbers repair rounds (0 = the first answer)."""

    case_id: str
    text: str | None = None
    seed: int | None = None
    loop: Annotated[int, msgspec.Meta(ge=0)] = 0
    tools: list[ToolCall] = []
    files: dict[str, str] = {}
    model: str | None = None
    turns: list[Turn] = []


class ReplaySlot(Slot):
    """Answers (case, seed, loop) from the file: an exact seed beats a seedless line."""

    config: ReplayConfig

    def __init__(self, config: ReplayConfig) -> None:
        super().__init__(config)
        data = read_input(config.path, "replay file")
        if not data.strip():
            raise InputError(config.path, "empty replay file")
        self._answers: dict[_Key, Completion] = {}
        first_seen: dict[_Key, int] = {}
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                line = _decode(raw)
            except ValueError as exc:
                self._skip(lineno, str(exc))
                continue
            key = (line.case_id, line.seed, line.loop)
            if key in first_seen:
                self._skip(lineno, f"duplicate of line {first_seen[key]}, which is kept")
                continue
            first_seen[key] = lineno
            self._answers[key] = settle(
                Completion(
                    text=line.text or "",
                    tools=line.tools,
                    files=line.files,
                    model=line.model,
                    turns=line.turns,
                )
            )

    def _skip(self, lineno: int, why: str) -> None:
        self.warnings.append(f"{self.config.path_text}:{lineno}: line skipped: {why}")

    def close(self) -> None:
        """Drop the recording; a big replay file should not outlive the run."""
        self._answers.clear()

    def complete(self, request: CompletionRequest) -> Completion:
        # A repair round re-asks with the failing tail as one more user message.
        loop = max(0, sum(m.role == "user" for m in request.messages) - 1)
        for seed in (request.seed, None):
            answer = self._answers.get((request.case_id, seed, loop))
            if answer is not None:
                return answer
        where = f"case {request.case_id!r} seed {request.seed}" + (f" loop {loop}" if loop else "")
        raise SlotError(NO_COMPLETION, f"no recorded line for {where}")


def _decode(raw: bytes) -> _Line:
    """One line, or ValueError saying what is wrong with it."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        raise ValueError(not_utf8(raw, bad)) from None
    try:
        line = msgspec.json.decode(raw, type=_Line)
    except msgspec.ValidationError as exc:
        raise ValueError(f"wrong shape: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if line.text is None and not line.turns:
        raise ValueError("wrong shape: needs 'text' (or 'turns')")
    try:
        settle(Completion(text=line.text or "", tools=line.tools, turns=line.turns))
    except ValueError as exc:
        raise ValueError(f"contradicts itself: {exc}") from None
    return line
