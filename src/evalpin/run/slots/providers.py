"""The provider table: every slot provider, and the lookups that consult it.

`load_slots` / `resolve_slot` turn a slots file or a `--slot` value into a `SlotConfig`
of the provider it names; `open_slot` opens it. Nothing outside this table asks which
provider a slot is: adding one is a module (its `SlotConfig` and `Slot`) and a row here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from evalpin.core.bounded import MAX_CONFIG_BYTES, YamlDoc, yaml_document
from evalpin.core.errors import InputError
from evalpin.core.schema import EXTENSION_PREFIX, unknown_key, unknown_keys
from evalpin.core.tiers import TIER_KEY, UNKNOWN, check_declared, tier_of
from evalpin.run.slots.base import Slot
from evalpin.run.slots.command import CommandConfig
from evalpin.run.slots.config import INLINE_WHERE, LABEL, Entry, SlotConfig, read_slot_file
from evalpin.run.slots.openai_slot import OpenAIConfig
from evalpin.run.slots.replay import ReplayConfig

PROVIDERS: dict[str, type[SlotConfig]] = {
    config.provider: config for config in (OpenAIConfig, ReplayConfig, CommandConfig)
}

DEFAULT_SLOTS_FILE = Path("slots.yaml")
_KEYS = [config.keys for config in PROVIDERS.values()]

# Keys every provider's entry may hold besides its own.
_COMMON = frozenset({"provider", TIER_KEY})
# How an inline `--slot` value declares its tier: `LABEL=replay:PATH,tier=free`.
_INLINE_TIER = "," + TIER_KEY + "="

# Literal secrets refused with a pointer to the key that names their variable instead.
_LITERAL = {"api_key": "api_key_env", "base_url": "base_url_env"}


def open_slot(config: SlotConfig) -> Slot:
    """A ready slot; configuration problems (missing file, unset variable) are InputError."""
    return config.open()


def load_slots(path: str | Path = DEFAULT_SLOTS_FILE) -> dict[str, SlotConfig]:
    """Every slot of a slots file, validated; relative paths resolve against its folder."""
    p = Path(path)
    data = read_slot_file(p, "slots file", MAX_CONFIG_BYTES)
    parsed = yaml_document(p, data, "slots files")
    doc = parsed.value
    whole = "expected exactly one top-level key, 'slots', holding a mapping"
    if not isinstance(doc, dict):
        raise InputError(p, whole, parsed.line())
    for key in unknown_keys(doc, {"slots"}):
        raise InputError(p, unknown_key(key, {"slots"}), parsed.line(key))
    if not isinstance(doc.get("slots"), dict):
        raise InputError(p, whole, parsed.line("slots"))
    slots: dict[str, SlotConfig] = {}
    for label, entry in doc["slots"].items():
        if not isinstance(label, str) or not LABEL.fullmatch(label):
            msg = f"slot label {label!r} must use only letters, digits, _ . -"
            raise InputError(p, msg, parsed.line("slots", label))
        slots[label] = _parse_entry(p, label, entry, parsed)
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


def inline_spec(label: str, settings: dict[str, Any]) -> str | None:
    """The inline `--slot` value that reopens a recorded slot, where its provider has one
    (with its declared tier, so a resumed run records the same slot settings)."""
    provider = PROVIDERS.get(settings.get("provider"))  # type: ignore[arg-type]
    spec = provider.inline_spec(label, settings) if provider is not None else None
    if spec is not None and tier_of(settings) != UNKNOWN:
        spec += _INLINE_TIER + tier_of(settings)
    return spec


def _parse_inline(spec: str, label: str, target: str) -> SlotConfig:
    # The tier option comes last, so a path may itself hold a comma.
    head, has_tier, tier = target.rpartition(_INLINE_TIER)
    if has_tier:
        target = head
    if has_tier and (why := check_declared(tier)):
        raise InputError(INLINE_WHERE, f"inline slot {spec!r}: {why}")
    name, _, rest = target.partition(":")
    provider = PROVIDERS.get(name)
    config = provider.parse_inline(label, rest) if provider and LABEL.fullmatch(label) else None
    if config is None:
        msg = (
            f"inline slot {spec!r}: expected LABEL=replay:PATH[,tier=free|dedicated|local]"
            " (only replay slots are inline)"
        )
        raise InputError(INLINE_WHERE, msg)
    return dataclasses.replace(config, tier=tier) if has_tier else config


def _parse_entry(path: Path, label: str, entry: Any, parsed: YamlDoc) -> SlotConfig:
    line = parsed.line("slots", label)
    if not isinstance(entry, dict):
        raise InputError(path, f"slot {label!r}: expected a mapping", line)
    # `x-` keys of one's own (core/schema.py) are read by no provider.
    own = {k: v for k, v in entry.items() if not str(k).startswith(EXTENSION_PREFIX)}
    lines = {str(k): parsed.line("slots", label, k) or line for k in entry}
    e = Entry(path, label, own, line, lines)
    for key, instead in _LITERAL.items():
        if key in entry:
            msg = f"'{key}' must not be written in a slots file; set an environment variable"
            raise e.fail(f"{msg} and name it with '{instead}'", key)
    provider = PROVIDERS.get(entry.get("provider"))  # type: ignore[arg-type]
    # Without a known provider, a key no provider takes is named first: `provder:`.
    valid = (provider.keys if provider else frozenset().union(*_KEYS)) | _COMMON
    for key in unknown_keys(entry, valid):
        where = f"slot {label!r}" + (f" (provider {provider.provider!r})" if provider else "")
        raise InputError(path, unknown_key(key, valid, f"{where}: "), lines.get(key))
    if provider is None:
        got = entry.get("provider")
        msg = f"'provider' must be one of {', '.join(PROVIDERS)}, got {got!r}"
        raise e.fail(msg, "provider")
    if TIER_KEY not in entry:
        return provider.parse(e)
    if why := check_declared(entry[TIER_KEY]):
        raise e.fail(why, TIER_KEY)
    return dataclasses.replace(provider.parse(e), tier=entry[TIER_KEY])
