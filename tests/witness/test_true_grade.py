"""The acceptance corpus for `isolation: process`: true grades, both ways.

Under process isolation the candidate module runs in a sandboxed worker and the pytest
process sees a stand-in that forwards to it. That must be invisible to honest code: every
CORRECT case (tests/corpus/true_grade.py) is a small module and a test written the way
people write pytest tests, it passes under plain in-process pytest
(`test_corpus_passes_in_plain_pytest` proves it),
and it must grade `pass` (no reasons) on both namespace backends. Every ATTACK case is a
wrong module whose honest result fails its tests, plus an attempt to forge the grade
through an object the test hands it; each must grade `fail`, even the ones that would fool
plain pytest (those are marked). Every case is a real sandboxed run: no mocks of evalpin.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalpin.run.sandbox import Isolation
from tests.corpus.true_grade import ATTACKS, CORRECT
from tests.harness import assert_plain_passes, grade, item, plain_pytest

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)
pytestmark = pytest.mark.wire  # the default backend, a parity share on the other: tests/lanes.py


def test_corpus_passes_in_plain_pytest(tmp_path: Path) -> None:
    """Every correct case passes plain `python -m pytest`, with nothing skipped."""
    assert_plain_passes(CORRECT, tmp_path)


# All but (k) are live: each fools plain pytest, which is why the grade must not.
FOOLS_PLAIN_PYTEST = sorted(set(ATTACKS) - {"file-object-buffer-and-class-globals"})


def test_the_attacks_fool_plain_pytest(tmp_path: Path) -> None:
    """The attacks are not duds: in-process, plain pytest exits 0 on each (the candidate
    is wrong, so that is a forged pass)."""
    fooled = plain_pytest({n: ATTACKS[n] for n in FOOLS_PLAIN_PYTEST}, tmp_path, basetemp=True)
    for name, run in fooled.items():
        assert run.returncode == 0, f"{name}:\n{run.stdout[-1500:]}"


# -- the grades -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CORRECT))
def test_a_correct_candidate_grades_pass(grade, backend: Isolation, name: str) -> None:
    outcome = grade(CORRECT[name], backend)
    assert outcome.reasons == [], outcome.tail
    assert outcome.passed, outcome.tail


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_through_a_handed_object_grades_fail(
    grade, backend: Isolation, name: str
) -> None:
    outcome = grade(ATTACKS[name], backend)
    assert not outcome.passed, outcome.tail
    assert outcome.reasons, outcome.tail
    # Every attack's honest result is a test failure: plain pytest's, or, for an attack
    # that fooled plain pytest, the witness's dispute (`witness:KIND`), never a pass.
    assert outcome.reasons == ["tests_failed"] or any(
        r.startswith("witness:") for r in outcome.reasons
    ), (outcome.reasons, outcome.tail)
