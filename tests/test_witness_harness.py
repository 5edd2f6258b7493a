"""A candidate's own `unittest.TestCase` harness that the tests derive their test
classes from (issue 48): pytest collects them as unittest's, the harness's helpers run
on the candidate's side, and the tests' assertions stay the judge's whatever the
harness overrides (issue 49: the judge trusts no description). Real sandboxed runs
through the real pipeline."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.test_true_grade import Case, _corpus, _d, grade, item, plain_failures
from tests.test_witness_idioms import verdict

__all__ = ["grade", "item"]  # the fixtures, shared with test_true_grade (`backend`: conftest)

pytestmark = pytest.mark.wire


def _case(name: str, module_file: str, module_src: str, test_src: str) -> Case:
    return Case(name, module_file, _d(module_src), _d(test_src))


CARRIED = _corpus(
    _case(
        "tests-derived-from-the-candidates-test-case",
        "lint.py",
        """
        import unittest


        def loud_words(text):
            return sorted(w for w in text.split() if w.isupper())


        class LintCase(unittest.TestCase):
            strict = True

            def setUp(self):
                self.checked = []

            def expect(self, text, *words):
                found = loud_words(text)
                self.checked.append(text)
                self.assertEqual(found, sorted(words), f"for {text!r}")
                return found
        """,
        """
        import unittest

        from lint import LintCase, loud_words


        class TestLoud(LintCase):
            def test_helper_runs_and_keeps_state(self):
                assert self.expect("NO way OK", "OK", "NO") == ["NO", "OK"]
                self.assertEqual(self.checked, ["NO way OK"])

            def test_the_helper_fails_a_wrong_expectation(self):
                with self.assertRaises(AssertionError):
                    self.expect("calm words", "CALM")

            def test_the_tests_own_assertions(self):
                self.assertTrue(self.strict)
                self.assertIn("X", loud_words("X y"))
                with self.subTest(word="Z"):
                    self.assertEqual(loud_words("Z"), ["Z"])


        class TestDeeper(TestLoud):
            def test_a_unittest_case(self):
                self.assertIsInstance(self, unittest.TestCase)
                self.assertTrue(self.id().endswith("test_a_unittest_case"))
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        "a-harness-whose-assertions-always-hold",
        "forge.py",
        """
        import unittest


        def area(w, h):
            return w + h


        class Case(unittest.TestCase):
            def assertEqual(self, first, second, msg=None):
                pass

            def assertTrue(self, expr, msg=None):
                pass
        """,
        """
        from forge import Case, area


        class TestArea(Case):
            def test_area(self):
                self.assertEqual(area(3, 4), 12)
                self.assertTrue(area(2, 5) == 10)
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """The correct case passes plain `python -m pytest` in-process; the attack fools it."""
    failed = plain_failures({**CARRIED, **ATTACKS}, tmp_path)
    assert failed == {}, "\n\n".join(f"== {name}\n{out}" for name, out in failed.items())


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_candidates_test_case_harness_is_carried(grade, backend: Isolation, name: str) -> None:
    outcome = grade(CARRIED[name], backend)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_harness_never_decides_the_tests_assertions(grade, backend: Isolation, name: str) -> None:
    outcome = grade(ATTACKS[name], backend)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.witness_tail)
