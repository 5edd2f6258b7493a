"""Completion slots: the backends a run asks for completions.

`resolve_slot` / `load_slots` turn a `--slot` value or a slots file into a `SlotConfig`;
`open_slot` turns a config into a `Slot` whose `complete` returns a `Completion` or raises
`SlotError(reason)` with a DESIGN reason code (`no_completion`, `provider_error:KIND`).
"""

from __future__ import annotations

from evalpin.run.slots.base import NO_COMPLETION, Slot, SlotError
from evalpin.run.slots.command import CommandSlot
from evalpin.run.slots.config import (
    DEFAULT_SLOTS_FILE,
    CommandConfig,
    OpenAIConfig,
    ReplayConfig,
    SlotConfig,
    load_slots,
    resolve_slot,
)
from evalpin.run.slots.openai_slot import OpenAISlot
from evalpin.run.slots.replay import ReplaySlot

__all__ = [
    "DEFAULT_SLOTS_FILE",
    "NO_COMPLETION",
    "CommandConfig",
    "OpenAIConfig",
    "ReplayConfig",
    "Slot",
    "SlotConfig",
    "SlotError",
    "load_slots",
    "open_slot",
    "resolve_slot",
]


def open_slot(config: SlotConfig) -> Slot:
    """A ready slot; configuration problems (missing file, unset variable) are InputError."""
    if isinstance(config, ReplayConfig):
        return ReplaySlot(config)
    if isinstance(config, CommandConfig):
        return CommandSlot(config)
    if isinstance(config, OpenAIConfig):
        return OpenAISlot(config)  # the only path that loads the openai SDK
    raise TypeError(f"no provider for {type(config).__name__}")
