from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalpin.run.sandbox import BACKENDS, Isolation, probe_isolation
from tests import capabilities
from tests.fake_openai import FakeOpenAI

# `llama_server` (a real llama.cpp), `unprivileged` and `open_tmp` (the non-root half)
pytest_plugins = ["tests.llama_server", "tests.unprivileged"]

GOLDEN_CASES = [
    {
        "id": "order-1",
        "user": "Where is my order 1001?",
        "require_tools": ["lookup_order"],
        "forbid_tools": ["issue_refund"],
        "must_include": ["1001"],
        "must_not": ["refund issued"],
    },
    {
        "id": "order-2",
        "user": "Cancel order 1002 please.",
        "require_tools": ["lookup_order", "cancel_order"],
        "forbid_tools": [],
        "must_include": ["cancelled"],
        "must_not": [],
    },
]


@pytest.fixture(scope="session")
def isolations() -> dict[str, Isolation]:
    """Each namespace backend probed once for the session (as `evalpin run` probes it,
    its cgroup included); kind "none" where it does not work."""
    return {kind: probe_isolation((kind,)) for kind in BACKENDS}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, isolations: dict[str, Isolation]) -> Isolation:
    """Each namespace backend this machine has; a missing one skips, or fails under
    `EVALPIN_REQUIRE` (tests/capabilities.py)."""
    iso = isolations[request.param]
    if iso.kind == "none":
        capabilities.need(request.param, iso.why)
    return iso


# A `wire` test's grade does not depend on the namespace backend (the wire, the witness
# and pytest are the same on each): it runs on the default backend, and one instance in
# PARITY_ONE_IN (at least one per test function, chosen by a hash of its id, so the same
# ones every run) on the other. `both_backends` keeps a test of a `wire` module on both
# (an attack on the sandbox itself); so does EVALPIN_BOTH_BACKENDS=1 for every test.
PARITY_ONE_IN = 4


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "wire: the grade does not depend on the backend (one, plus parity)"
    )
    config.addinivalue_line("markers", "both_backends: in a `wire` module, still on both")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("EVALPIN_BOTH_BACKENDS") == "1":
        return
    default = default_backend()
    parity: dict[str, list[pytest.Item]] = {}
    for item in items:
        kind = getattr(item, "callspec", None) and item.callspec.params.get("backend")
        on_both = item.get_closest_marker("both_backends") or not item.get_closest_marker("wire")
        if kind and kind != default and not on_both:
            parity.setdefault(f"{item.path}::{item.originalname}", []).append(item)
    dropped = []
    for group in parity.values():

        def share(item: pytest.Item) -> int:
            return zlib.crc32(item.callspec.id.encode()) % PARITY_ONE_IN

        kept = [item for item in group if share(item) == 0] or group[:1]
        dropped += [item for item in group if item not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in gone]


def default_backend() -> str:
    """The backend `evalpin run` would use here (the first that works)."""
    return next((k for k in BACKENDS if probe_isolation((k,)).kind == k), BACKENDS[0])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    report = yield
    capabilities.strict_skips(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> pytest.CollectReport:
    report = yield
    capabilities.strict_skips(report)
    return report


@pytest.fixture
def golden_file(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in GOLDEN_CASES))
    return path


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible endpoint on 127.0.0.1, stopped after the test."""
    fake = FakeOpenAI()
    fake.start()
    yield fake
    fake.stop()
