"""The run header's nested maps, closed: `slot`, `controls` (with its `limits`) and `env`.

The header struct is closed at its top level, but these maps are `dict[str, Any]` (other
tools' readers fill them with their own instruments), so an evalpin run file's header is
checked here: a key evalpin never writes is refused with the nearest valid name, as an
unknown key anywhere else is, and a key of the user's own starts with `x-`. The maps
below the named ones are open by design and never read as instruments: `env.packages`
(a package name to its version), `env.controls` (the run's controls again, digested as
written), `slot.sampling` (the endpoint's own parameters, passed through), `slot.code`
and `slot.headers_env` (a path or a header to a hash or a variable's name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalpin.core.schema import unknown_key, unknown_keys

# Every slot: who answered, its tier, the digest of what makes it that instrument.
_SLOT_COMMON = frozenset({"provider", "tier", "settings_digest"})
# Each provider evalpin ships: its public settings (run/slots/*.py `public_settings`).
SLOT_KEYS: dict[str, frozenset[str]] = {
    "openai": _SLOT_COMMON
    | {
        "model",
        "base_url_env",
        "api_key_env",
        "timeout_s",
        "max_attempts",
        "sampling",
        "organization_env",
        "project_env",
        "headers_env",
        "tool_choice",
        "endpoint",
        "stop",
    },
    "command": _SLOT_COMMON | {"argv", "timeout_s", "code"},
    "replay": _SLOT_COMMON | {"path", "sha256"},
}
CONTROL_KEYS = frozenset(
    {
        "temperature",
        "seeds",
        "max_tokens",
        "loops",
        "max_turns",
        "network",
        "item_timeout",
        "witness",
        "limits",
    }
)
LIMIT_KEYS = frozenset({"memory", "processes", "timeout", "disk"})
ENV_KEYS = frozenset({"python", "platform", "evalpin", "packages", "controls", "sandbox"})


def header_map_problem(
    slot: Mapping[str, Any], controls: Mapping[str, Any], env: Mapping[str, Any]
) -> str | None:
    """What is wrong with an evalpin header's nested maps (the first unknown key, or a
    slot that names no provider), or None. A provider evalpin does not ship (a row
    added to run/slots/providers.py's table) writes its own settings: open."""
    if slot:
        provider = slot.get("provider")
        if provider is None:
            every = frozenset().union(*SLOT_KEYS.values())
            return _unknown(slot, every, "slot: ") or "slot: its 'provider' is missing"
        valid = SLOT_KEYS.get(provider) if isinstance(provider, str) else None
        if valid is not None and (problem := _unknown(slot, valid, f"slot ({provider}): ")):
            return problem
    if problem := _unknown(controls, CONTROL_KEYS, "controls: "):
        return problem
    limits = controls.get("limits")
    if isinstance(limits, Mapping) and (
        problem := _unknown(limits, LIMIT_KEYS, "controls.limits: ")
    ):
        return problem
    return _unknown(env, ENV_KEYS, "env: ")


def _unknown(mapping: Mapping[str, Any], valid: frozenset[str], where: str) -> str | None:
    bad = unknown_keys(mapping, valid)
    return unknown_key(bad[0], valid, where) if bad else None
