"""How the two grades of an `isolation: process` item make one (issue 38).

Plain pytest with the candidate imported in-process is the truth for honest code: it
alone decides a fail. A pass must be witnessed: the same tests under process isolation
(the wire), where the process that decides never runs candidate code, must pass too.
When the witness does not, the case is disputed (`witness:KIND`, status "disputed"):
not a pass, and never a fail, since the wire's limits must never become a model's
failure. A fail only the witness passes is `tampering:witness`.

Pure, and part of the grader version (so is the witness's timeout rule).
"""

from __future__ import annotations

from evalpin.core.reasons import SANDBOX_ERROR, TAMPERING, TESTS_FAILED, TIMEOUT, WITNESS
from evalpin.core.reasons import in_order as grade_order

# The witness's own timeout: the wire costs more per call than a call in-process, and a
# loaded machine must not turn a correct answer into a dispute, so it is generous: 4x the
# item's timeout_s, at least a minute, and at least 20x what plain pytest's own run of
# the same files took here (the machine's speed and load that hour, and the suite's
# size), never more than half an hour on that account. docs/concepts/isolation.md says
# why the measured part is safe: a candidate that slows plain pytest buys only time,
# never a pass, and at most the cap.
WITNESS_TIMEOUT_FACTOR = 4
WITNESS_TIMEOUT_MIN_S = 60.0
WITNESS_PLAIN_FACTOR = 20
WITNESS_PLAIN_CAP_S = 1800.0


def witness_timeout(timeout_s: float, plain_s: float | None = None) -> float:
    """Seconds the witness may take: 4x the item's timeout and at least a minute; once
    plain pytest's own seconds on the item are known (`plain_s`), at least 20x those, up
    to half an hour (past which only the item's own 4x counts)."""
    base = max(WITNESS_TIMEOUT_MIN_S, WITNESS_TIMEOUT_FACTOR * timeout_s)
    if plain_s is None:
        return base
    return max(base, min(WITNESS_PLAIN_FACTOR * plain_s, WITNESS_PLAIN_CAP_S))


def witness_timeout_most(timeout_s: float) -> float:
    """The longest the witness may ever be given for an item: plain pytest's run never
    outlasts the item's timeout (it is then a fail, and the witness's grade unwanted)."""
    return witness_timeout(timeout_s, timeout_s)


def witness_kind(reasons: list[str]) -> str:
    """What the witness saw, from its own run's reasons (process isolation's words): an
    operation the wire could not carry first (a failure after it proves nothing), then
    its timeout, its memory cap, its sandbox, else a failing test. A star import that
    would decide the asserts (`shadowed`) is named as such, and so is a failing test after
    a candidate's comparison with the tests' data the judge did not believe (`compared`)."""
    if WITNESS("shadowed") in reasons:
        return "shadowed"
    if WITNESS("compared") in reasons:
        return "compared"
    if SANDBOX_ERROR("unsupported") in reasons:
        return "unsupported"
    if TIMEOUT() in reasons:
        return "timeout"
    if SANDBOX_ERROR("memory") in reasons:
        return "memory"
    if any(r.startswith(SANDBOX_ERROR.prefix + ":") for r in reasons):
        return "sandbox"
    return "failed"


def witnessed(
    plain: tuple[bool, list[str]], witness: tuple[bool, list[str]] | None
) -> tuple[bool, list[str]]:
    """The grade of a `process` item from plain pytest's (the truth for honest code) and
    the witness's (None: it did not run, as after a plain fail in a run).

    Plain pytest alone decides a fail. A plain pass is a pass only when the witness
    passes too; otherwise `witness:KIND`, a disputed case, never a fail. A plain test
    failure the witness passes is a fail with `tampering:witness` (seen where both run).
    """
    passed, reasons = plain
    if passed:
        if witness is None:
            raise ValueError("a plain pass is not a grade until the witness has run")
        return (True, []) if witness[0] else (False, [WITNESS(witness_kind(witness[1]))])
    if witness is not None and witness[0] and TESTS_FAILED() in reasons:
        return False, grade_order([TAMPERING("witness"), *reasons])
    return False, reasons
