from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalpin.run.sandbox import Isolation, probe_isolation
from tests.fake_openai import FakeOpenAI

# The `llama_server` fixture (a real llama.cpp); `nobodys_venv` and `open_folder`, for
# the tests that run evalpin as an unprivileged user.
pytest_plugins = ["tests.llama_server", "tests.nobody"]

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


@pytest.fixture(params=["unshare", "bwrap"])
def backend(request: pytest.FixtureRequest) -> Isolation:
    """Each namespace backend this machine has, as `evalpin run` would use it (probed,
    its cgroup included); skipped where it does not work."""
    iso = probe_isolation((request.param,))
    if iso.kind == "none":
        pytest.skip(f"{request.param} unavailable: {iso.why}")
    return iso


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
