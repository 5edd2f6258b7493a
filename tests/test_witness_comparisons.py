"""Comparisons and operators whose answer is not a truth (issue 48, with issue 49's "the
judge trusts no description"): a candidate's `==` that builds a query, an expression
object the tests compare, handed through candidate code. The candidate's answer comes
back as its stand-in; a truth it answers about the tests' data is never believed (the
attacks: always-true `__eq__`, a truthy object or plain value for an answer). Real
sandboxed runs through the real pipeline."""

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
)


ATTACKS = _corpus(
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
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """Every correct case passes plain `python -m pytest` in-process; every attack
    fools it (a forged pass)."""
    failed = plain_failures({**CARRIED, **ATTACKS}, tmp_path)
    assert failed == {}, "\n\n".join(f"== {name}\n{out}" for name, out in failed.items())


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_comparison_answered_with_an_object_is_carried(
    grade, backend: Isolation, name: str
) -> None:
    outcome = grade(CARRIED[name], backend)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_comparison_answer_never_decides_a_pass(grade, backend: Isolation, name: str) -> None:
    outcome = grade(ATTACKS[name], backend)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.witness_tail)
