"""Recordings: a slot that answers from a file is pinned by that file, not by settings.

A slot whose answers come from a recorded file (a replay) records the file's sha256 among
its header settings and has no settings digest: it asks no backend. Whatever reads run
headers asks this module, by that recorded field, never which provider made the run.
"""

from __future__ import annotations

from typing import Any

RECORDING_KEY = "sha256"


def recording_digest(slot_settings: Any) -> str | None:
    """The sha256 of the recording a slot replayed, or None for a slot that asked a
    backend (or a header too old or too odd to say)."""
    if not isinstance(slot_settings, dict):
        return None
    digest = slot_settings.get(RECORDING_KEY)
    return digest if isinstance(digest, str) and digest else None


def pinned_instead(slot_settings: Any, settings_digest: str | None) -> dict[str, str]:
    """What pins a slot in a run's pins when its settings digest is null by design (a
    replay asks no backend): its recording, by sha256. Empty for any other slot."""
    digest = recording_digest(slot_settings)
    if settings_digest or digest is None:
        return {}
    return {"slot_settings": f"none: a replay, pinned by its recording (sha256 {digest[:12]})"}
