from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalpin.run.sandbox import BACKENDS, Isolation, probe_isolation
from tests import capabilities
from tests.fake_openai import FakeOpenAI

# `llama_server` (a real llama.cpp), `unprivileged` and `open_tmp` (the non-root half);
# the markers and the backends a test runs on (lanes); the files' order (workers)
pytest_plugins = ["tests.llama_server", "tests.unprivileged", "tests.lanes", "tests.workers"]

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
