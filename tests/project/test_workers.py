"""tests/workers.py's table of the files that take longest names files that exist: a
file renamed or removed would silently lose its place at the front of the workers' queue."""

from __future__ import annotations

from pathlib import Path

from tests.workers import SECONDS, table_name

TESTS = Path(__file__).resolve().parents[1]


def test_every_file_the_table_names_exists_once() -> None:
    names = [table_name(path) for path in TESTS.glob("*/test_*.py")]
    missing = [name for name in SECONDS if name not in names]
    assert missing == [], f"tests/workers.py SECONDS names files that are gone: {missing}"
    assert len(names) == len(set(names))  # a name picks out one file
