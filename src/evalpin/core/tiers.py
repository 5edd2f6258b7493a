"""Backend tiers: what a slot's operator declares about the backend behind the label.

A score can back a formal claim only if the backend that produced it stays put. A `free`
backend (complimentary or rotating access) can throttle or swap its model without notice,
so a run on one is at most `internal`; a `dedicated` deployment is pinned by its operator;
a `local` one runs on the operator's machine. A slot that declares nothing is `unknown`:
allowed, but noted wherever the verdict is shown. Runs recorded before tiers existed carry
no tier and read as `unknown`, exactly like an undeclared slot.

The tier is a declaration *about* the backend, not part of which backend it is: it is
recorded beside the provider settings in the run header (key `tier`, absent when not
declared) and kept out of the provider's own settings, so declaring it never makes a slot
look re-pointed. A tier that changes inside a series is an environment change (history).
"""

from __future__ import annotations

from typing import Any

FREE = "free"
DEDICATED = "dedicated"
LOCAL = "local"
UNKNOWN = "unknown"
# The values a slot may declare; leaving `tier` out is how a slot says `unknown`.
DECLARED = (FREE, DEDICATED, LOCAL)
TIER_KEY = "tier"
# How a moved tier is named among environment changes (history, the verdict screen).
TIER_CHANGE = "slot.tier"

NOT_FORMAL = "free or rotating backend: not a formal claim"
NOT_DECLARED = "backend tier not declared"


def tier_of(slot_settings: Any) -> str:
    """The tier a run header's slot settings record: a declared tier, else `unknown`
    (no settings, no tier, or a value no version of evalpin writes)."""
    tier = slot_settings.get(TIER_KEY) if isinstance(slot_settings, dict) else None
    return tier if tier in DECLARED else UNKNOWN


def recorded_oddity(slot_settings: Any) -> str | None:
    """The recorded tier when it is present but not one evalpin knows (a hand-edited or
    foreign header), so that reading it as `unknown` is said rather than silent."""
    if not isinstance(slot_settings, dict) or TIER_KEY not in slot_settings:
        return None
    tier = slot_settings[TIER_KEY]
    return None if tier in DECLARED else repr(tier)


def check_declared(value: Any) -> str | None:
    """Why `value` cannot be a slot's declared tier, or None when it can."""
    if isinstance(value, str) and value in DECLARED:
        return None
    if isinstance(value, str | int | float | bool) or value is None:
        got = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
    else:
        got = f"a {type(value).__name__}"
    return f"'tier' must be one of {', '.join(DECLARED)} (leave it out for unknown), got {got}"
