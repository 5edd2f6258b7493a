"""A tests' class as the worker sees it (issue 48, the object model's class rows): it has
the test module's name and qualified name, so `pickle` finds it by reference there, and
its `__dict__` holds the tests' class's own public names, so a decorator that finds its
method by `owner.__dict__[name]` works on it; a deep copy of a test's object whose
candidate part points back at it shares one memo across both processes, and a copy keeps
the private state the candidate stored on the original; a test's object whose `__dict__`
is its own dict subclass answers the candidate's writes as its own. Each correct case
passes plain `python -m pytest` in-process and must grade `pass` under `isolation:
process`; each attack fools plain pytest and must never pass: the namespace shows no
private value of the tests' and takes no write. Real sandboxed runs through the real
pipeline."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-cache-finds-its-method-in-its-owners-namespace",
        "memo.py",
        """
        class remembered:
            def __init__(self, fn):
                self.fn, self.name = fn, None

            def __set_name__(self, owner, name):
                self.name = name

            def __get__(self, obj, kind=None):
                if obj is None:
                    return self
                for cls in type(obj).__mro__:
                    if self.name in cls.__dict__:
                        found = cls.__dict__[self.name]
                        break
                else:
                    found = None
                if found is not self:
                    raise LookupError(f"{self.name} is not where it was put")
                seen = {}

                def call(*args):
                    if args not in seen:
                        seen[args] = self.fn(obj, *args)
                    return seen[args]

                return call
        """,
        """
        from memo import remembered


        class Counter:
            calls = 0

            @remembered
            def square(self, x):
                Counter.calls += 1
                return x * x


        def test_square_is_remembered():
            c = Counter()
            square = c.square
            assert square(3) == 9
            assert square(3) == 9
            assert Counter.calls == 1
        """,
    ),
    _case(
        "a-tests-class-pickled-by-reference-inside-a-candidates-object",
        "registry.py",
        """
        import pickle


        class Entry:
            def __init__(self, kind, label):
                self.kind, self.label = kind, label


        def saved(kind, label):
            return pickle.loads(pickle.dumps(Entry(kind, label)))


        def same_class_after_pickling(kind):
            return pickle.loads(pickle.dumps(kind)) is kind
        """,
        """
        from registry import saved, same_class_after_pickling


        class Widget:
            pass


        class Outer:
            class Inner:
                pass


        def test_the_class_comes_back_as_itself():
            entry = saved(Widget, "w")
            assert entry.kind is Widget
            assert entry.label == "w"
            assert same_class_after_pickling(Widget)
            assert same_class_after_pickling(Outer.Inner)
        """,
    ),
    _case(
        "a-tests-class-namespace-listed",
        "survey.py",
        """
        def public_methods(cls):
            return sorted(
                n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")
            )


        def constants(cls):
            return {n: v for n, v in cls.__dict__.items() if n.isupper()}
        """,
        """
        from survey import constants, public_methods


        class Shape:
            UNIT = "m"
            SIDES = 4

            def area(self):
                return 1

            def scale(self, k):
                return k


        def test_the_namespace():
            assert public_methods(Shape) == ["area", "scale"]
            assert constants(Shape) == {"UNIT": "m", "SIDES": 4}
            assert "area" in Shape.__dict__
            assert "missing" not in Shape.__dict__
        """,
    ),
    _case(
        "a-deep-copy-whose-candidate-part-points-back-at-the-copy",
        "helpers.py",
        """
        class Bound:
            def __init__(self, owner):
                self.owner = owner

            def __reduce__(self):
                return (Bound, (self.owner,))


        def attach(obj):
            obj.helper = Bound(obj)
            return obj.helper
        """,
        """
        import copy
        import pickle

        from helpers import attach


        class Holder:
            pass


        def test_the_copy_is_bound_to_the_copy():
            h = Holder()
            attach(h)
            c = copy.deepcopy(h)
            assert c.helper is not h.helper
            assert c.helper.owner is c
            assert h.helper.owner is h
            p = pickle.loads(pickle.dumps(h))
            assert type(p) is Holder and type(p.helper.owner) is Holder
        """,
    ),
    _case(
        "a-copy-keeps-the-private-state-the-candidate-stored",
        "tags.py",
        """
        class Tag:
            def __init__(self, n):
                self.n = n


        def tag(obj):
            old = obj.__dict__.get("_tag")
            obj._tag = Tag(1 if old is None else old.n + 1)
            return obj._tag.n
        """,
        """
        import copy
        import pickle

        from tags import tag


        class Item:
            pass


        def test_the_tag_survives_copies():
            a = Item()
            assert tag(a) == 1
            b = copy.deepcopy(a)
            assert tag(b) == 2
            c = pickle.loads(pickle.dumps(a))
            assert tag(c) == 2
            assert tag(a) == 2
        """,
    ),
    _case(
        "a-tests-object-whose-namespace-is-its-own-dict-subclass",
        "stash.py",
        """
        def stash(obj, name, value):
            try:
                obj.__dict__.setdefault(name, value)
            except TypeError as e:
                return f"refused: {e}"
            return "stored"
        """,
        """
        from stash import stash


        class Frozen(dict):
            def __setitem__(self, key, value):
                raise TypeError("frozen")

            def setdefault(self, key, value=None):
                raise TypeError("frozen")


        class Record:
            def __init__(self):
                self.__dict__ = Frozen()


        class Open:
            pass


        def test_the_objects_own_namespace_answers():
            assert stash(Record(), "cache", 1) == "refused: frozen"
            assert stash(Open(), "cache", 1) == "stored"
        """,
    ),
)

# Each candidate reaches, in the witness's worker only, past what the namespace rule
# grants: a private value of the tests' class, or a write to its namespace.
_IN_WORKER = """
        import sys

        IN_WORKER = any(name.startswith("evalpin_wire") for name in sys.modules)
"""

ATTACKS = _corpus(
    _case(
        "the-tests-private-class-value-stays-there",
        "peek.py",
        _IN_WORKER
        + """

        def answer(cls):
            if IN_WORKER:  # the worker may not read what the tests keep private
                return cls.__dict__.get("_expected", 0)
            return 42
        """,
        """
        from peek import answer


        class Puzzle:
            _expected = 42


        def test_answer():
            assert answer(Puzzle) == Puzzle._expected
        """,
    ),
    _case(
        "a-write-through-the-namespace-never-reaches-the-tests-class",
        "units.py",
        _IN_WORKER
        + """

        def _always(self, other):
            return True


        def warm(reading, by):
            made = type(reading)
            if not IN_WORKER:
                return made(reading.degrees + by)
            peer, ident = type.__dict__["__dict__"].__get__(made)["_evalpin_class"]
            for name in ("__eq__", "eq"):
                try:  # a forged write: the namespace is read-only in the judge
                    peer.request("own", obj=ident, name=name, args=["set", _always])
                except Exception:
                    pass
            return made(reading.degrees)
        """,
        """
        from units import warm


        class Celsius:
            def __init__(self, degrees):
                self.degrees = degrees

            def __eq__(self, other):
                return isinstance(other, Celsius) and self.degrees == other.degrees


        def test_warm():
            assert warm(Celsius(20), 5) == Celsius(25)
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """Every correct case passes plain `python -m pytest` in-process; every attack
    fools it (a forged pass)."""
    assert_plain_passes({**CARRIED, **ATTACKS}, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_tests_class_is_named_and_holds_its_namespace(
    grade, backend: Isolation, name: str
) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_namespace_grants_no_more_than_reading(grade, backend: Isolation, name: str) -> None:
    expect(grade(ATTACKS[name], backend), "disputed")
