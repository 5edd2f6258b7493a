"""Ordinary Python the witness carries (issue 48), with the rule that the judge trusts
no description (issue 49 item 2). A comparison with the test's data that answers with
an object of the candidate's (a query, an expression) comes back as its stand-in, its
truth the judge's; a truth the candidate answers about the test's data is never
believed (the attacks). The tests' classes derived from a candidate's
`unittest.TestCase` harness are unittest's, their assertions the judge's. Correct
candidates that once broke the wire itself (a protocol error, the worker gone). Each
correct case passes plain `python -m pytest` in-process and must grade `pass` under
`isolation: process`; each attack fools plain pytest and must stay disputed. Real
sandboxed runs through the real pipeline."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "comparisons-that-build-filters",
        "sieve.py",
        """
        import operator


        class Field:
            def __init__(self, path=()):
                self._path = path

            def __getattr__(self, name):
                if name.startswith("_"):
                    raise AttributeError(name)
                return Field(self._path + (name,))

            def _rule(self, op, value):
                path = self._path

                def check(row):
                    for step in path:
                        row = row[step]
                    return op(row, value)

                return Filter(check, (op.__name__, path, value))

            def __eq__(self, value):
                return self._rule(operator.eq, value)

            def __ne__(self, value):
                return self._rule(operator.ne, value)

            def __lt__(self, value):
                return self._rule(operator.lt, value)

            def __ge__(self, value):
                return self._rule(operator.ge, value)

            __hash__ = None


        class Filter:
            def __init__(self, check, key):
                self._check, self._key = check, key

            def __call__(self, row):
                return bool(self._check(row))

            def __and__(self, other):
                return Filter(lambda r: self(r) and other(r), ("and", self._key, other._key))

            def __invert__(self):
                return Filter(lambda r: not self(r), ("not", self._key))

            def __eq__(self, other):
                return isinstance(other, Filter) and self._key == other._key

            def __hash__(self):
                return hash(self._key)

            def __repr__(self):
                return f"Filter{self._key!r}"


        class Table:
            def __init__(self, rows):
                self.rows = list(rows)

            def select(self, rule):
                return [r["name"] for r in self.rows if rule(r)]
        """,
        """
        import sieve as m

        ROWS = [
            {"name": "ines", "age": 41, "home": {"zone": "B"}},
            {"name": "odo", "age": 29, "home": {"zone": "B"}},
            {"name": "pia", "age": 35, "home": {"zone": "C"}},
        ]


        def test_filters_built_by_comparisons_select_rows():
            t = m.Table(ROWS)
            assert t.select(m.Field().age >= 35) == ["ines", "pia"]
            assert t.select((m.Field().age < 40) & (m.Field().home.zone == "B")) == ["odo"]
            assert t.select(~(m.Field().name != "pia")) == ["pia"]


        def test_a_filter_is_an_object_of_its_own():
            rule = m.Field().age == 29
            assert callable(rule) and rule({"age": 29}) and not rule({"age": 30})
            assert rule == (m.Field().age == 29)
            assert len({rule, m.Field().age == 29, m.Field().age == 30}) == 2
            assert "age" in repr(rule)
        """,
    ),
    _case(
        "the-tests-non-boolean-comparisons-through-candidate-code",
        "relate.py",
        """
        import operator

        SIGNS = {"<": operator.lt, ">": operator.gt, "<=": operator.le}
        REFUSED = {eval, exec, open}


        def relate(left, sign, right):
            answer = SIGNS[sign](left, right)
            if callable(answer) and answer in REFUSED:
                raise PermissionError(answer)
            return answer


        def relate_all(left, sign, rights):
            return [SIGNS[sign](left, r) for r in rights]
        """,
        """
        import relate as m


        class Clause:
            def __init__(self, text):
                self.text = text

            def __eq__(self, other):
                return self.text == getattr(other, "text", other)

            def __bool__(self):
                raise TypeError("a clause has no truth")


        class Column:
            def __init__(self, name):
                self.name = name

            def __lt__(self, other):
                return Clause(f"{self.name} < {other}")

            def __gt__(self, other):
                return Clause(f"{self.name} > {other}")


        def test_a_clause_comes_back_as_itself():
            col = Column("price")
            got = m.relate(col, ">", 10)
            assert type(got) is Clause and got == Clause("price > 10")
            assert [c.text for c in m.relate_all(col, "<", [1, 2])] == ["price < 1", "price < 2"]
        """,
    ),
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
    _case(
        "the-tests-class-handed-over-again",
        "registry.py",
        """
        KINDS = {}


        def register(cls, *names):
            for name in names:
                KINDS[name] = cls
            return cls


        def make(name, *args):
            return KINDS[name](*args)
        """,
        """
        import registry as m


        class Point:
            def __init__(self, x=0, y=0):
                self.x, self.y = x, y


        def test_registered_again_and_made():
            assert m.register(Point, "point") is Point
            assert m.register(Point, "P", "pt") is Point
            assert m.register(Point) is Point
            p = m.make("pt", 2, 3)
            assert isinstance(p, Point) and (p.x, p.y) == (2, 3)
        """,
    ),
    _case(
        "a-bound-callable-object-without-a-name",
        "binding.py",
        """
        import functools
        import types


        class Preset(functools.partial):
            def __get__(self, obj, owner=None):
                return self if obj is None else types.MethodType(self, obj)


        class Greeter:
            def __init__(self, who):
                self.who = who

            def greet(self, end="."):
                return f"hi {self.who}{end}"

            loud = Preset(greet, end="!")


        def greeting(who):
            return Greeter(who).loud
        """,
        """
        import binding as m


        def test_a_bound_preset_crosses_and_is_called():
            assert m.greeting("ana")() == "hi ana!"
            assert m.Greeter("bo").loud() == "hi bo!"
        """,
    ),
    _case(
        "lazy-objects-that-import-on-any-lookup",
        "moves.py",
        """
        import importlib


        class Moved:
            def __init__(self, name, module):
                self.name, self.module = name, module

            def __getattr__(self, attr):
                return getattr(importlib.import_module(self.module), attr)


        MOVED = [Moved("gone", "no_such_module_for_evalpin"), Moved("codec", "json")]
        """,
        """
        import moves as m


        def test_the_names_are_read_without_importing():
            assert [x.name for x in m.MOVED] == ["gone", "codec"]
            assert m.MOVED[1].dumps([1]) == "[1]"
        """,
    ),
    _case(
        "a-spy-on-os-getcwd-counts-the-candidates-calls-only",
        "where.py",
        """
        import os


        def describe(scrub):
            return {"cwd": "-" if scrub else os.getcwd(), "pid": "-"}
        """,
        """
        import os

        import where as m


        def test_scrubbed_never_asks(monkeypatch):
            calls = []
            real = os.getcwd

            def spy():
                calls.append(1)
                return real()

            monkeypatch.setattr(os, "getcwd", spy)
            assert m.describe(True)["cwd"] == "-"
            assert calls == []
            assert m.describe(False)["cwd"] == real()
            assert calls == [1]
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        "an-eq-answering-with-a-number-of-its-own",
        "oracle.py",
        """
        class Yes(int):
            pass


        class Result:
            def __eq__(self, other):
                return Yes(1)

            __hash__ = None


        def solve(n):
            return Result()
        """,
        """
        import oracle as m


        def test_solve():
            assert (m.solve(3) == 27) == True  # noqa: E712
        """,
    ),
    _case(
        "an-always-true-eq",
        "oracle.py",
        """
        class Result:
            def __eq__(self, other):
                return True

            __hash__ = None


        def solve(n):
            return Result()
        """,
        """
        import oracle as m


        def test_solve():
            assert m.solve(6) == 720
            assert m.solve(3) == 6
        """,
    ),
    _case(
        "an-eq-answering-with-a-truthy-object-of-its-own",
        "oracle.py",
        """
        class Yes:
            def __bool__(self):
                return True


        class Result:
            def __eq__(self, other):
                return Yes()

            def __ne__(self, other):
                return self

            __hash__ = None


        def solve(n):
            return Result()
        """,
        """
        import oracle as m


        def test_solve():
            assert m.solve(4) == [1, 2, 4]
            assert m.solve(4) != [1, 2]
        """,
    ),
    _case(
        "an-order-answering-with-itself",
        "oracle.py",
        """
        class Result:
            def __gt__(self, other):
                return self

            def __lt__(self, other):
                return self


        def solve(n):
            return Result()
        """,
        """
        import oracle as m


        def test_solve():
            assert 2.5 < m.solve(7) < 2.7
        """,
    ),
    _case(
        "an-eq-answering-with-a-truthy-plain-value",
        "oracle.py",
        """
        class Result:
            def __eq__(self, other):
                return ["yes"]

            __hash__ = None


        def solve(n):
            return Result()
        """,
        """
        import oracle as m


        def test_solve():
            assert m.solve("ab") == "ba"
        """,
    ),
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
    """Every correct case passes plain `python -m pytest` in-process; every attack
    fools it (a forged pass)."""
    assert_plain_passes({**CARRIED, **ATTACKS}, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_ordinary_python_is_carried(grade, backend: Isolation, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_answer_of_the_candidates_never_decides_a_pass(
    grade, backend: Isolation, name: str
) -> None:
    expect(grade(ATTACKS[name], backend), "disputed")
