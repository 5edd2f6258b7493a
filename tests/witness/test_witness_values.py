"""Values keep their types and classes behave as classes across the witness (issue 48,
docs/concepts/isolation.md's object model): a candidate class deriving from a builtin
value type beside a mixin of its own, class methods reached through the tests'
subclasses and `super()`, a candidate's caching descriptor writing into the test's
object's `__dict__`, a frozen container of the candidate's used as a key. Each correct
case passes plain `python -m pytest` in-process and must grade `pass` under `isolation:
process`; each attack fools plain pytest and must never pass (issue 49: the judge
decides a value-backed stand-in's comparisons with the tests' data on the value it
decoded itself, and writes into the test's objects only as the rules allow)."""

from __future__ import annotations

import pytest

from tests.harness import Case, _corpus, _d, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire


def _case(name: str, module_file: str, module_src: str, test_src: str) -> Case:
    return Case(name, module_file, _d(module_src), _d(test_src))


CARRIED = _corpus(
    _case(
        "value-subclasses-beside-mixins",
        "units.py",
        """
        from collections import namedtuple


        class Labelled:
            unit = "?"

            def label(self):
                return f"{self}{self.unit}"

            def same_unit(self, other):
                return getattr(other, "unit", None) == self.unit


        class Celsius(Labelled, float):  # the mixin first: the value's layout second
            unit = "C"

            def warmer(self, by):
                return Celsius(float(self) + by)

            def __add__(self, other):
                return Celsius(float(self) + float(other))


        class Grams(Labelled, int):
            unit = "g"

            def split(self, parts):
                return [Grams(int(self) // parts)] * parts


        class Sku(str, Labelled):  # the value first, the mixin after
            unit = ""

            def family(self):
                return Sku(self.split("-")[0])


        class Span(namedtuple("Span", "start stop"), Labelled):
            __slots__ = ()
            unit = "s"

            @property
            def length(self):
                return self.stop - self.start

            def shifted(self, by):
                return type(self)(self.start + by, self.stop + by)
        """,
        """
        import units as m


        def test_a_float_subclass_keeps_its_type_value_and_methods():
            t = m.Celsius(21.5)
            assert type(t).__name__ == "Celsius"
            assert isinstance(t, m.Celsius) and isinstance(t, float)
            assert isinstance(t, m.Labelled) and issubclass(m.Celsius, m.Labelled)
            assert t == 21.5 and t.label() == "21.5C"
            hotter = t.warmer(3)
            assert type(hotter) is type(t) and hotter == 24.5
            assert isinstance(t + 1, m.Celsius) and t + 1 == 22.5
            assert f"{t:.0f}" == "22"


        def test_an_int_subclass_splits_into_its_own_kind():
            g = m.Grams(10)
            parts = g.split(3)
            assert parts == [3, 3, 3]
            assert all(type(p).__name__ == "Grams" for p in parts)
            assert g.same_unit(parts[0]) and not g.same_unit(m.Celsius(1.0))
            assert {g: "bag"}[10] == "bag"


        def test_a_str_subclass_with_a_mixin_after_it():
            s = m.Sku("shoe-42")
            assert isinstance(s, str) and isinstance(s, m.Labelled)
            assert s.family() == "shoe" and type(s.family()) is m.Sku
            assert "-".join([s, "x"]) == "shoe-42-x"


        def test_a_named_tuple_beside_a_mixin():
            span = m.Span(2, 5)
            assert span == (2, 5) and span.start == 2 and span.length == 3
            assert isinstance(span, tuple) and isinstance(span, m.Span)
            moved = span.shifted(10)
            assert type(moved) is m.Span and moved == (12, 15)
            assert moved._replace(stop=20) == (12, 20)
            assert span.label() == "Span(start=2, stop=5)s"
        """,
    ),
    _case(
        "the-candidates-comparison-between-its-own-value-objects",
        "hosts.py",
        """
        class Host(str):
            def __eq__(self, other):
                if isinstance(other, Host):
                    return self.lower().rstrip(".") == other.lower().rstrip(".")
                return str.__eq__(self, other)

            def __hash__(self):
                return hash(self.lower().rstrip("."))


        class Frozen(dict):
            def __hash__(self):
                return hash(frozenset(self.items()))

            def __setitem__(self, key, value):
                raise TypeError("Frozen is immutable")


        class Unhashable(Exception):
            pass


        class Sealed(dict):
            def __hash__(self):
                raise Unhashable("a value that does not hash")
        """,
        """
        import pytest

        import hosts as m


        def test_two_hosts_compare_as_the_candidate_says():
            assert m.Host("Example.COM.") == m.Host("example.com")
            assert m.Host("a.org") != m.Host("b.org")
            assert m.Host("plain") == "plain"


        def test_a_frozen_dict_is_a_key():
            key = m.Frozen(a=1, b=2)
            seen = {key: "first"}
            assert seen[key] == "first"
            assert key == {"a": 1, "b": 2}
            with pytest.raises(TypeError):
                key["c"] = 3


        def test_its_own_hash_error_reaches_the_test():
            with pytest.raises(m.Unhashable):
                {m.Sealed(x=[1]): 1}
        """,
    ),
    _case(
        "class-methods-through-the-tests-subclasses",
        "money.py",
        """
        class Amount:
            CURRENCY = "EUR"

            def __init__(self, cents):
                self.cents = cents

            @classmethod
            def parse(cls, text):
                whole, _, frac = text.partition(".")
                return cls(int(whole) * 100 + int(frac or 0))

            @classmethod
            def zero(cls):
                return cls.parse("0")

            @staticmethod
            def valid(text):
                return text.replace(".", "", 1).isdigit()

            def __str__(self):
                return f"{self.cents // 100}.{self.cents % 100:02d}"

            def doubled(self):
                return type(self)(self.cents * 2)
        """,
        """
        import money as m


        class Dollars(m.Amount):
            CURRENCY = "USD"

            @classmethod
            def parse(cls, text):
                return super().parse(text.lstrip("$"))

            def __str__(self):
                return "$" + super().__str__()


        class Plain(m.Amount):
            pass


        def test_an_overridden_class_method_calls_the_candidates():
            d = Dollars.parse("$3.25")
            assert type(d) is Dollars and d.cents == 325
            assert str(d) == "$3.25" and str(d.doubled()) == "$6.50"


        def test_an_inherited_class_method_binds_the_subclass():
            z = Dollars.zero()
            assert isinstance(z, Dollars) and str(z) == "$0.00"
            p = Plain.parse("1.5")
            assert type(p) is Plain and p.cents == 105 and str(p) == "1.05"


        def test_class_attributes_and_static_methods_through_a_subclass():
            assert Plain.CURRENCY == "EUR" and Dollars.CURRENCY == "USD"
            assert Plain.valid("2.50") and not Dollars.valid("x")
        """,
    ),
    _case(
        "a-candidate-caching-descriptor-on-the-tests-class",
        "lazy.py",
        """
        import functools


        class once:
            def __init__(self, fn):
                self.fn = fn
                self.__doc__ = fn.__doc__

            def __get__(self, obj, owner=None):
                if obj is None:
                    return self
                value = obj.__dict__[self.fn.__name__] = self.fn(obj)
                return value


        class memo:
            # keeps its result under a private name of the object's own
            def __init__(self, fn):
                self.fn = fn

            def __set_name__(self, owner, name):
                self.key = "__memo_" + name

            def __get__(self, obj, owner=None):
                if obj is None:
                    return self
                if self.key not in obj.__dict__:
                    obj.__dict__.setdefault(self.key, self.fn(obj))
                return obj.__dict__[self.key]


        def cached_names(obj):
            return sorted(k for k in vars(obj) if not k.startswith("_"))


        def wrapped(fn):
            @functools.wraps(fn)
            def call(*args):
                return fn(*args)

            return call


        def data_fields(obj):
            return [n for n in dir(obj) if n[0] != "_" and not callable(getattr(obj, n))]
        """,
        """
        from unittest.mock import Mock

        import lazy as m


        class Report:
            def __init__(self, rows):
                self.rows = rows
                self.builds = 0

            @m.once
            def total(self):
                "the sum of the rows"
                self.builds += 1
                return sum(self.rows)



        def test_the_value_is_cached_on_the_object():
            r = Report([1, 2, 3])
            assert r.total == 6 and r.total == 6 and r.builds == 1
            assert "total" in vars(r)
            assert m.cached_names(r) == ["builds", "rows", "total"]
            del r.total
            assert r.total == 6 and r.builds == 2
            assert Report.total.__doc__ == "the sum of the rows"


        class Sheet:
            def __init__(self, cells):
                self.cells = cells
                self.builds = 0

            @m.memo
            def widest(self):
                self.builds += 1
                return max(self.cells)


        class Point:
            kind = "pt"

            def __init__(self):
                self.y, self.x, self._hidden = 2, 1, 0

            def norm(self):
                return self.x + self.y


        def test_a_double_of_the_tests_wrapped_by_the_candidate():
            double = Mock(return_value=8)
            assert m.wrapped(double)(4) == 8
            double.assert_called_once_with(4)


        def test_dir_lists_the_names_the_candidate_reads():
            assert m.data_fields(Point()) == ["kind", "x", "y"]


        def test_a_private_name_of_the_candidates():
            s = Sheet([4, 9])
            assert s.widest == 9 and s.builds == 1
            assert "widest" not in vars(s)
        """,
    ),
    _case(
        "calls-keyed-by-self-and-cls",
        "keying.py",
        """
        class Keyer:
            # a callable object whose keywords may be named anything

            def __init__(self, prefix):
                self.prefix = prefix

            def __call__(self_, *args, **kwargs):
                return (self_.prefix, args, tuple(sorted(kwargs.items())))


        def key_of(*args, **kwargs):
            return (args, tuple(sorted(kwargs.items())))


        memo_key = Keyer("m")
        """,
        """
        import keying


        def test_a_callable_object_takes_self_and_cls_as_keywords():
            got = keying.memo_key(1, self="obj", cls="K")
            assert got == ("m", (1,), (("cls", "K"), ("self", "obj")))


        def test_a_function_takes_them_too():
            assert keying.key_of(self=3) == ((), (("self", 3),))
        """,
    ),
)


ATTACKS = _corpus(
    _case(
        "a-value-subclass-beside-a-mixin-claims-equality",
        "scores.py",
        """
        class Agreeable:
            def __eq__(self, other):
                return True  # wrong: equal to anything

            __hash__ = object.__hash__


        class Score(Agreeable, int):
            pass


        def total(points):
            return Score(sum(points) - 1)  # wrong: one short
        """,
        """
        import scores as m


        def test_total():
            assert m.total([3, 4, 5]) == 12
        """,
    ),
    _case(
        "a-caching-descriptor-overwrites-the-tests-private-state",
        "cache.py",
        """
        class stamp:
            def __init__(self, fn):
                self.fn = fn

            def __get__(self, obj, owner=None):
                obj.__dict__["_expected"] = "forged"  # wrong: rewrites the answer
                return self.fn(obj)
        """,
        """
        import cache as m


        class Check:
            def __init__(self):
                self._expected = "real"

            @m.stamp
            def answer(self):
                return "forged"


        def test_answer():
            c = Check()
            assert c.answer == c._expected
        """,
    ),
    _case(
        "a-caching-descriptor-reads-the-tests-private-expectation",
        "peek.py",
        """
        class peek:
            def __init__(self, fn):
                self.fn = fn

            def __get__(self, obj, owner=None):
                return obj.__dict__.get("_solution")  # wrong: reads the answer
        """,
        """
        import peek as m


        class Puzzle:
            def __init__(self):
                self._solution = 42

            @m.peek
            def solve(self):
                return 41


        def test_solve():
            p = Puzzle()
            assert p.solve == 42
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_carried_case_grades_pass,
    test_an_attack_never_passes,
) = corpus_tests(CARRIED, ATTACKS)
