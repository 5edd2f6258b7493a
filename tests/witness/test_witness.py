"""The pipeline of an `isolation: process` item (issue 38), for real, on both backends.

Plain pytest with the candidate imported in-process is the truth for honest code and alone
decides a fail; a pass is witnessed by the same tests under process isolation (the wire).
Its truth table: an honest pass passes (both ran); an honest fail fails on plain pytest
alone (the witness never starts); tests the wire cannot carry, or a witness that sees
another outcome or runs out of its own time, make a disputed case (`witness:KIND`, status
"disputed"), never `tests_failed` and never a pass; a forger that fools plain pytest but
not the witness is not a pass; a fail only the witness passes is `tampering:witness`
where both run (`evalpin check`). Every grade is a sandboxed run: the only stand-in is a
counting subclass of the witness's mode, to show when it was started.
"""

from __future__ import annotations

import os
import secrets
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import CodingItem
from evalpin.core.instrument.graders.witness import (
    witness_kind,
    witness_timeout,
    witness_timeout_most,
    witnessed,
)
from evalpin.core.reasons import is_disputed, status_of
from evalpin.core.records import DISPUTED
from evalpin.run import isolation
from evalpin.run.sandbox import Isolation, Outcome, run_item
from evalpin.run.sandbox import item as sandbox_item
from evalpin.run.set_check import check_item
from tests.harness import one_item
from tests.procs import surviving


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


TEST = _d(
    """
    from ledger import balance


    def test_sums_credits_and_debits():
        assert balance([("credit", 5), ("debit", 2), ("credit", 1)]) == 4


    def test_empty_is_zero():
        assert balance([]) == 0
    """
)
RIGHT = _d(
    """
    def balance(entries):
        sign = {"credit": 1, "debit": -1}
        return sum(sign[kind] * amount for kind, amount in entries)
    """
)
WRONG = "def balance(entries):\n    return sum(amount for _, amount in entries)\n"

# The witness's process never imports the tests: in it, no test module is loaded. A
# candidate can tell where it runs from that alone, which these use to behave otherwise
# under the witness than under plain pytest.
WHERE = _d(
    """
    import sys


    def _in_the_tests():
        return "_pytest.main" in sys.modules  # pytest's process, not the witness's worker


    """
)
# Right where it runs beside the tests, wrong under the witness.
RIGHT_ONLY_BESIDE_THE_TESTS = WHERE + _d(
    """
    def balance(entries):
        if not _in_the_tests():
            return -1
        sign = {"credit": 1, "debit": -1}
        return sum(sign[kind] * amount for kind, amount in entries)
    """
)
# Wrong beside the tests, right under the witness.
WRONG_ONLY_BESIDE_THE_TESTS = WHERE + _d(
    """
    def balance(entries):
        sign = {"credit": 1, "debit": -1}
        total = sum(sign[kind] * amount for kind, amount in entries)
        return total + 1 if _in_the_tests() else total
    """
)
# Right everywhere, but it takes its time under the witness only.
SLOW_UNDER_THE_WITNESS = WHERE + _d(
    """
    import time


    def balance(entries):
        if not _in_the_tests():
            time.sleep(SLEEP)
        sign = {"credit": 1, "debit": -1}
        return sum(sign[kind] * amount for kind, amount in entries)
    """
)
# A frame of the test's handed to the candidate: a process's own machinery, no kind the wire
# carries, while plain pytest runs it like any call (a socket or an sqlite3 connection it
# carries by reference: tests/witness/test_witness_resources.py).
HANDS_A_FRAME = _d(
    """
    import sys

    from ledger import line_of


    def test_reads_the_line_of_the_frame_it_is_given():
        frame = sys._getframe()
        assert line_of(frame) == frame.f_lineno
    """
)
LINE_OF = _d(
    """
    def line_of(frame):
        return frame.f_lineno
    """
)
# Wrong, and forges plain pytest's verdict: every report it makes is turned into a pass
# (the report's constructor, patched from inside the pytest process it shares).
FORGER = WRONG + _d(
    """

    import sys

    _reports = sys.modules.get("_pytest.reports")
    if _reports is not None:
        _made = _reports.TestReport.from_item_and_call.__func__

        def _passing(cls, item, call):
            report = _made(cls, item, call)
            if report.when == "call":
                report.outcome, report.longrepr = "passed", None
            return report

        _reports.TestReport.from_item_and_call = classmethod(_passing)
    """
)


@pytest.fixture
def make_item(tmp_path: Path) -> Callable[..., CodingItem]:
    def make(test: str = TEST, files: dict[str, str] | None = None, **extra: object) -> CodingItem:
        return one_item(
            tmp_path / f"set{len(list(tmp_path.iterdir()))}",
            "test_ledger.py",
            test,
            "ledger.py",
            item_id="ledger",
            dataset="witness",
            files=files,
            **{"timeout_s": 30, **extra},  # generous: a pass expected on a loaded machine
        )

    return make


@pytest.fixture
def witnesses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the witness was started (the real mode, counted)."""
    started: list[int] = []

    class Counted(isolation.ProcessMode):
        def __init__(self, *args: object) -> None:
            started.append(1)
            super().__init__(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(isolation, "ProcessMode", Counted)
    return started


@pytest.fixture
def grade(tmp_path: Path) -> Callable[..., Outcome]:
    parent = tmp_path / "work"
    parent.mkdir()

    def go(item: CodingItem, code: str, iso: Isolation, **kwargs: object) -> Outcome:
        outcome = run_item(
            item, {"ledger.py": code}, workdir_parent=parent, isolation=iso, **kwargs
        )
        assert list(parent.iterdir()) == [], "the work directories were not removed"
        return outcome

    return go


def disputed(outcome: Outcome) -> bool:
    return status_of(outcome.reasons) == DISPUTED


# -- the truth table --------------------------------------------------------------------


@pytest.fixture(params=["after", "beside"])
def cores(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The witness after plain pytest (no core to spare: `--jobs` as many as the cores)
    or started beside it (a core to spare)."""
    monkeypatch.setattr(sandbox_item.CORES, "cores", 1 if request.param == "after" else 2)
    return request.param


def test_an_honest_pass_is_witnessed_and_passes(
    make_item, grade, backend, witnesses, cores
) -> None:
    outcome = grade(make_item(), RIGHT, backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail
    assert witnesses == [1]
    assert outcome.witness_tail == "" and outcome.witness_failed_tests == []


def test_an_honest_fail_fails_on_plain_pytest_alone(
    make_item, grade, backend, witnesses, cores
) -> None:
    outcome = grade(make_item(), WRONG, backend)
    assert (outcome.passed, outcome.reasons) == (False, ["tests_failed"])
    assert outcome.failed_tests == ["test_sums_credits_and_debits"]
    # A fail needs no witness: none starts, or the one started beside is stopped and
    # its grade never read.
    assert witnesses == ([] if cores == "after" else [1])
    assert outcome.witness_tail == "" and outcome.witness_failed_tests == []
    assert "test_sums_credits_and_debits" in outcome.tail


def test_a_witness_started_beside_a_plain_fail_is_stopped(
    make_item, grade, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wrong beside the tests, and under the witness a process that would sleep a minute
    more: the plain fail stops the witness, whose whole tree is killed at once."""
    monkeypatch.setattr(sandbox_item.CORES, "cores", 2)
    mark = f"{secrets.randbelow(10**9)}.{secrets.randbelow(10**6):06d}"
    code = WRONG_ONLY_BESIDE_THE_TESTS + _d(
        f"""

        import subprocess
        import time

        if not _in_the_tests():
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep({mark})"])
            time.sleep(60)
        """
    )
    try:
        outcome = grade(make_item(), code, backend)
        assert outcome.reasons == ["tests_failed"] and outcome.witness_tail == ""
        assert outcome.seconds < 40  # not the minute the witness would have taken
        assert surviving(mark) == []
    finally:
        for pid in surviving(mark):
            os.kill(pid, 9)


def test_what_the_wire_cannot_carry_is_disputed_never_failed(make_item, grade, backend) -> None:
    outcome = grade(make_item(HANDS_A_FRAME), LINE_OF, backend)
    assert not outcome.passed
    assert outcome.reasons == ["witness:unsupported"], outcome.witness_tail
    assert disputed(outcome) and "tests_failed" not in outcome.reasons
    # Both tails kept: plain pytest's pass, and the witness's words on what it could not do.
    assert "1 passed" in outcome.tail
    assert "the witness could not carry" in outcome.witness_tail
    assert "builtins.frame" in outcome.witness_tail


def test_another_outcome_under_the_witness_is_disputed(make_item, grade, backend, cores) -> None:
    outcome = grade(make_item(), RIGHT_ONLY_BESIDE_THE_TESTS, backend)
    assert not outcome.passed and disputed(outcome), outcome.reasons
    assert outcome.reasons == ["witness:failed"]
    assert outcome.failed_tests == []  # plain pytest failed none
    assert outcome.witness_failed_tests == ["test_sums_credits_and_debits", "test_empty_is_zero"]
    assert "2 passed" in outcome.tail and "2 failed" in outcome.witness_tail


def test_past_the_witness_timeout_is_disputed(
    make_item, grade, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_item, "witness_timeout", lambda timeout_s, plain_s=None: 3.0)
    outcome = grade(make_item(), SLOW_UNDER_THE_WITNESS.replace("SLEEP", "60"), backend)
    assert outcome.reasons == ["witness:timeout"] and disputed(outcome)
    assert "timeout" not in outcome.reasons
    assert "killed after 3 s (the witness's timeout" in outcome.witness_tail


# The rule's arithmetic and where the witness starts do not depend on the backend (the
# witness killed past its timeout, and stopped beside a plain fail, stay on both, above):
# the default backend, and one `how` at least on the other (tests/lanes.py).
@pytest.mark.wire
@pytest.mark.parametrize("how", ["beside", "after", "alone"])
def test_the_witness_timeout_grows_with_plain_pytests_time(
    make_item, grade, backend, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Plain pytest's own seconds on the item lengthen the witness's timeout, whether the
    witness started beside plain pytest (its clock raised while it runs), after it, or
    alone after it: a witness slower than the timeout without them still passes. Beside,
    it is slower than the item's own timeout too: the witness's timeout is its own (the
    real rule's figures: `test_the_witness_timeout_is_generous`)."""
    asked: list[float | None] = []
    # Beside, the witness starts on the first figure and plain pytest must end within it
    # and within the item's timeout on a loaded machine (10 s, 12 s: 3 s did not, 8 s
    # was tight at a load of 20), and the witness takes 14 s; after it or alone, the
    # witness starts once plain pytest's seconds are known, so the first figure is only
    # what a witness given no seconds would get (1 s), and a witness of 3 s shows it was
    # not.
    first, sleep = (10.0, "7") if how == "beside" else (1.0, "1.5")  # slept twice

    def rule(timeout_s: float, plain_s: float | None = None) -> float:
        asked.append(plain_s)
        return first if plain_s is None else 10.0 + 200 * plain_s

    monkeypatch.setattr(sandbox_item, "witness_timeout", rule)
    if how == "after":  # no core to spare: the witness waits for plain pytest
        monkeypatch.setattr(sandbox_item.CORES, "cores", 1)
    slow = SLOW_UNDER_THE_WITNESS.replace("SLEEP", sleep)
    outcome = grade(make_item(timeout_s=12), slow, backend, witness_alone=how == "alone")
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.witness_tail
    assert [p for p in asked if p is not None] and all(p is None or p > 0 for p in asked)


def test_a_forger_that_fools_plain_pytest_is_not_a_pass(make_item, grade, backend) -> None:
    outcome = grade(make_item(), FORGER, backend)
    assert not outcome.passed, outcome.tail
    assert "passed" in outcome.tail  # plain pytest was fooled...
    assert outcome.reasons == ["witness:failed"]  # ...the witness was not
    assert outcome.witness_failed_tests == ["test_sums_credits_and_debits"]


def test_a_fail_only_the_witness_passes_is_tampering(make_item, grade, backend) -> None:
    """Where both run (`always_witness`, as `evalpin check` grades): a fail, named."""
    outcome = grade(make_item(), WRONG_ONLY_BESIDE_THE_TESTS, backend, always_witness=True)
    assert (outcome.passed, outcome.reasons) == (False, ["tampering:witness", "tests_failed"])
    assert outcome.failed_tests == ["test_sums_credits_and_debits", "test_empty_is_zero"]
    # During a run the witness never runs on a fail: plain pytest's word stands alone.
    alone = grade(make_item(), WRONG_ONLY_BESIDE_THE_TESTS, backend)
    assert alone.reasons == ["tests_failed"]


def test_an_in_process_item_has_no_witness(make_item, grade, backend, witnesses) -> None:
    item = make_item(HANDS_A_FRAME, isolation="in-process")
    assert grade(item, LINE_OF, backend).reasons == []
    assert grade(item, LINE_OF, backend, always_witness=True).reasons == []
    assert witnesses == []


# -- evalpin check: both grades, for every reference --------------------------------------


def test_check_runs_both_and_names_each_disagreement(make_item, backend) -> None:
    def check(test: str, reference: str, starting: str) -> list[str]:
        item = make_item(
            test,
            files={"ref.py": reference, "start.py": starting},
            reference_files={"ledger.py": "ref.py"},
            starting_files={"ledger.py": "start.py"},
        )
        return check_item(
            item, lambda it, files: run_item(it, files, isolation=backend, always_witness=True)
        ).problems

    assert check(TEST, RIGHT, WRONG) == []
    # A reference plain pytest fails and the witness passes: the witness hides a failure.
    problems = check(TEST, WRONG_ONLY_BESIDE_THE_TESTS, WRONG)
    assert len(problems) == 2, problems
    assert problems[0].startswith("the witness passes the reference, which plain pytest fails")
    assert problems[1].startswith("the reference does not pass: fail (tests_failed")
    # Tests the witness cannot carry: named, with what it could not carry.
    (problem,) = check(HANDS_A_FRAME, LINE_OF, "def line_of(frame):\n    return 0\n")
    assert problem.startswith("the witness cannot carry the tests: plain pytest passes the ref")
    assert "witness:unsupported" in problem and "builtins.frame" in problem


# -- the rule, pure -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("witness", "kind"),
    [
        (["sandbox_error:unsupported", "tests_failed"], "unsupported"),
        (["timeout"], "timeout"),
        (["sandbox_error:memory"], "memory"),
        (["sandbox_error:setup"], "sandbox"),
        (["tests_failed"], "failed"),
    ],
)
def test_what_the_witness_saw_names_the_dispute(witness: list[str], kind: str) -> None:
    assert witness_kind(witness) == kind
    passed, reasons = witnessed((True, []), (False, witness))
    assert (passed, reasons) == (False, [f"witness:{kind}"])
    assert all(map(is_disputed, reasons)) and status_of(reasons) == DISPUTED


def test_plain_pytest_alone_decides_a_fail() -> None:
    for plain in (["tests_failed"], ["timeout"], ["sandbox_error:memory"]):
        assert witnessed((False, plain), None) == (False, plain)
        assert witnessed((False, plain), (False, ["tests_failed"])) == (False, plain)
    # A timeout the witness's longer clock got through is the candidate's own slowness.
    assert witnessed((False, ["timeout"]), (True, [])) == (False, ["timeout"])
    assert witnessed((False, ["tests_failed"]), (True, [])) == (
        False,
        ["tampering:witness", "tests_failed"],
    )
    assert witnessed((True, []), (True, [])) == (True, [])
    with pytest.raises(ValueError, match="witness"):
        witnessed((True, []), None)


def test_the_witness_timeout_is_generous() -> None:
    assert witness_timeout(2) == 60 and witness_timeout(30) == 120
    # 20x plain pytest's own seconds here where that is more, that part at most 30 min
    assert witness_timeout(30, 2.0) == 120 and witness_timeout(30, 9.0) == 180
    assert witness_timeout(60, 60.0) == 1200 and witness_timeout(200, 200.0) == 1800
    assert witness_timeout(600, 600.0) == 2400  # the item's own 4x stays uncapped
    assert witness_timeout_most(60) == witness_timeout(60, 60.0)
