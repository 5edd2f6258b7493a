"""The judge trusts no description, and no star import decides an assert (issue 49,
items 2 and 4). Each lying candidate is honest in plain pytest (so plain pytest passes
it) and, inside the witness's worker, returns a wrong object whose class description it
edits to claim bases (an exception, `collections.abc` collections, comparisons "forwarded"
as methods) whose inherited code would decide equality with the test's data on its
forwarded answers. None may grade `pass`. Star imports that would bind a candidate's name
over a builtin the test uses or a name the test has end `witness:shadowed`; a name the
test imports by name, one it never uses, or the very object it already has, pass. Real
sandboxed runs through the real pipeline, on both namespace backends."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import Case, _case, _corpus, _d, assert_plain_passes, grade, item, verdict

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire  # the default backend, a parity share on the other: tests/lanes.py

# In the witness's worker only: wrap whatever of the wire describes classes, so that the
# description of class `Wrong` claims what `changes` says (merged into its keys).
_LIAR = """
import sys


IN_WORKER = any(name.startswith("evalpin_wire") for name in sys.modules)


def lie(changes):
    def wrap(describe):
        def forged(*args, **kwargs):
            data = describe(*args, **kwargs)
            if isinstance(data, dict) and data.get("n") == "Wrong":
                for key, value in changes.items():
                    if key in ("d", "c", "fn"):
                        value = list(data.get(key) or []) + value
                    data[key] = value
            return data

        return forged

    for name, module in list(sys.modules.items()):
        if name.startswith("evalpin_wire") and callable(getattr(module, "describe", None)):
            module.describe = wrap(module.describe)
"""


def _liar(name: str, module_file: str, lie: str, wrong: str, right: str, test: str) -> Case:
    """A module that answers `right` in plain pytest and `wrong` (a `Wrong` instance
    described with `lie`) inside the witness's worker."""
    source = _LIAR + _d(wrong) + f"\n\nif IN_WORKER:\n    lie({lie})\n\n\n" + _d(right)
    return Case(name, module_file, source, _d(test))


LIES = _corpus(
    _liar(
        "exception-base-and-abc-set-over-forwarded-iteration",
        "evens.py",
        '{"x": ["KeyError"], "sb": [["collections.abc", "Set"]]}',
        """
        class Wrong:
            def __iter__(self):
                return iter([2, 4, 6])

            def __len__(self):
                return 3

            def __contains__(self, x):
                return x in (2, 4, 6)
        """,
        """
        def evens(xs):
            if IN_WORKER:
                return Wrong()
            return {x for x in xs if x % 2 == 0}
        """,
        """
        from evens import evens


        def test_evens():
            assert evens([1, 2, 3, 4, 6]) == {2, 4, 6}
            assert evens([2, 4, 6]) <= {2, 4, 6, 8}
        """,
    ),
    _liar(
        "exception-base-and-abc-mapping-over-forwarded-items",
        "tally.py",
        '{"x": ["LookupError"], "sb": [["collections.abc", "Mapping"]]}',
        """
        class Wrong:
            def __getitem__(self, key):
                return {"a": 2, "b": 1}[key]

            def __iter__(self):
                return iter(["a", "b"])

            def __len__(self):
                return 2
        """,
        """
        def tally(word):
            if IN_WORKER:
                return Wrong()
            out = {}
            for ch in word:
                out[ch] = out.get(ch, 0) + 1
            return out
        """,
        """
        import tally as m


        def test_tally():
            assert m.tally("aab") == {"a": 2, "b": 1}
        """,
    ),
    _liar(
        "a-dict-subclass-whose-own-attributes-claim-its-contents",
        "counts.py",
        '{"pk": ["__getstate__", "__setstate__", "__eq__", "__bool__"]}',
        """
        class Wrong(dict):
            def __init__(self):
                super().__init__(a=1)
                self.__eq__ = lambda other: True
                self.keys = lambda: ["a", "b"]
                self.items = lambda: [("a", 2), ("b", 1)]
                self.get = {"a": 2, "b": 1}.get


        if IN_WORKER:  # every name the judge asks about is "the object's own"
            for _name, _module in list(sys.modules.items()):
                if _name.startswith("evalpin_wire") and hasattr(_module, "shadows"):
                    _module.shadows = lambda target, name: True
        """,
        """
        def counts(word):
            import collections

            return Wrong() if IN_WORKER else dict(collections.Counter(word))
        """,
        """
        import counts as m


        def test_counts():
            got = m.counts("aab")
            assert sorted(got.items()) == [("a", 2), ("b", 1)] and got.get("a") == 2
            assert got == {"a": 2, "b": 1}
            assert dict(got) == {"a": 2, "b": 1}
        """,
    ),
    _liar(
        "abc-sequence-claimed-on-a-plain-class",
        "seq.py",
        '{"sb": [["collections.abc", "Sequence"]], "d": ["__getitem__", "__len__"]}',
        """
        class Wrong:
            def __getitem__(self, i):
                return [1, 2, 3][i]

            def __len__(self):
                return 3
        """,
        """
        def first_three():
            if IN_WORKER:
                return Wrong()
            return (1, 2, 3)
        """,
        """
        from collections.abc import Sequence

        import seq as m


        def test_first_three():
            got = m.first_three()
            assert isinstance(got, Sequence)
            assert got == (1, 2, 3)
        """,
    ),
    _liar(
        "exception-base-with-its-comparisons-forwarded",
        "verdicts.py",
        '{"x": ["ValueError"], "c": ["__eq__", "__ne__"], "d": ["__eq__", "__hash__"], "h": True}',
        """
        class Wrong(Exception):
            def __eq__(self, other):
                return True

            def __ne__(self, other):
                return False

            def __hash__(self):
                return hash("expected")
        """,
        """
        def verdict(x):
            if IN_WORKER:
                return Wrong()
            return "expected"
        """,
        """
        import verdicts as m


        def test_verdict():
            assert m.verdict(1) == "expected"
            assert m.verdict(1) in {"expected"}
        """,
    ),
    _liar(
        "abc-set-claimed-with-an-order-against-the-tests-set",
        "subset.py",
        '{"sb": [["collections.abc", "Set"]], "d": ["__iter__", "__len__", "__contains__"]}',
        """
        class Wrong:
            def __iter__(self):
                return iter([])

            def __len__(self):
                return 0

            def __contains__(self, x):
                return False
        """,
        """
        def picked(xs):
            if IN_WORKER:
                return Wrong()
            return frozenset(x for x in xs if x > 1)
        """,
        """
        import subset as m


        def test_picked():
            got = m.picked([1, 2, 3])
            assert got <= {2, 3} and got >= {2, 3}
        """,
    ),
)


# Lies about the class itself (its module and qualified name): the judge presents an
# installed library's class only where it finds that class itself, and the claim changes
# no comparison, no number rule, and names no class of the candidate's or the tests'.
CLAIMS = _corpus(
    _liar(
        "an-installed-class-claimed-for-an-always-equal-object",
        "matches.py",
        '{"m": "difflib", "q": "SequenceMatcher", "n": "SequenceMatcher", "h": True}',
        """
        class Wrong:
            def __eq__(self, other):
                return True

            def __hash__(self):
                return hash("best")
        """,
        """
        def best(words):
            if IN_WORKER:
                return Wrong()
            return max(words, key=len)
        """,
        """
        import difflib

        import matches as m


        def test_best():
            got = m.best(["a", "best", "be"])
            assert not isinstance(got, difflib.SequenceMatcher) or got == "best"
            assert got == "best" and got in {"best"}
        """,
    ),
    _liar(
        "an-installed-number-claimed-to-open-approx",
        "circles.py",
        '{"m": "decimal", "q": "Decimal", "n": "Decimal", '
        '"d": ["__sub__", "__rsub__", "__abs__", "__float__"]}',
        """
        class Wrong:
            def __sub__(self, other):
                return 0.0

            def __rsub__(self, other):
                return 0.0

            def __abs__(self):
                return 0.0

            def __float__(self):
                return 12.566
        """,
        """
        def area(r):
            if IN_WORKER:
                return Wrong()
            return 3.14159 * r * r
        """,
        """
        import pytest

        import circles as m


        def test_area():
            assert m.area(2.0) == pytest.approx(12.566, rel=1e-3)
        """,
    ),
    _liar(
        "a-class-of-the-candidates-own-module-claimed",
        "shapes.py",
        '{"m": "shapes", "q": "Square", "n": "Square"}',
        """
        class Square:
            def __init__(self, side):
                self.side = side


        class Wrong:
            side = 3
        """,
        """
        def make(side):
            if IN_WORKER:
                return Wrong()
            return Square(side)
        """,
        """
        import shapes as m


        def test_make():
            square = m.Square
            assert square(2).side == 2
            got = m.make(2)
            assert isinstance(got, square) and got.side in (2, 3)
        """,
    ),
    _liar(
        "a-class-of-the-tests-own-module-in-the-work-folder-claimed",
        "builder.py",
        '{"m": "test_builder", "q": "Part", "n": "Part"}',
        """
        class Wrong:
            size = 1
        """,
        """
        def build(kind):
            if IN_WORKER:
                return Wrong()
            return kind()
        """,
        """
        import builder as m


        class Part:
            size = 1


        def test_build():
            got = m.build(Part)
            assert isinstance(got, Part) and got.size == 1
        """,
    ),
    _liar(
        "an-installed-exception-claimed",
        "parsing.py",
        '{"m": "json.decoder", "q": "JSONDecodeError", "n": "JSONDecodeError"}',
        """
        class Wrong:
            pos = 1
        """,
        """
        import json


        def problem(text):
            if IN_WORKER:
                return Wrong()
            try:
                json.loads(text)
            except json.JSONDecodeError as error:
                return error
        """,
        """
        import parsing as m


        def test_problem():
            got = m.problem("[")
            assert isinstance(got, ValueError) and got.pos == 1
        """,
    ),
    _liar(
        "an-abstract-collection-claimed-against-the-tests-own-set",
        "picks.py",
        '{"m": "collections.abc", "q": "Set", "n": "Set", '
        '"d": ["__iter__", "__len__", "__contains__"]}',
        """
        class Wrong:
            def __iter__(self):
                return iter([1, 2])

            def __len__(self):
                return 2

            def __contains__(self, x):
                return True
        """,
        """
        def evens(xs):
            if IN_WORKER:
                return Wrong()
            return frozenset(x for x in xs if x % 2 == 0)
        """,
        """
        from collections.abc import Set

        import picks as m


        class Bag(Set):
            def __init__(self, items):
                self.items = list(items)

            def __iter__(self):
                return iter(self.items)

            def __len__(self):
                return len(self.items)

            def __contains__(self, x):
                return x in self.items


        def test_evens():
            got = m.evens([1, 2, 3, 4])
            assert isinstance(got, Set) and Bag([2, 4]) == got
        """,
    ),
)


# Wrong modules that bind, in plain sight, a name over what the test decides with.
SHADOWING = _corpus(
    _case(
        "defines-all-that-always-agrees",
        "pairs.py",
        """
        def all(iterable):
            return True


        def swapped(pairs):
            return list(pairs)  # wrong: not swapped
        """,
        """
        from pairs import *


        def test_swapped():
            got = swapped([(1, 2), (3, 4)])
            assert all(a == b for a, b in zip(got, [(2, 1), (4, 3)]))
        """,
    ),
    _case(
        "assigns-len-at-the-top-level",
        "uniq.py",
        """
        len = lambda obj: 3  # noqa: E731


        def uniq(xs):
            return list(xs)  # wrong: duplicates kept
        """,
        """
        from uniq import *


        def test_uniq():
            assert len(uniq([5, 5, 6, 6, 7])) == 3
        """,
    ),
    _case(
        "rebinds-the-tests-own-approx",
        "kinetics.py",
        """
        class _Near:
            def __eq__(self, other):
                return True


        def approx(expected, **kwargs):
            return _Near()


        def energy(m, v):
            return m * v  # wrong: not half m v squared
        """,
        """
        from pytest import approx

        from kinetics import *


        def test_energy():
            assert energy(2.0, 3.0) == approx(9.0)
        """,
    ),
)

# Correct modules whose star import binds no name the test decides with against it.
STAR_FINE = _corpus(
    _case(
        "the-test-imports-the-builtin-named-task-by-name",
        "summing.py",
        """
        def sum(xs, start=0):
            total = start
            for x in xs:
                total = total + x
            return total
        """,
        """
        from summing import *
        from summing import sum


        def test_sum():
            assert sum([1, 2, 3]) == 6 and sum([], 4) == 4
            assert len([1, 2]) == 2
        """,
    ),
    _case(
        "a-builtin-named-helper-the-test-never-uses",
        "clamp.py",
        """
        import math
        from math import floor


        def min(a, b):
            return a if a < b else b


        def clamp(x, lo, hi):
            return min(hi, lo if x < lo else x)
        """,
        """
        import math
        from math import floor

        from clamp import *


        def test_clamp():
            assert clamp(5, 0, 3) == 3 and clamp(-1, 0, 3) == 0
            assert floor(2.5) == 2 and math.floor(1.5) == 1
        """,
    ),
)


@pytest.mark.parametrize("name", list(LIES))
def test_a_lying_description_never_passes(grade, backend: Isolation, name: str) -> None:
    outcome = grade(LIES[name], backend)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.witness_tail)


@pytest.mark.parametrize("name", list(CLAIMS))
def test_a_lying_class_name_never_passes(grade, backend: Isolation, name: str) -> None:
    outcome = grade(CLAIMS[name], backend)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.witness_tail)


def test_the_lies_pass_in_plain_pytest(tmp_path) -> None:
    assert_plain_passes(CLAIMS, tmp_path)


@pytest.mark.parametrize("name", list(SHADOWING))
def test_a_star_import_over_what_the_test_decides_with_is_disputed(
    grade, backend: Isolation, name: str
) -> None:
    outcome = grade(SHADOWING[name], backend)
    assert outcome.reasons == ["witness:shadowed"], (outcome.reasons, outcome.witness_tail)


@pytest.mark.parametrize("name", list(STAR_FINE))
def test_a_star_import_the_test_may_rely_on_passes(grade, backend: Isolation, name: str) -> None:
    outcome = grade(STAR_FINE[name], backend)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail)
