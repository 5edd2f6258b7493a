"""The order test files go to the two pytest workers in (a pytest plugin, loaded by conftest).

pytest-xdist (`-n 2 --dist loadfile --no-loadscope-reorder`, pyproject's addopts) hands
each file to a worker as one finishes its last, in collection order. A long file handed
out last keeps one worker busy while the other idles, so the files that take longest go
first: those marked `slow` (a cluster, concurrent runs killed and resumed, a docs build),
then those that grade in real sandboxes, then those that drive the TUI (seconds a test),
each kind with its most tests first; the rest (mostly milliseconds a test) keep their
order and fill the end, so the two workers finish close together. The same order on
every worker (xdist checks that they all collected the same list), and in one process
too.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)  # after tests/lanes.py has marked and deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(str(item.path), []).append(item)

    def weight(tests: list[pytest.Item]) -> tuple[int, int]:
        kinds = ("slow", "sandbox", "tui")
        kind = next((k for k, name in enumerate(kinds) if _marked(tests, name)), len(kinds))
        return (kind, -len(tests) if kind < len(kinds) else 0)

    items[:] = [item for tests in sorted(files.values(), key=weight) for item in tests]


def _marked(tests: list[pytest.Item], name: str) -> bool:
    return any(item.get_closest_marker(name) for item in tests)
