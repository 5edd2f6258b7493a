"""Calibration probes: the gauge is checked, not trusted.

A server may report back the model name it was asked for and no fingerprint, so a backend
that changed under its label (another chat template, another quantisation, the same
file) looks the same from its answers' metadata. A few fixed prompts at temperature 0,
sent before the first case and again after the last, say whether it still answers alike.

Before the run each probe is sent twice: when the two answers differ the backend is not
deterministic at temperature 0 (a prefix cache, batching), its probes cannot pin it and
none are compared. Otherwise the digest of the answers joins every record's
`reported_model` (`MODEL~probes:DIGEST`), so two runs on one label whose probes differ
are refused as a re-pointed alias is, and history breaks its series there. The probes
after the run go in the trailer; a run whose backend moved while it ran cannot be
published. A slot declared `deterministic: false` is probed for the record only.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from evalpin.core.records import CompletionRequest, Message
from evalpin.run.slots.base import Slot, SlotError

PROBE_TOKENS = 16


@dataclass(frozen=True)
class ProbeResult:
    """What the probes said: a digest of their answers, whether they repeated, whether
    the server reports a fingerprint, or why they could not be sent."""

    digest: str | None
    repeatable: bool
    fingerprint: bool
    failed: str | None = None

    def header(self, prompts: tuple[str, ...], declared: bool) -> dict[str, object]:
        """The run header's `probes` entry."""
        out: dict[str, object] = {
            "prompts": _digest(prompts),
            "count": len(prompts),
            "deterministic": declared,
            "repeatable": self.repeatable,
            "fingerprint": self.fingerprint,
        }
        if self.digest is not None:
            out["start"] = self.digest
        if self.failed:
            out["failed"] = self.failed
        return out


def _digest(parts: tuple[str, ...] | list[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


def _ask(slot: Slot, n: int, prompt: str) -> tuple[str, str | None]:
    request = CompletionRequest(
        case_id=f"probe-{n}",
        seed=0,
        messages=[Message("user", prompt)],
        temperature=0.0,
        max_tokens=PROBE_TOKENS,
    )
    answer = slot.complete(request)
    return answer.text, answer.model


def send(slot: Slot, prompts: tuple[str, ...], *, twice: bool) -> ProbeResult:
    """Send the probes, side by side (each one twice in a row when `twice`); never
    raises for the endpoint's failures."""

    def one(n: int) -> tuple[str, str | None, bool]:
        text, model = _ask(slot, n, prompts[n])
        again = _ask(slot, n, prompts[n])[0] if twice else text
        return text, model, again == text

    try:
        with ThreadPoolExecutor(max_workers=len(prompts), thread_name_prefix="probe") as pool:
            answers = list(pool.map(one, range(len(prompts))))
    except SlotError as exc:
        return ProbeResult(None, False, False, failed=f"{exc.reason}: {exc.detail}"[:300])
    fingerprint = any(m is not None and "@" in m for _, m, _ in answers)
    repeatable = all(alike for _, _, alike in answers)
    return ProbeResult(_digest([t for t, _, _ in answers]), repeatable, fingerprint)
