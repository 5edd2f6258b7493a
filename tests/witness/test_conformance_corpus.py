"""Real projects' own tests against their own code (issue 48's conformance corpus, a
handful of its items vendored under tests/data/conformance by `benchmarks/conformance.py
--vendor`, each with its license), graded by a real `evalpin run` of a replayed answer.

Every item passes plain `python -m pytest` with the project in-process (checked here
too), so the right grade of each is a pass. The items evalpin does not pass today are
listed in KNOWN with what it does instead and why (the class the object model's table or
the outcome rules name); such an item must still be graded exactly that, and the day it
passes, its test fails asking to remove it from KNOWN: the list only shrinks by a fix.
A graded fail nobody listed fails its test: plain pytest passes it, so nothing may.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clirun import cli_process

# Each item graded in real sandboxes by a real `evalpin run` in a child, which the lanes'
# look at the module's imports cannot see (tests/lanes.py): so said here. It also sends
# the file to a worker with the sandbox files, not last with the millisecond ones.
pytestmark = pytest.mark.sandbox

DATA = Path(__file__).parents[1] / "data" / "conformance"
ITEMS = sorted(f"{test.parent.parent.name}/{test.stem}" for test in DATA.glob("*/tests/test_*.py"))

# item: (the grade today, its reasons, why). Each is a correct project, so a pass is right.
KNOWN = {
    "ordered-set/test_ordered_set": (
        "disputed",
        ["witness:compared"],
        "values: OrderedSet([1, 2]) == [1, 2] is decided by the candidate's __eq__ "
        "in-process; the witness's rule never lets candidate code judge equality with the "
        "test's data (inherent by that rule)",
    ),
}


def _coding_set(folder: Path) -> None:
    """The vendored items as one coding set and one replayed answer per item."""
    lines = ["schema: coding-eval/v1", "dataset_id: conformance", "dataset_version: '1'"]
    lines.append("items:")
    answers = []
    for item in ITEMS:
        project, test = item.split("/")
        files = {
            p.relative_to(DATA / project / "candidate").as_posix(): p.read_text()
            for p in sorted((DATA / project / "candidate").rglob("*"))
            if p.is_file()
        }
        test_file = folder / "tests" / project / f"{test}.py"
        test_file.parent.mkdir(parents=True, exist_ok=True)
        test_file.write_text((DATA / project / "tests" / f"{test}.py").read_text())
        (folder / f"{project}.md").write_text(f"Write {project}.\n")
        lines += [
            f"  - id: {item}",
            "    language: python",
            f"    prompt_file: {project}.md",
            f"    test_file: tests/{project}/{test}.py",
            "    timeout_s: 60",
            f"    expected_files: {json.dumps(sorted(files))}",
        ]
        answers.append({"case_id": item, "text": "", "files": files})
    (folder / "coding.yaml").write_text("\n".join(lines) + "\n")
    (folder / "replay.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("conformance")
    _coding_set(folder)
    run = ("run", "--fixtures", "coding.yaml", "--slot", "x=replay:replay.jsonl")
    done = cli_process(*run, "--seeds", "1", "--jobs", "2", "--out", "run.jsonl",
                       cwd=folder, timeout=900)  # fmt: skip
    assert done.code in (0, 1), done.err
    records = [json.loads(x) for x in (folder / "run.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in records if r["record"] == "case"}


def _plain_pytest(item: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Plain pytest on the item, the project in-process (the truth the grade follows)."""
    project, test = item.split("/")
    for path in (DATA / project / "candidate").rglob("*"):
        if path.is_file():
            target = tmp_path / path.relative_to(DATA / project / "candidate")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    (tmp_path / f"{test}.py").write_text((DATA / project / "tests" / f"{test}.py").read_text())
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
               f"{test}.py"]  # fmt: skip
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip


def test_the_vendored_items_are_there() -> None:
    assert len(ITEMS) >= 8
    assert set(KNOWN) <= set(ITEMS), "KNOWN names an item that is not vendored"
    for project in {item.split("/")[0] for item in ITEMS}:
        assert (DATA / project / "LICENSE").is_file()
        assert "sha256" in (DATA / project / "SOURCE.md").read_text()


@pytest.mark.parametrize("item", ITEMS)
def test_plain_pytest_passes_the_project(item: str, tmp_path: Path) -> None:
    done = _plain_pytest(item, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]


@pytest.mark.parametrize("item", ITEMS)
def test_a_correct_project_is_graded_pass(item: str, graded: dict[str, dict]) -> None:
    case = graded[item]
    grade = "pass" if case["pass"] else case.get("status", "fail")
    if item not in KNOWN:
        assert grade == "pass", (case.get("reasons"), case.get("witness_tail") or case["tail"])
        return
    expected, reasons, why = KNOWN[item]
    assert grade != "pass", f"{item} now passes: remove it from KNOWN ({why})"
    assert (grade, case["reasons"]) == (expected, reasons), (why, case.get("witness_tail"))
