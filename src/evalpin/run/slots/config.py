"""Slot configuration: which backend a model-slot label points at.

Read from a slots file (default `./slots.yaml`) or given inline as `LABEL=replay:PATH`.
Keys and URLs enter only through environment variable *names*, so a slots file can be
committed and every setting can go into a run header without a secret or a host in it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from evalpin.core.errors import InputError
from evalpin.core.fixtures import yaml_document

DEFAULT_SLOTS_FILE = Path("slots.yaml")
INLINE_WHERE = "--slot"

_LABEL = re.compile(r"[A-Za-z0-9_.-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Literal secrets refused with a pointer to the key that names their variable instead.
_LITERAL = {"api_key": "api_key_env", "base_url": "base_url_env"}


@dataclass(frozen=True, kw_only=True)
class SlotConfig:
    """A labelled backend; `source` is the slots file it came from (None when inline)."""

    provider: ClassVar[str]
    label: str
    source: Path | None

    def public_settings(self) -> dict[str, Any]:
        """What the run header records: no secret values and no URLs."""
        raise NotImplementedError

    @property
    def where(self) -> str | Path:
        """What an error about this slot names: its slots file, or the --slot option."""
        return self.source or INLINE_WHERE


@dataclass(frozen=True, kw_only=True)
class OpenAIConfig(SlotConfig):
    """An OpenAI-compatible chat-completions endpoint, found through the environment."""

    provider: ClassVar[str] = "openai"
    model: str
    base_url_env: str
    api_key_env: str
    timeout_s: float = 120.0
    max_attempts: int = 4
    retry_base_s: float = 1.0
    retry_max_s: float = 30.0

    def public_settings(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url_env": self.base_url_env,
            "api_key_env": self.api_key_env,
            "timeout_s": self.timeout_s,
            "max_attempts": self.max_attempts,
        }


@dataclass(frozen=True, kw_only=True)
class ReplayConfig(SlotConfig):
    """Recorded completions; `path_text` is the path as written, `path` as resolved."""

    provider: ClassVar[str] = "replay"
    path: Path
    path_text: str

    def public_settings(self) -> dict[str, Any]:
        # The hash pins the recording: a re-recorded file under the same label shows up.
        digest = hashlib.sha256(read_input(self.path, "replay file")).hexdigest()
        return {"provider": self.provider, "path": self.path_text, "sha256": digest}


@dataclass(frozen=True, kw_only=True)
class CommandConfig(SlotConfig):
    """A local program that answers one JSON request on stdin; runs in `cwd`."""

    provider: ClassVar[str] = "command"
    argv: tuple[str, ...]
    cwd: Path
    timeout_s: float = 60.0

    def public_settings(self) -> dict[str, Any]:
        return {"provider": self.provider, "argv": list(self.argv), "timeout_s": self.timeout_s}


# The keys each provider accepts in a slots file; anything else is a typo worth refusing.
_KEYS = {
    "openai": {"model", "base_url_env", "api_key_env", "timeout_s", "max_attempts"}
    | {"retry_base_s", "retry_max_s"},
    "replay": {"path"},
    "command": {"argv", "timeout_s"},
}


def read_input(path: Path, what: str) -> bytes:
    """The bytes of an input file, or the one-line `InputError` that says why not."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, f"no such {what}") from None
    except OSError as exc:
        raise InputError(path, f"cannot read {what}: {exc.strerror or exc}") from None


def load_slots(path: str | Path = DEFAULT_SLOTS_FILE) -> dict[str, SlotConfig]:
    """Every slot of a slots file, validated; relative paths resolve against its folder."""
    p = Path(path)
    doc = yaml_document(p, read_input(p, "slots file"), "slots files")
    if not isinstance(doc, dict) or set(doc) != {"slots"} or not isinstance(doc["slots"], dict):
        raise InputError(p, "expected exactly one top-level key, 'slots', holding a mapping")
    slots: dict[str, SlotConfig] = {}
    for label, entry in doc["slots"].items():
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            raise InputError(p, f"slot label {label!r} must use only letters, digits, _ . -")
        slots[label] = _parse_entry(p, label, entry)
    return slots


def resolve_slot(spec: str, slots_file: Path | None = None) -> SlotConfig:
    """The slot a `--slot` value names: `LABEL=replay:PATH` inline, else a label to look up
    in `slots_file` (default `./slots.yaml`)."""
    label, inline, target = spec.partition("=")
    if inline:
        return _parse_inline(spec, label, target)
    path = slots_file or DEFAULT_SLOTS_FILE
    if not path.exists():
        msg = f"no slots file to look up slot {spec!r} in (an inline slot is LABEL=replay:PATH)"
        raise InputError(path, msg)
    slots = load_slots(path)
    if spec not in slots:
        known = ", ".join(sorted(slots)) or "none"
        raise InputError(path, f"no slot {spec!r} (slots here: {known})")
    return slots[spec]


def _parse_inline(spec: str, label: str, target: str) -> ReplayConfig:
    provider, _, rel = target.partition(":")
    if not _LABEL.fullmatch(label) or provider != "replay" or not rel:
        msg = f"inline slot {spec!r}: expected LABEL=replay:PATH (only replay slots are inline)"
        raise InputError(INLINE_WHERE, msg)
    return ReplayConfig(label=label, source=None, path=Path(rel).absolute(), path_text=rel)


class _Entry:
    """One slot's mapping, with checks that name the file and the slot on failure."""

    def __init__(self, path: Path, label: str, entry: dict[str, Any]) -> None:
        self.path, self.label, self.entry = path, label, entry

    def fail(self, message: str) -> InputError:
        return InputError(self.path, f"slot {self.label!r}: {message}")

    def text(self, key: str) -> str:
        value = self.entry.get(key)
        if not isinstance(value, str) or not value:
            raise self.fail(f"'{key}' must be a non-empty string")
        return value

    def env_name(self, key: str) -> str:
        # The value is never echoed: a key pasted here by mistake must not reach a log.
        value = self.entry.get(key)
        if not isinstance(value, str) or not _ENV_NAME.fullmatch(value):
            raise self.fail(f"'{key}' must be the name of an environment variable, not a value")
        return value

    def number(self, key: str, default: float, *, positive: bool = True) -> float:
        value = self.entry.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"'{key}' must be a number")
        if value < 0 or (positive and value == 0):
            raise self.fail(f"'{key}' must be {'positive' if positive else 'zero or more'}")
        return float(value)

    def count(self, key: str, default: int) -> int:
        value = self.entry.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(f"'{key}' must be a whole number of at least 1")
        return value


def _parse_entry(path: Path, label: str, entry: Any) -> SlotConfig:
    if not isinstance(entry, dict):
        raise InputError(path, f"slot {label!r}: expected a mapping")
    e = _Entry(path, label, entry)
    for key, instead in _LITERAL.items():
        if key in entry:
            msg = f"'{key}' must not be written in a slots file; set an environment variable"
            raise e.fail(f"{msg} and name it with '{instead}'")
    provider = entry.get("provider")
    if provider not in _KEYS:
        raise e.fail(f"'provider' must be one of {', '.join(_KEYS)}, got {provider!r}")
    unknown = sorted(str(k) for k in set(entry) - _KEYS[provider] - {"provider"})
    if unknown:
        raise e.fail(f"unknown key {unknown[0]!r} for provider {provider!r}")
    base = path.parent.absolute()
    if provider == "openai":
        return OpenAIConfig(
            label=label,
            source=path,
            model=e.text("model"),
            base_url_env=e.env_name("base_url_env"),
            api_key_env=e.env_name("api_key_env"),
            timeout_s=e.number("timeout_s", OpenAIConfig.timeout_s),
            max_attempts=e.count("max_attempts", OpenAIConfig.max_attempts),
            retry_base_s=e.number("retry_base_s", OpenAIConfig.retry_base_s, positive=False),
            retry_max_s=e.number("retry_max_s", OpenAIConfig.retry_max_s, positive=False),
        )
    if provider == "replay":
        rel = e.text("path")
        return ReplayConfig(label=label, source=path, path=base / rel, path_text=rel)
    argv = entry.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise e.fail("'argv' must be a non-empty list of non-empty strings")
    return CommandConfig(
        label=label,
        source=path,
        argv=tuple(argv),
        cwd=base,
        timeout_s=e.number("timeout_s", CommandConfig.timeout_s),
    )
