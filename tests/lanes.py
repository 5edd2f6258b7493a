"""Which tests run where, and on which backend (a pytest plugin, loaded by conftest).

Markers (registered in pyproject.toml), each applied here so that a new test gets it
without being told:

- `sandbox`: the test grades in a real sandbox (it takes `backend`, or its module uses
  evalpin's sandbox, isolation or set-check API);
- `tui`: it drives the Textual app (its module uses tests/tuikit.py or the app itself,
  or it takes `snap_compare`), or it lives in tests/tui/;
- `slow`: it starts a browser or a model server (`chromium`, `llama_server`), or its
  module says so (`pytestmark = pytest.mark.slow`: a docs build, a Dask cluster, ...).

The fast lane (CONTRIBUTING.md) is `pytest -m "not sandbox and not tui and not slow"`.

Backends: a `wire` test's grade does not depend on the namespace backend (the wire, the
witness and pytest are the same on each), so it runs on the default backend, and one
instance in PARITY_ONE_IN on the other (at least one per test function; chosen by a
hash of its id, so the same ones every run). `both_backends` keeps a test of a `wire`
module on both (an attack on the sandbox itself); EVALPIN_BOTH_BACKENDS=1 keeps every
test on both.
"""

from __future__ import annotations

import os
import zlib

import pytest

from evalpin.run.sandbox import BACKENDS, probe_isolation

PARITY_ONE_IN = 8
_SANDBOX_API = ("evalpin.run.sandbox", "evalpin.run.isolation", "evalpin.run.set_check")
_TUI_API = ("tests.tuikit", "evalpin.tui")


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on them
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        uses = _module_uses(item)
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & {"backend", "isolations"} or uses & {"sandbox"}:
            item.add_marker("sandbox")
        if "snap_compare" in fixtures or uses & {"tui"} or item.path.parent.name == "tui":
            item.add_marker("tui")
        if fixtures & {"chromium", "llama_server"}:
            item.add_marker("slow")
    _one_backend_for_the_wire(config, items)


def _module_uses(item: pytest.Item) -> set[str]:
    module = getattr(item, "module", None)
    found = set()
    for value in vars(module).values() if module else ():
        origin = getattr(value, "__module__", None) or getattr(value, "__name__", "")
        if isinstance(origin, str):
            if origin.startswith(_SANDBOX_API):
                found.add("sandbox")
            if origin.startswith(_TUI_API):
                found.add("tui")
    return found


def _one_backend_for_the_wire(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("EVALPIN_BOTH_BACKENDS") == "1":
        return
    wire = [
        item
        for item in items
        if getattr(item, "callspec", None) and "backend" in item.callspec.params
        if item.get_closest_marker("wire") and not item.get_closest_marker("both_backends")
    ]
    default = default_backend() if wire else ""  # probed only when a wire test is here
    parity: dict[str, list[pytest.Item]] = {}
    for item in wire:
        if item.callspec.params["backend"] != default:
            parity.setdefault(f"{item.path}::{item.originalname}", []).append(item)
    dropped = []
    for group in parity.values():
        kept = [i for i in group if zlib.crc32(i.callspec.id.encode()) % PARITY_ONE_IN == 0]
        kept = kept or group[:1]
        dropped += [item for item in group if item not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in gone]


def default_backend() -> str:
    """The backend `evalpin run` would use here (the first that works)."""
    return next((k for k in BACKENDS if probe_isolation((k,)).kind == k), BACKENDS[0])
