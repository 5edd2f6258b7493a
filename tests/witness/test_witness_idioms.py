"""The witness on ordinary code nobody listed: a corpus of correct modules and tests,
written the way people write them, grouped so that one sandboxed run checks several
idioms of one class (exceptions, returned kinds, identity, in-place changes, class
behaviours, module tools, process state, file metadata, logging, threads, async, the
tests' own objects, value-backed numbers). Each case passes plain `python -m pytest`
in-process (`test_the_corpus_passes_in_plain_pytest`) and must grade `pass` under
`isolation: process` on both namespace backends; the few the wire cannot carry are
listed in UNCARRIED and must end disputed (never a fail). Real sandboxed runs, through
the real pipeline: plain pytest, then the witness on a pass."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.corpus.idioms import IDIOMS, UNCARRIED
from tests.harness import assert_plain_passes, expect, grade, item, verdict

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)
pytestmark = pytest.mark.wire  # the default backend, a parity share on the other: tests/lanes.py


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """Every case passes plain `python -m pytest` in-process, with nothing skipped."""
    assert_plain_passes({**IDIOMS, **UNCARRIED}, tmp_path)


@pytest.mark.parametrize("name", list(IDIOMS))
def test_an_ordinary_idiom_grades_pass(grade, backend: Isolation, name: str) -> None:
    outcome = grade(IDIOMS[name], backend)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.tail)


@pytest.mark.parametrize("name", list(UNCARRIED))
def test_what_the_wire_cannot_carry_is_disputed(grade, backend: Isolation, name: str) -> None:
    expect(grade(UNCARRIED[name], backend), "disputed")
