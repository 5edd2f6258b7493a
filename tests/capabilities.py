"""What the suite needs from the machine, and the switch that makes a missing piece fail.

A test that needs one of CAPABILITIES calls `need(name, why)` when it is missing. Locally
that skips, saying why. `.ci/run` sets `EVALPIN_REQUIRE` to the capabilities CI claims (a
comma list of names, or `all`): a missing one named there fails its test instead, so CI
never passes with a sandbox backend, the cgroup, a grader's half, the browser or the
model server untested. Under the switch every other skip fails too (`strict_skips`), so
a skip added later cannot hide a regression either; the skips left are the capabilities
the switch does not name (a CI machine that is not root cannot test a root grader), each
listed by `-ra` with its reason.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

CAPABILITIES = {
    "unshare": "the unshare sandbox backend",
    "bwrap": "the bubblewrap sandbox backend",
    "cgroup": "a pids and memory cgroup per sandboxed run, where this user may make one",
    "root": "the root grader's half (the suite runs as root)",
    "unprivileged": "the unprivileged grader's half (as root: run as nobody with setpriv)",
    "two-cores": "two cores, for `diff` in halves",
    "chromium": "headless Chromium, for `evalpin serve` in a browser",
    "llama": "a real llama.cpp server (scripts/install_llama_server.sh)",
}
SWITCH = "EVALPIN_REQUIRE"
# The reason of a skip `need` allows under the switch starts with this.
ALLOWED = "capability not claimed here: "


def claimed() -> frozenset[str]:
    """The capabilities `EVALPIN_REQUIRE` names (`all`: every one)."""
    names = {n.strip() for n in os.environ.get(SWITCH, "").split(",") if n.strip()}
    if "all" in names:
        return frozenset(CAPABILITIES)
    unknown = names - set(CAPABILITIES)
    if unknown:
        raise pytest.UsageError(f"{SWITCH}: unknown {sorted(unknown)}; known: {list(CAPABILITIES)}")
    return frozenset(names)


def strict() -> bool:
    """Whether the switch is on at all (then a stray skip is a failure)."""
    return bool(os.environ.get(SWITCH, "").strip())


def need(name: str, why: str) -> NoReturn:
    """`name` is missing here: fail where the switch claims it, else skip saying why."""
    assert name in CAPABILITIES, name
    if name in claimed():
        pytest.fail(f"{CAPABILITIES[name]} required ({SWITCH}), missing: {why}", pytrace=False)
    if strict():
        lacking(name, why)
    _skip(f"{name} unavailable: {why}")


def lacking(what: str, why: str) -> NoReturn:
    """Skip for what a machine may lack whatever CI claims (the kernel's keyrings where a
    seccomp profile blocks them): allowed under the switch, and named by `-ra`."""
    _skip(f"{ALLOWED}{what}: {why}")


def _skip(reason: str) -> NoReturn:
    # Reported at the test's own location (as a skipif marker is), not this line's, so
    # that `-ra` names every test a missing capability skipped.
    raise pytest.skip.Exception(reason, _use_item_location=True)


def cgroup_place() -> str:
    """'' when this machine gives this user a place to make evalpin's cgroups (so a
    backend without one is a regression), else why not (then no test can have one)."""
    from evalpin.run.sandbox.cgroup import _cgroup_parents

    parents = _cgroup_parents()
    if not parents:
        return "no pids and memory cgroup controllers mounted for this process"
    closed = [str(p) for p in parents.values() if not os.access(p, os.W_OK)]
    return f"not writable by this user: {', '.join(closed)}" if closed else ""


def need_cgroup(has_one: bool) -> None:
    """Skip or fail a test that needs the run's cgroup when the backend has none: a
    failure under the switch only where the machine does give us cgroups."""
    if has_one:
        return
    place = cgroup_place()
    if place:
        lacking("cgroup", f"this machine has none for this user ({place})")
    need("cgroup", "the machine has cgroups, but the sandbox made none")


def need_root() -> None:
    if os.geteuid() != 0:
        need("root", f"the suite runs as uid {os.geteuid()}")


def strict_skips(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Under the switch, a skip that is not a capability left unclaimed becomes a
    failure (an expected failure, `xfail`, stays what it is)."""
    if not (strict() and report.skipped) or hasattr(report, "wasxfail"):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    if reason.removeprefix("Skipped: ").startswith(ALLOWED):
        return
    report.outcome = "failed"
    report.longrepr = f"a skip under {SWITCH} ({os.environ[SWITCH]}) is a failure: {reason}"
