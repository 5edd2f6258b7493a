"""Completion slots: the backends a run asks for completions.

`resolve_slot` / `load_slots` turn a `--slot` value or a slots file into a `SlotConfig`
of a provider in `providers.PROVIDERS`; `open_slot` turns a config into a `Slot` whose
`complete` returns a `Completion` or raises `SlotError(reason)` with a registered reason
code (`no_completion`, `provider_error:KIND`).
"""

from __future__ import annotations

from evalpin.run.slots.base import NO_COMPLETION, Slot, SlotError
from evalpin.run.slots.command import CommandConfig
from evalpin.run.slots.config import SlotConfig
from evalpin.run.slots.openai_slot import OpenAIConfig
from evalpin.run.slots.providers import (
    DEFAULT_SLOTS_FILE,
    PROVIDERS,
    inline_spec,
    load_slots,
    open_slot,
    resolve_slot,
)
from evalpin.run.slots.replay import ReplayConfig

__all__ = [
    "DEFAULT_SLOTS_FILE",
    "NO_COMPLETION",
    "PROVIDERS",
    "CommandConfig",
    "OpenAIConfig",
    "ReplayConfig",
    "Slot",
    "SlotConfig",
    "SlotError",
    "inline_spec",
    "load_slots",
    "open_slot",
    "resolve_slot",
]
