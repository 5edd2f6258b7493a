"""What every slot provider's configuration is: the interface the provider table uses.

A provider (one module under run/slots/, one row in providers.PROVIDERS) defines a
`SlotConfig` subclass that says which slots-file keys it takes, how it parses them
(through `Entry`, whose checks name the file and the slot), what of it the run header may
record, which environment variables hold its secrets, whether cases run faster in
several threads, and how to open the slot. Keys and URLs enter only through environment
variable *names*, so a slots file can be committed and every setting can go into a run
header without a secret or a host in it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from evalpin.core.bounded import MAX_FIXTURE_BYTES, read_bounded
from evalpin.core.errors import InputError
from evalpin.core.tiers import TIER_KEY, UNKNOWN

if TYPE_CHECKING:
    from evalpin.run.slots.base import Slot

INLINE_WHERE = "--slot"

LABEL = re.compile(r"[A-Za-z0-9_.-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")  # an HTTP token


@dataclass(frozen=True, kw_only=True)
class SlotConfig(ABC):
    """A labelled backend; `source` is the slots file it came from (None when inline)."""

    provider: ClassVar[str]
    # The keys a slots-file entry may hold besides `provider`; anything else is a typo.
    keys: ClassVar[frozenset[str]]
    # Whether golden cases (no sandbox to wait on) run faster in several threads: false
    # for a provider that answers from memory, where threads only cost.
    threads_help: ClassVar[bool] = True
    label: str
    source: Path | None
    # The backend tier the operator declared (core/tiers.py), or `unknown`: none declared.
    tier: str = UNKNOWN
    # Calibration probes sent before and after a run (run/probes.py; none: not probed),
    # and whether the operator says the backend answers alike at temperature 0. A check
    # on the instrument, not part of it: neither is in the settings digest.
    probes: tuple[str, ...] = ()
    deterministic: bool = True

    @classmethod
    @abstractmethod
    def parse(cls, entry: Entry) -> Self:
        """The config of a slots-file entry (already checked for unknown keys)."""

    @classmethod
    def parse_inline(cls, label: str, target: str) -> Self | None:
        """The config of `--slot LABEL=PROVIDER:TARGET`, or None: not given inline."""
        return None

    @classmethod
    def inline_spec(cls, label: str, settings: dict[str, Any]) -> str | None:
        """The inline `--slot` value that reopens a slot from a run header's settings
        (for `--resume`), or None when this provider cannot be given inline."""
        return None

    def secret_env_names(self) -> tuple[str, ...]:
        """Environment variables whose values must never reach model code or a record."""
        return ()

    @abstractmethod
    def public_settings(self) -> dict[str, Any]:
        """What the run header records: no secret values and no URLs."""

    def header_settings(self) -> dict[str, Any]:
        """The run header's slot settings: the provider's public settings, plus the tier
        when one was declared (beside them, not among them: it says how far the backend
        can be trusted to stay put, not which backend it is). An undeclared tier stays
        absent, as in runs made before tiers existed: a missing pin is not filled in."""
        settings = self.public_settings()
        if self.tier != UNKNOWN:
            settings[TIER_KEY] = self.tier
        return settings

    def identity(self) -> dict[str, Any]:
        """What makes this slot the instrument it is, for the settings digest: what
        changes its answers (model, sampling, the code it runs), not how long it waits."""
        return {"provider": self.provider}

    def settings_digest(self) -> str | None:
        """sha256 over `identity()`: a label whose digest moved was re-pointed."""
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @abstractmethod
    def open(self) -> Slot:
        """The ready slot; configuration problems (missing file, unset variable) are
        InputError."""

    @property
    def where(self) -> str | Path:
        """What an error about this slot names: its slots file, or the --slot option."""
        return self.source or INLINE_WHERE


def read_slot_file(path: Path, what: str, limit: int = MAX_FIXTURE_BYTES) -> bytes:
    """The bytes of a file a slot reads (`what`: "slots file", "replay file"), or the
    one-line `InputError` that says why not (over `limit` bytes among them)."""
    return read_bounded(
        path, limit, folder=None, missing=f"no such {what}", unreadable=f"cannot read {what}"
    )


class Entry:
    """One slot's mapping, with checks that name the file and the slot on failure."""

    def __init__(
        self,
        path: Path,
        label: str,
        entry: dict[str, Any],
        line: int | None = None,
        lines: dict[str, int | None] | None = None,
    ) -> None:
        self.path, self.label, self.entry = path, label, entry
        # The entry's line in its file, and each of its keys' (where the file says).
        self.line, self.lines = line, lines or {}

    @property
    def base(self) -> Path:
        """The folder relative paths in the entry resolve against: the slots file's."""
        return self.path.parent.absolute()

    def fail(self, message: str, key: str | None = None) -> InputError:
        """The error, at `key`'s line (else the entry's)."""
        line = self.lines.get(key, self.line) if key is not None else self.line
        return InputError(self.path, f"slot {self.label!r}: {message}", line)

    def text(self, key: str) -> str:
        value = self.entry.get(key)
        if not isinstance(value, str) or not value:
            raise self.fail(f"'{key}' must be a non-empty string", key)
        return value

    def env_name(self, key: str) -> str:
        # The value is never echoed: a key pasted here by mistake must not reach a log.
        value = self.entry.get(key)
        if not isinstance(value, str) or not _ENV_NAME.fullmatch(value):
            msg = f"'{key}' must be the name of an environment variable, not a value"
            raise self.fail(msg, key)
        return value

    def number(self, key: str, default: float, *, positive: bool = True) -> float:
        value = self.entry.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.fail(f"'{key}' must be a number", key)
        if value < 0 or (positive and value == 0):
            raise self.fail(f"'{key}' must be {'positive' if positive else 'zero or more'}", key)
        return float(value)

    def header_env_names(self, key: str) -> dict[str, str]:
        """A mapping of HTTP header names to the environment variables holding their values."""
        value = self.entry.get(key, {})
        if not isinstance(value, dict) or not all(
            isinstance(k, str)
            and _HEADER_NAME.fullmatch(k)
            and isinstance(v, str)
            and _ENV_NAME.fullmatch(v)
            for k, v in value.items()
        ):
            raise self.fail(f"'{key}' must map header names to environment variable names", key)
        return dict(value)

    def count(self, key: str, default: int) -> int:
        value = self.entry.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(f"'{key}' must be a whole number of at least 1", key)
        return value
