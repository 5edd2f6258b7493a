"""The verdict's `limits` rule: a coding run whose header says a limit the items set was
not enforced (`controls.limits`, written by the sandbox: `run/sandbox/limits.py`) is at
most `internal`, naming each such limit. A run without the control (made before it was
recorded) is not judged by it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NOT_ENFORCED = "not enforced"


def unenforced(limits: Any) -> list[str]:
    """The limits of a `limits` control that were not enforced, each with its why."""
    if not isinstance(limits, dict):
        return []
    return [
        f"{name} ({how})"
        for name, how in limits.items()
        if isinstance(how, str) and how.startswith(NOT_ENFORCED)
    ]


def limits_rule(controls: dict[str, Any], check: Callable[..., None], label: str) -> None:
    """Shown when the run recorded its limits; a failure is at most `label`."""
    limits = controls.get("limits")
    if not isinstance(limits, dict):
        return
    missing = unenforced(limits)
    shown = "all enforced" if not missing else f"{len(missing)} not enforced"
    why = "a limit the items set was not enforced: " + "; ".join(missing)
    check("limits enforced", not missing, missing or "all", why, label, shown=shown)


def witness_rule(controls: dict[str, Any], check: Callable[..., None], label: str) -> None:
    """Which mode graded the run's witnesses (shown when recorded; never a failure):
    `alone` (nothing else of the run alive while it ran) or `beside` (other sandboxes
    alive at once: the timing channel between them is bounded, not closed)."""
    mode = controls.get("witness")
    if isinstance(mode, str):
        check("witness mode", True, mode, "", label, shown=mode)
