"""The conformance corpus's two tables (issue 48): the steered one and the held-out one.

A held-out figure means something only while no project is in both tables, and each row
is pinned (a version and its sdist's sha256) so that two runs grade the same code. The
item builder keeps a test file's name when pytest collects it as written (`*_test.py`):
a test may name its own module (pyrsistent's `'checked_vector_test.Naturals'`).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)
    return module


def test_the_held_out_table_shares_no_project_and_pins_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fetch = _load(REPO / "scripts" / "fetch_conformance.py", monkeypatch)
    steered = fetch.projects()
    held = fetch.projects(REPO / "scripts" / "conformance-heldout.toml")
    assert len(held) >= 8
    names = [p.name.lower().replace("_", "-") for p in steered + held]
    assert len(names) == len(set(names))
    for project in held:
        assert re.fullmatch(r"[0-9a-f]{64}", project.sha256), project.name
        assert project.candidate and project.tests and project.license


def test_an_items_test_keeps_a_name_pytest_collects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch = _load(REPO / "scripts" / "fetch_conformance.py", monkeypatch)
    build = _load(REPO / "benchmarks" / "conformance_items.py", monkeypatch)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (tmp_path / "tests").mkdir()
    for name in ("kinds_test.py", "test_values.py", "checks.py"):
        (tmp_path / "tests" / name).write_text("from pkg import VALUE\n")
    project = fetch.Project(name="pkg", version="1", sha256="0" * 64, license="LICENSE",
                            candidate=("pkg",), tests=("tests/*.py",))  # fmt: skip
    made = {item.id: item.test_name for item in build.items(project, tmp_path)}
    assert made == {
        "pkg:tests/checks": "test_checks.py",
        "pkg:tests/kinds_test": "kinds_test.py",
        "pkg:tests/test_values": "test_values.py",
    }
