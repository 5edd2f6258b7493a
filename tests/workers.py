"""The order test files go to the two pytest workers in (a pytest plugin, loaded by conftest).

pytest-xdist (`-n 2 --dist loadfile --no-loadscope-reorder`, pyproject's addopts) hands
each file to a worker as one finishes its last, in collection order. A long file handed
out last keeps one worker busy while the other idles, so the files that take longest go
first: those marked `slow` (a cluster, concurrent runs killed and resumed, a docs build),
then those that grade in real sandboxes, then those that drive the TUI (seconds a test),
then the rest (mostly milliseconds a test). Within each kind the files SECONDS names go
first, longest first, then the sandbox and TUI files with the most tests; the rest keep
their order and fill the end, so the two workers finish close together. The same order
on every worker (xdist checks that they all collected the same list), and in one process
too.
"""

from __future__ import annotations

import pytest

# Seconds a file took in a whole run (2026-12-05, loaded: load average 13 to 26, so only
# their order counts), for the files of over about 10 s. A file missing here is ordered
# by its kind and its number of tests; a name here that no longer exists fails
# tests/project/test_workers.py.
SECONDS = {
    # slow
    "run/test_cluster.py": 210,
    "run/test_chaos.py": 80,
    "cli/test_serve.py": 64,
    "project/test_demo.py": 56,
    "run/test_llama_benchmark.py": 40,
    "project/test_capabilities.py": 34,
    "project/test_tutorial.py": 30,
    "project/test_docs.py": 22,
    "run/test_llama_smoke.py": 20,
    "run/test_llama_live.py": 18,
    "formats/test_crosscheck.py": 16,
    # sandbox
    "attacks/test_box_channels.py": 190,
    "witness/test_witness.py": 120,
    "witness/test_true_grade.py": 127,
    "run/test_box_limits.py": 118,
    "witness/test_witness_shared.py": 101,
    "attacks/test_attack_sandbox.py": 90,
    "attacks/test_forgery.py": 85,
    "witness/test_witness_installed.py": 80,
    "witness/test_witness_idioms.py": 69,
    "formats/test_import_bench.py": 68,
    "witness/test_witness_handed.py": 68,
    "run/test_sandbox.py": 64,
    "witness/test_witness_objects.py": 62,
    "witness/test_conformance_corpus.py": 57,
    "witness/test_witness_library.py": 52,
    "attacks/test_witness_attacks.py": 50,
    # the rest
    "run/test_live.py": 88,
    "core/test_fuzz_readers.py": 75,
    "cli/test_check.py": 58,
    "core/test_case_keys.py": 36,
    "run/test_one_writer.py": 34,
    "core/test_envelope.py": 30,
    "cli/test_init.py": 30,
    "formats/test_formats.py": 26,
    "attacks/test_attack_runs.py": 25,
    "core/test_halves.py": 24,
    "run/test_runner.py": 23,
    "project/test_imports.py": 22,
    "cli/test_errors_not_fails.py": 20,
    "cli/test_seal.py": 20,
    "cli/test_degenerate_runs.py": 19,
    "cli/test_false_green.py": 19,
    "witness/test_remote.py": 17,
    "run/test_slots.py": 13,
    "project/test_example_workflow.py": 13,
    "run/test_providers.py": 12,
    "core/test_stats.py": 12,
}


@pytest.hookimpl(trylast=True)  # after tests/lanes.py has marked and deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(str(item.path), []).append(item)

    def weight(tests: list[pytest.Item]) -> tuple[int, float, int]:
        kinds = ("slow", "sandbox", "tui")
        kind = next((k for k, name in enumerate(kinds) if _marked(tests, name)), len(kinds))
        seconds = SECONDS.get(table_name(tests[0].path), 0)
        return (kind, -seconds, -len(tests) if kind < len(kinds) else 0)

    items[:] = [item for tests in sorted(files.values(), key=weight) for item in tests]


def table_name(path) -> str:
    """A test file's name in SECONDS: its folder under tests/ and its own name."""
    return f"{path.parent.name}/{path.name}"


def _marked(tests: list[pytest.Item], name: str) -> bool:
    return any(item.get_closest_marker(name) for item in tests)
