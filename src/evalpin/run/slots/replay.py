"""The `replay` provider: completions recorded earlier, answered from memory.

The file is read and decoded once when the slot opens. A broken line (not UTF-8, not JSON,
wrong shape, or a duplicate key) does not make the whole recording unusable: it is skipped
and reported in `warnings` with its line number, and the cases it would have answered
become `no_completion`, which the run records. A missing or empty file is an `InputError`.

A plain line is closed (core/schema.py): a key it does not have is a broken line, named
with the nearest valid key (`x-` keys of one's own are allowed). A line may hold a whole
tool conversation as `turns` (what a live run's case record
keeps), so a recorded loop replays to the same grade; its `text` and `tools` are then
derived from the turns (core/instrument/conversation.py), and a line whose own `text` or `tools`
contradict its turns is skipped.

An evalpin run file is a recording too: its case records answer with their text, tools,
files and `reported_model`, a record that got no completion answers with the failure it
recorded, and its header names the run being replayed (`replay_of`), which the new run's
header carries. A record holds the last completion of a case; it answers the first round.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, NamedTuple, Self, TypeVar

import msgspec

from evalpin.core import reasons
from evalpin.core.bounded import keys_once
from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8
from evalpin.core.instrument.conversation import recorded, settle
from evalpin.core.recordings import RECORDING_KEY
from evalpin.core.records import (
    CaseRecord,
    Completion,
    CompletionRequest,
    RunHeader,
    ToolCall,
    Turn,
)
from evalpin.core.schema import struct_problem, unknown_key, unknown_keys
from evalpin.run.slots.base import NO_COMPLETION, Slot, SlotError
from evalpin.run.slots.config import Entry, SlotConfig, read_slot_file

_T = TypeVar("_T")

# (case_id, seed or None for "every seed", repair loop)
_Key = tuple[str, int | None, int]


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
        digest = hashlib.sha256(read_slot_file(self.path, "replay file")).hexdigest()
        return {"provider": self.provider, "path": self.path_text, RECORDING_KEY: digest}

    def settings_digest(self) -> None:
        """None: a recording stands in for whatever made it (a live run replays to the same
        grade and compares with it); the file is pinned by `sha256` in the header, and its
        answers by their reported model and completion digests."""
        return None

    def open(self) -> ReplaySlot:
        return ReplaySlot(self)


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


class _Kind(msgspec.Struct):
    """Which line of a run file this is (None: a plain recorded completion)."""

    record: str | None = None


class _Recorded(NamedTuple):
    """A case record that got no completion: it replays as the same failure."""

    reason: str
    detail: str


class ReplaySlot(Slot):
    """Answers (case, seed, loop) from the file: an exact seed beats a seedless line."""

    config: ReplayConfig

    def __init__(self, config: ReplayConfig) -> None:
        super().__init__(config)
        data = read_slot_file(config.path, "replay file")
        if not data.strip():
            raise InputError(config.path, "empty replay file")
        self._answers: dict[_Key, Completion | _Recorded] = {}
        first_seen: dict[_Key, int] = {}
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                key, answer = self._line(raw)
            except ValueError as exc:
                self._skip(lineno, str(exc))
                continue
            if key is None:
                continue
            if key in first_seen:
                self._skip(lineno, f"duplicate of line {first_seen[key]}, which is kept")
                continue
            first_seen[key] = lineno
            self._answers[key] = answer

    def _line(self, raw: bytes) -> tuple[_Key | None, Completion | _Recorded]:
        """One line's key and answer; no key for a run file's header or trailer."""
        kind = _kind(raw)
        if kind is None:
            line = _decode(raw)
            key = (line.case_id, line.seed, line.loop)
            return key, recorded(line)
        if kind == "run":
            header = _decode_as(raw, RunHeader)
            if self.replay_of is None:
                self.replay_of = {
                    "run_id": header.run_id,
                    "model_slot": header.model_slot,
                    "path": self.config.path_text,
                }
            elif header.run_id != self.replay_of["run_id"]:
                raise ValueError(f"a second run header (run {header.run_id}); its records are kept")
            return None, Completion()
        if kind == "summary":
            return None, Completion()
        if kind != "case":
            raise ValueError(f"unknown record kind {kind!r}")
        record = _decode_as(raw, CaseRecord)
        key = (record.case_id, record.seed, 0)
        if record.text is None and not record.turns:
            return key, _failure(record, self.replay_of)
        answer = Completion(
            text=record.text or "",
            tools=record.tools or [],
            files=record.files or {},
            model=record.reported_model,
            turns=record.turns or [],
        )
        return key, settle(answer)

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
            if isinstance(answer, _Recorded):
                raise SlotError(answer.reason, answer.detail)
            if answer is not None:
                return answer
        where = f"case {request.case_id!r} seed {request.seed}" + (f" loop {loop}" if loop else "")
        raise SlotError(NO_COMPLETION, f"no recorded line for {where}")


def _failure(record: CaseRecord, replay_of: dict[str, Any] | None) -> _Recorded:
    """The slot failure a completion-less record recorded (no_completion if none)."""
    kinds = (reasons.NO_COMPLETION, reasons.PROVIDER_ERROR)
    failed = [r for r in record.reasons or [] if reasons.lookup(r) in kinds]
    where = f" in run {replay_of['run_id']}" if replay_of else ""
    return _Recorded(
        failed[0] if failed else NO_COMPLETION, f"recorded without a completion{where}"
    )


def _kind(raw: bytes) -> str | None:
    """The `record` field of a line; None when it has none (or is not an object)."""
    try:
        return msgspec.json.decode(raw, type=_Kind).record
    except (msgspec.MsgspecError, RecursionError):
        return None  # _decode says what is wrong


_LINE_KEYS = frozenset(_Line.__struct_fields__)
_KEYS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _decode(raw: bytes) -> _Line:
    """One plain line, or ValueError saying what is wrong with it (a key a recording
    does not have among it: `sed` for `seed` would answer every seed)."""
    line = _decode_as(raw, _Line)
    for key in unknown_keys(_KEYS.decode(raw), _LINE_KEYS):
        raise ValueError(unknown_key(key, _LINE_KEYS))
    if line.text is None and not line.turns:
        raise ValueError("wrong shape: needs 'text' (or 'turns')")
    try:
        settle(Completion(text=line.text or "", tools=line.tools, turns=line.turns))
    except ValueError as exc:
        raise ValueError(f"contradicts itself: {exc}") from None
    return line


def _decode_as(raw: bytes, shape: type[_T]) -> _T:
    """One line as `shape`, or ValueError saying what is wrong with it."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        raise ValueError(not_utf8(raw, bad)) from None
    try:
        value = msgspec.json.decode(raw, type=shape)
    except msgspec.ValidationError as exc:
        raise ValueError(f"wrong shape: {struct_problem(str(exc), shape)}") from None
    except msgspec.DecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    try:
        keys_once(raw, "")
    except InputError as exc:
        raise ValueError(exc.message) from None
    return value
