"""A one-item coding set on disk, as a user's would be, loaded by evalpin's own reader:
the harness every sandbox, witness and corpus test grades through; and the corpora's
machinery (tests/corpus/): a `Case`, its grade in a real sandbox (the `item` and `grade`
fixtures, imported by the modules that use them), plain pytest's view of it, and the
verdict a run's record would give it."""

from __future__ import annotations

import json
import secrets
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import CodingItem, load_fixtures
from evalpin.core.reasons import status_of
from evalpin.run.sandbox import Isolation, Outcome, run_item
from evalpin.run.sandbox.backends import OFF_UNENFORCED
from tests.capabilities import need
from tests.plain_pytest import run_sessions


def one_item(
    folder: Path,
    test_file: str,
    test_source: str,
    expected: str,
    *,
    item_id: str,
    dataset: str,
    files: dict[str, str] | None = None,
    **entry: object,
) -> CodingItem:
    """`folder` (made, if it is not there) holds a `coding-eval/v1` set of one item:
    its prompt, `test_file`, any other `files`, and `set.yaml` (JSON, which is YAML) with
    the item's `entry` keys over the defaults."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prompt.md").write_text(f"Write {expected}.\n")
    (folder / test_file).write_text(test_source)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    item = {
        "id": item_id,
        "language": "python",
        "prompt_file": "prompt.md",
        "test_file": test_file,
        "expected_files": [expected],
        **entry,
    }
    doc = {"schema": "coding-eval/v1", "dataset_id": dataset, "dataset_version": "1"}
    (folder / "set.yaml").write_text(json.dumps({**doc, "items": [item]}))
    case = load_fixtures(folder / "set.yaml").cases[0]
    assert isinstance(case, CodingItem)
    return case


# -- the corpora's cases (tests/corpus/) ----------------------------------------------


@dataclass(frozen=True)
class Case:
    """A candidate module and the test that grades it: one case of a corpus."""

    name: str
    module_file: str
    module_src: str
    test_src: str

    @property
    def test_file(self) -> str:
        return "test_" + self.module_file.removesuffix(".py") + ".py"


def _d(text: str) -> str:
    """Source written indented in a corpus, as its file holds it."""
    return textwrap.dedent(text).lstrip("\n")


def _corpus(*cases: Case) -> dict[str, Case]:
    """The cases by name (a parametrized test's ids); two of one name are a mistake."""
    named = {case.name: case for case in cases}
    assert len(named) == len(cases), "duplicate case ids"
    return named


def _case(name: str, module_file: str, module_src: str, test_src: str) -> Case:
    return Case(name, module_file, _d(module_src), _d(test_src))


# -- fixtures ---------------------------------------------------------------------------


@pytest.fixture
def item(tmp_path: Path) -> Callable[[Case], CodingItem]:
    def make(case: Case) -> CodingItem:
        return one_item(
            tmp_path / f"set-{secrets.token_hex(3)}",
            case.test_file,
            case.test_src,
            case.module_file,
            item_id=case.name,
            dataset="true-grade",
            timeout_s=20,
        )

    return make


@pytest.fixture
def grade(tmp_path: Path, item: Callable[[Case], CodingItem]) -> Callable[..., Outcome]:
    parent = tmp_path / "work"
    parent.mkdir()

    def go(case: Case, iso: Isolation) -> Outcome:
        outcome = run_item(
            item(case), {case.module_file: case.module_src}, workdir_parent=parent, isolation=iso
        )
        assert list(parent.iterdir()) == [], "the work directory was not removed"
        return outcome

    return go


# -- the corpus is correct: plain pytest, in-process ------------------------------------

# What evalpin pins for the graded run (python_classes and the rest).
PLAIN_INI = """\
[pytest]
python_classes = Test
python_functions = test
"""


def plain_pytest(cases: dict[str, Case], tmp_path: Path, *, basetemp: bool = False):
    """Each case laid out in a folder of its own under `tmp_path` and run there by plain
    `python -m pytest` (one session per case: tests/plain_pytest.py); by name."""
    sessions = {}
    for name, case in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / case.module_file).write_text(case.module_src)
        (folder / case.test_file).write_text(case.test_src)
        (folder / "pytest.ini").write_text(PLAIN_INI)
        extra = ["--basetemp", str(folder / "tmp")] if basetemp else []
        sessions[name] = (folder, ["-q", "-p", "no:cacheprovider", *extra, case.test_file])
    return run_sessions(sessions)


def assert_plain_passes(cases: dict[str, Case], tmp_path: Path) -> None:
    """Every case passes plain `python -m pytest` in-process (an attack: fools it)."""
    failed = plain_failures(cases, tmp_path)
    assert failed == {}, "\n\n".join(f"== {name}\n{out}" for name, out in failed.items())


def plain_failures(cases: dict[str, Case], tmp_path: Path) -> dict[str, str]:
    """The cases plain `python -m pytest` does not pass in-process (or skips part of),
    each with the end of its output."""
    return {
        name: run.stdout[-1500:]
        for name, run in plain_pytest(cases, tmp_path).items()
        if run.returncode != 0 or " skipped" in run.stdout
    }


def verdict(outcome: Outcome) -> str:
    """`pass`, `fail`, `disputed` (plain pytest passed, the witness did not: the wire's
    limit, never a fail) or `error`, as the run's record would say it."""
    if outcome.passed:
        return "pass"
    return status_of(outcome.reasons) or "fail"


def expect(outcome: Outcome, label: str) -> None:
    """The case's verdict is `label`; else its reasons and the witness's tail say why."""
    assert verdict(outcome) == label, (outcome.reasons, outcome.witness_tail)


def corpus_tests(carried: dict[str, Case], attacks: dict[str, Case], *plain_too: dict[str, Case]):
    """A witness corpus's three tests, for its module to bind under these names (pytest
    collects them there, with the module's marks): every case under plain pytest, in one
    interpreter (a correct one passes, an attack fools it; `plain_too`: other cases the
    module grades itself); each carried case graded `pass`; each attack `disputed`."""
    everything = {**carried, **attacks}
    for more in plain_too:
        everything.update(more)
    assert len(everything) == len(carried) + len(attacks) + sum(map(len, plain_too))

    def test_the_corpus_passes_in_plain_pytest(tmp_path: Path) -> None:
        assert_plain_passes(everything, tmp_path)

    @pytest.mark.parametrize("name", list(carried))
    def test_a_carried_case_grades_pass(grade, backend: Isolation, name: str) -> None:
        expect(grade(carried[name], backend), "pass")

    @pytest.mark.parametrize("name", list(attacks))
    def test_an_attack_never_passes(grade, backend: Isolation, name: str) -> None:
        expect(grade(attacks[name], backend), "disputed")

    return (
        test_the_corpus_passes_in_plain_pytest,
        test_a_carried_case_grades_pass,
        test_an_attack_never_passes,
    )


# -- a sandbox's own tests: one item graded by a call, on each backend -------------------

# No namespaces, no pids cgroup: what a machine without either gets.
BARE = Isolation("none", OFF_UNENFORCED, "test: nothing enforced", pids_cgroup=False)

CORRECT = "def add(a, b):\n    return a + b\n"
TEST_ADD = "from solution import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
# A test that passes when the probe in the model's code found nothing, and shows what it
# found when it did.
TEST_FOUND = (
    "import solution\n\ndef test_found_nothing():\n"
    "    assert not solution.FOUND, ' '.join(sorted(set(solution.FOUND)))\n"
)


# Grades one item in a process of its own: argv[1] the set, argv[2] the backend,
# argv[3] the solution file, argv[4] a work folder; prints the outcome as JSON.
GRADER = """
import json, sys
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import probe_isolation, run_item
item = load_fixtures(sys.argv[1]).cases[0]
iso = probe_isolation((sys.argv[2],))
files = {"solution.py": open(sys.argv[3]).read()}
outcome = run_item(item, files, isolation=iso, workdir_parent=sys.argv[4])
print(json.dumps({"kind": iso.kind, "why": iso.why, "passed": outcome.passed,
                  "reasons": outcome.reasons, "tail": outcome.tail}))
"""


def make_set(folder: Path, test: str, *, timeout: float = 30, memory_mb: int = 1024) -> Path:
    """A set of one item (`solution.py`, graded by `test`) in `folder`; its file."""
    one_item(
        folder, "test_solution.py", test, "solution.py", item_id="case", dataset="box",
        timeout_s=timeout, memory_mb=memory_mb, forbidden_imports=[],
    )  # fmt: skip
    return folder / "set.yaml"


def grade_set(set_file: Path, solution: str, iso: Isolation, **kwargs) -> Outcome:
    """The set's one item graded with `solution` as its `solution.py`."""
    item = load_fixtures(set_file).cases[0]
    return run_item(item, {"solution.py": solution}, isolation=iso, **kwargs)


NONE = Isolation("none", OFF_UNENFORCED, "no namespaces (tests)")


def grade_files(tmp_path: Path, iso: Isolation, files: dict[str, str], test_src: str) -> Outcome:
    """One item (its candidate `files`, its test), graded as `evalpin run` grades it."""
    names = sorted(files)
    item = one_item(
        tmp_path / f"set-{secrets.token_hex(3)}", "test_it.py", test_src, names[0],
        item_id="shared", dataset="shared", timeout_s=20, expected_files=names,
    )  # fmt: skip
    parent = tmp_path / "work"
    parent.mkdir(exist_ok=True)
    outcome = run_item(item, files, workdir_parent=parent, isolation=iso, always_witness=True)
    assert list(parent.iterdir()) == [], "the work directory was not removed"
    return outcome


@pytest.fixture(params=["unshare", "bwrap", "none"])
def anywhere(request: pytest.FixtureRequest, isolations: dict[str, Isolation]) -> Isolation:
    """Both namespace backends (skipped where one does not work; conftest's, probed once
    for the session) and no namespaces."""
    if request.param == "none":
        return NONE
    iso = isolations[request.param]
    if iso.kind == "none":
        need(request.param, iso.why)
    return iso
