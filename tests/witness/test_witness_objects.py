"""The witness's object model (issue 48: docs/concepts/isolation.md's table), row by row,
on correct candidates written as people write them: classes behave as classes, identity
holds both ways, values keep their types and bytes, the test's tools work on candidate
code. Each case passes plain `python -m pytest` in-process and must grade `pass` under
`isolation: process` on both namespace backends; the rows the table calls disputed
(inherently) must end disputed, never a fail. Attacks on the rules these rows state
never pass. Real sandboxed runs through the real pipeline."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire  # the default backend, a parity share on the other: tests/lanes.py


CARRIED = _corpus(
    # -- classes behave as classes ---------------------------------------------------
    _case(
        "class-attributes-properties-and-abstract-methods",
        "figures.py",
        """
        import abc
        import functools


        class Figure(abc.ABC):
            corners = 0

            @abc.abstractmethod
            def perimeter(self): ...

            @abc.abstractmethod
            def scaled(self, k): ...

            @property
            def label(self):
                return f"{type(self).__name__.lower()}/{self.corners}"

            @functools.cached_property
            def heavy(self):
                return self.perimeter() * 10


        class Triangle(Figure):
            corners = 3

            def __init__(self, a, b, c):
                self.sides = (a, b, c)

            def perimeter(self):
                return sum(self.sides)

            def scaled(self, k):
                return Triangle(*(s * k for s in self.sides))
        """,
        """
        import functools
        import inspect

        import pytest

        import figures as m


        def test_class_and_instance_attributes():
            t = m.Triangle(3, 4, 5)
            assert m.Triangle.corners == 3 and t.corners == 3
            t.corners = 9
            assert m.Triangle.corners == 3 and t.corners == 9
            assert vars(t) == {"sides": (3, 4, 5), "corners": 9}


        def test_descriptors_seen_on_the_class():
            assert isinstance(m.Figure.label, property)
            assert m.Figure.label.fget(m.Triangle(1, 1, 1)) == "triangle/3"
            assert isinstance(m.Figure.heavy, functools.cached_property)
            assert m.Triangle(1, 2, 2).heavy == 50


        def test_abstract_method_sets():
            assert m.Figure.__abstractmethods__ == frozenset({"perimeter", "scaled"})
            assert inspect.isabstract(m.Figure) and not inspect.isabstract(m.Triangle)
            with pytest.raises(TypeError):
                m.Figure()
            assert isinstance(m.Triangle(1, 1, 1).scaled(2), m.Figure)
        """,
    ),
    _case(
        "generic-aliases-and-dataclass-fields",
        "stock.py",
        """
        import dataclasses
        from typing import Generic, TypeVar

        T = TypeVar("T")


        class Crate(Generic[T]):
            def __init__(self, *items):
                self.items = list(items)

            def first(self):
                return self.items[0]


        @dataclasses.dataclass(order=True)
        class Part:
            code: str
            weight: float = dataclasses.field(default=1.0, metadata={"unit": "kg"})
            bins: list = dataclasses.field(default_factory=list, compare=False, repr=False)
        """,
        """
        import dataclasses

        import stock as m


        def test_class_getitem_is_cached_and_keeps_the_origin():
            assert m.Crate[int] is m.Crate[int]
            crate = m.Crate[str]("a", "b")
            assert crate.first() == "a"
            assert crate.__orig_class__ == m.Crate[str]


        def test_dataclass_fields_as_declared():
            fields = {f.name: f for f in dataclasses.fields(m.Part)}
            assert fields["weight"].metadata["unit"] == "kg"
            assert fields["weight"].default == 1.0
            assert fields["bins"].default_factory is list
            assert not fields["bins"].compare and not fields["bins"].repr
            assert fields["code"].type is str
            part = m.Part("x1")
            assert dataclasses.asdict(part) == {"code": "x1", "weight": 1.0, "bins": []}
            assert m.Part("a") < m.Part("b")
        """,
    ),
    _case(
        "candidate-descriptors-and-bases-on-the-tests-classes",
        "checked.py",
        """
        class Bounded:
            def __init__(self, low, high):
                self.low, self.high = low, high

            def __set_name__(self, owner, name):
                self.slot = "_" + name

            def __get__(self, obj, owner=None):
                if obj is None:
                    return self
                return getattr(obj, self.slot)

            def __set__(self, obj, value):
                if not self.low <= value <= self.high:
                    raise ValueError(f"{value} out of range")
                setattr(obj, self.slot, value)


        class Handler:
            prefix = "handled"

            def handle(self, item):
                return f"{self.prefix}:{item}"


        class ParseError(ValueError):
            pass


        def explain(err):
            return f"{type(err).__name__}({err}) is a ParseError: {isinstance(err, ParseError)}"


        def reraise(err):
            raise err
        """,
        """
        import pytest

        import checked as m


        class Dial:
            level = m.Bounded(0, 10)

            def __init__(self, level):
                self.level = level


        def test_a_candidate_descriptor_on_a_tests_class():
            dial = Dial(3)
            assert dial.level == 3
            dial.level = 7
            assert dial.level == 7 and dial._level == 7
            with pytest.raises(ValueError, match="out of range"):
                dial.level = 11
            assert isinstance(Dial.__dict__["level"], m.Bounded)


        def test_super_chains_through_candidate_bases():
            class Loud(m.Handler):
                def handle(self, item):
                    return super().handle(item).upper()

            class Tagged:
                def handle(self, item):
                    return "[" + super().handle(item) + "]"

            class Both(Tagged, Loud):
                pass

            assert Loud().handle("a") == "HANDLED:A"
            assert Both().handle("b") == "[HANDLED:B]"


        def test_a_tests_exception_derived_from_the_candidates():
            class EmptyInput(m.ParseError):
                pass

            err = EmptyInput("nothing to read")
            assert m.explain(err) == "EmptyInput(nothing to read) is a ParseError: True"
            with pytest.raises(EmptyInput) as info:
                m.reraise(err)
            assert info.value is err and str(err) == "nothing to read"
        """,
    ),
    _case(
        "the-tests-functions-and-classes-handed-to-candidate-code",
        "rules.py",
        """
        import inspect
        import types


        def expand(rule):
            if isinstance(rule, types.FunctionType):
                return {rule.__name__: expand(rule())}
            if isinstance(rule, (list, tuple)):
                return [expand(r) for r in rule]
            return rule


        def apply_all(fn, rows):
            arity = len(inspect.signature(fn).parameters)
            return [fn(*(row, n, rows)[:arity]) for n, row in enumerate(rows)]


        def tagged(tag):
            def mark(fn):
                fn.tag = tag
                return fn

            return mark


        def make(cls, *args):
            return cls(*args)


        class Cache:
            def __init__(self):
                self._data = {}

            def __getitem__(self, key):
                if key not in self._data:
                    return self.__missing__(key)
                return self._data[key]

            def __missing__(self, key):
                raise KeyError(key)


        def pick(items, index):
            return items[index]
        """,
        """
        import inspect

        import rules as m


        def digit():
            return "0"


        def number():
            return [digit, "."]


        def test_the_tests_functions_are_functions_there():
            assert m.expand(number) == {"number": [{"digit": "0"}, "."]}
            assert m.apply_all(lambda row: row * 2, [1, 2]) == [2, 4]
            assert m.apply_all(lambda row, n: n, [5, 6]) == [0, 1]


        @m.tagged("slow")
        def measured():
            return 1


        def test_a_decorator_marks_the_tests_function():
            assert measured.tag == "slow" and measured() == 1
            assert inspect.isfunction(measured)


        class Upper(m.Cache):
            def __missing__(self, key):
                return key.upper()


        class Position:
            def __init__(self, i):
                self.i = i

            def __index__(self):
                return self.i


        def test_the_tests_subclasses_and_numbers():
            assert Upper()["ab"] == "AB"
            assert isinstance(m.make(Upper), Upper)
            assert m.pick(["a", "b", "c"], Position(2)) == "c"
        """,
    ),
    _case(
        "stdlib-callables-stored-and-handed",
        "clocks.py",
        """
        import random


        class Sampler:
            def __init__(self, choose=random.choice):
                self.choose = choose


        class Stamp:
            def __init__(self, now):
                self.now = now
                self.first = now()

            def later(self):
                return self.now() >= self.first
        """,
        """
        import random
        from datetime import datetime

        import clocks as m


        def test_a_stdlib_function_comes_back_as_itself():
            assert m.Sampler().choose is random.choice
            assert m.Sampler(choose=max).choose is max


        def test_a_stdlib_class_method_as_a_callback():
            assert m.Stamp(datetime.now).later()
        """,
    ),
    # -- identity both ways ----------------------------------------------------------
    _case(
        "identity-of-graphs-weak-references-and-caches",
        "network.py",
        """
        import copy
        import functools
        import weakref


        class Station:
            def __init__(self, name):
                self.name = name
                self.links = []


        def line(*names):
            stations = [Station(n) for n in names]
            for a, b in zip(stations, stations[1:]):
                a.links.append(b)
                b.links.append(a)
            return stations


        def duplicate(stations):
            return copy.deepcopy(stations)


        _sizes = weakref.WeakKeyDictionary()
        computed = []


        def size_of(doc):
            if doc not in _sizes:
                computed.append(doc.title)
                _sizes[doc] = len(doc.title)
            return _sizes[doc]


        watchers = weakref.WeakValueDictionary()


        def watch(key, obj):
            watchers[key] = obj


        def is_same(a, b):
            return a is b


        def power(base, exp):
            return base**exp


        def squarer():
            return functools.partial(power, exp=2)


        def pair_of_rows():
            row = [0, 0]
            return [row, row]


        def tree():
            root = {"name": "root", "children": []}
            root["children"].append({"name": "leaf", "parent": root})
            return root
        """,
        """
        import copy
        import functools
        import gc
        import weakref

        import network as m


        class Doc:
            def __init__(self, title):
                self.title = title


        def test_one_stand_in_per_object():
            a, b, c = m.line("a", "b", "c")
            assert a.links[0] is b and b.links[0] is a and c.links[0] is b


        def test_deep_copies_keep_the_graph():
            stations = m.line("x", "y")
            mine = copy.deepcopy(stations)
            assert mine[0].links[0] is mine[1] and mine[0] is not stations[0]
            theirs = m.duplicate(stations)
            assert theirs[1].links[0] is theirs[0]


        def test_the_tests_objects_come_home_as_themselves():
            doc = Doc("hello")
            assert m.is_same(doc, doc)
            m.watch("d", doc)
            assert m.watchers["d"] is doc
            assert m.size_of(doc) == 5 and m.size_of(doc) == 5
            assert m.computed == ["hello"]


        def test_the_candidates_weak_references_follow_the_tests_objects():
            doc = Doc("brief")
            m.watch("gone", doc)
            assert "gone" in m.watchers
            del doc
            gc.collect()
            assert "gone" not in m.watchers


        def test_weak_references_to_candidate_objects():
            station = m.line("solo")[0]
            ref = weakref.ref(station)
            assert ref() is station
            held = weakref.WeakValueDictionary({"s": station})
            del station
            gc.collect()
            assert ref() is None and "s" not in held


        def test_partials_and_shared_values():
            square = m.squarer()
            assert isinstance(square, functools.partial) and square(7) == 49
            assert square.keywords == {"exp": 2}
            rows = m.pair_of_rows()
            assert rows[0] is rows[1]
            root = m.tree()
            assert root["children"][0]["parent"] is root
        """,
    ),
    _case(
        "static-methods-and-the-tests-objects-inside-copies",
        "expiry.py",
        """
        import copy
        import pickle


        class Store:
            @staticmethod
            def weight(value):
                return 1

            def __init__(self, clock):
                self.clock = clock
                self.items = {}

            def put(self, key, value):
                self.items[key] = (value, self.clock.now())


        def clone(store):
            return copy.deepcopy(store)


        def roundtrip(store):
            return pickle.loads(pickle.dumps(store))
        """,
        """
        import copy

        import expiry as m


        class Clock:
            def __init__(self):
                self.t = 0

            def now(self):
                self.t += 1
                return self.t


        def test_a_static_method_is_one_function():
            store = m.Store(Clock())
            assert store.weight is m.Store.weight and store.weight("x") == 1


        def test_the_tests_object_inside_a_copy_is_copied():
            clock = Clock()
            store = m.Store(clock)
            store.put("a", 1)
            twin = m.clone(store)
            twin.put("b", 2)
            assert clock.t == 1 and twin.items["b"] == (2, 2)
            again = m.roundtrip(store)
            again.put("c", 3)
            assert clock.t == 1 and again.items["c"] == (3, 2)
            mine = copy.deepcopy(store)
            mine.put("d", 4)
            assert clock.t == 1
        """,
    ),
    # -- values keep their types and bytes --------------------------------------------
    _case(
        "values-keep-their-types-and-bytes",
        "quantities.py",
        """
        import sys


        class Seconds(float):
            def __add__(self, other):
                return Seconds(float(self) + float(other))

            __radd__ = __add__

            def __sub__(self, other):
                return Seconds(float(self) - float(other))

            def __repr__(self):
                return f"Seconds({float(self)})"


        class Word(str):
            def doubled(self):
                return Word(self + self)


        class Tags(set):
            def with_(self, *more):
                return Tags(self | set(more))


        class Vec:
            def __init__(self, x, y):
                self.x, self.y = x, y

            def __add__(self, other):
                return Vec(self.x + other.x, self.y + other.y)

            def __mul__(self, k):
                return Vec(self.x * k, self.y * k)

            def __eq__(self, other):
                return isinstance(other, Vec) and (self.x, self.y) == (other.x, other.y)

            def __hash__(self):
                return hash((self.x, self.y))


        def lookup():
            return {Vec(1, 2): "vec", (1, 2): "tuple"}


        def raw_bytes():
            sys.stdout.buffer.write(b"\\xff\\xfe raw\\n")
            sys.stdout.flush()


        def nested(n):
            out = []
            for _ in range(n):
                out = [out]
            return out


        def depth(x):
            n = 0
            while x:
                x, n = x[0], n + 1
            return n
        """,
        """
        import pytest

        import quantities as m


        def test_subclasses_of_builtins_keep_their_class():
            t = m.Seconds(1.5)
            assert type(t + 1) is m.Seconds and t + 1 == 2.5
            assert type(2 + t) is m.Seconds and type(t - 0.5) is m.Seconds
            assert t + 1 == pytest.approx(2.5)
            assert type(m.Word("ab").doubled()) is m.Word
            tags = m.Tags({"a"}).with_("b")
            assert type(tags) is m.Tags and tags == {"a", "b"}


        def test_operators_return_the_candidates_instances():
            v = m.Vec(1, 2) + m.Vec(3, 4)
            assert type(v) is m.Vec and v == m.Vec(4, 6) and v * 2 == m.Vec(8, 12)


        def test_candidate_objects_as_keys_beside_tuples():
            table = m.lookup()
            assert table[m.Vec(1, 2)] == "vec" and table[(1, 2)] == "tuple"
            assert len(table) == 2


        def test_bytes_that_are_no_text(capsysbinary):
            m.raw_bytes()
            assert capsysbinary.readouterr().out == b"\\xff\\xfe raw\\n"


        def test_deep_values_both_ways():
            assert m.depth(m.nested(90)) == 90
            mine = []
            for _ in range(90):
                mine = [mine]
            assert m.depth(mine) == 90
        """,
    ),
    # -- the test's tools on candidate code -------------------------------------------
    _case(
        "the-tests-tools-on-candidate-classes",
        "weather.py",
        """
        import functools


        class Station:
            def raw(self, city):
                raise ConnectionError("no network in tests")

            def report(self, city):
                return f"{city}: {self.raw(city)}"

            @property
            def mode(self):
                return "live"


        def traced(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)

            return wrapper


        async def throttled(gate, n):
            async with gate:
                return n * 2


        async def drain(source):
            return [item async for item in source]
        """,
        """
        import asyncio
        import inspect
        from unittest import mock

        import pytest

        import weather as m


        def test_monkeypatch_a_method_and_undo(monkeypatch):
            monkeypatch.setattr(m.Station, "raw", lambda self, city: f"sunny in {city}")
            assert m.Station().report("Oslo") == "Oslo: sunny in Oslo"
            monkeypatch.undo()
            with pytest.raises(ConnectionError):
                m.Station().report("Oslo")


        def test_property_mock_and_sentinel():
            with mock.patch.object(m.Station, "mode", new_callable=mock.PropertyMock) as mode:
                mode.return_value = "replay"
                assert m.Station().mode == "replay"
            assert m.Station().mode == "live"
            with mock.patch.object(m.Station, "raw", return_value=mock.sentinel.reading):
                assert m.Station().raw("x") is mock.sentinel.reading


        @m.traced
        def convert(celsius, digits=1):
            \"\"\"Celsius to Fahrenheit.\"\"\"
            return round(celsius * 9 / 5 + 32, digits)


        def test_autospec_of_a_candidate_method():
            with mock.patch.object(m.Station, "raw", autospec=True) as raw:
                raw.return_value = "mild"
                assert m.Station().report("Rome") == "Rome: mild"
                raw.assert_called_once()


        def test_the_tests_asyncio_objects_handed_over():
            async def readings():
                yield 1
                yield 2

            async def main():
                gate = asyncio.Semaphore(1)
                return await m.throttled(gate, 4), await m.drain(readings())

            assert asyncio.run(main()) == (8, [1, 2])


        def test_a_candidate_decorator_on_a_tests_function():
            assert convert(100) == 212.0
            assert convert.__doc__ == "Celsius to Fahrenheit."
            assert convert.__name__ == "convert"
            assert list(inspect.signature(convert).parameters) == ["celsius", "digits"]
        """,
    ),
)

# The data libraries people test with, by value (when installed: pandas, scipy).
FRAMES = _corpus(
    _case(
        "pandas-frames-series-indexes-and-scipy-sparse-by-value",
        "sales.py",
        """
        import numpy as np
        import pandas as pd
        import scipy.sparse as sp


        def summary(rows):
            df = pd.DataFrame(rows)
            return df.groupby("region", as_index=False)["amount"].sum()


        def totals(df):
            return df.groupby("region")["amount"].sum()


        def with_tax(df, rate):
            out = df.copy()
            out["taxed"] = out["amount"] * (1 + rate)
            return out


        def labels(n):
            return pd.Index([f"r{i}" for i in range(n)], name="row")


        def days():
            stamps = pd.date_range("2024-01-01", periods=3, freq="D")
            return pd.DataFrame({"t": stamps, "v": [1.5, 2.5, np.nan]})


        def adjacency(edges, n):
            rows, cols = zip(*edges)
            return sp.csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(n, n))


        def degree(m):
            return np.asarray(m.sum(axis=1)).ravel()
        """,
        """
        import numpy as np
        import pandas as pd
        import scipy.sparse as sp

        import sales as m


        def test_frames_returned():
            rows = [{"region": "n", "amount": 2}, {"region": "s", "amount": 3}]
            got = m.summary(rows + [{"region": "n", "amount": 5}])
            want = pd.DataFrame({"region": ["n", "s"], "amount": [7, 3]})
            pd.testing.assert_frame_equal(got, want)
            assert isinstance(got, pd.DataFrame)


        def test_series_and_index():
            df = pd.DataFrame({"region": ["a", "b", "a"], "amount": [1.0, 2.0, 3.0]})
            s = m.totals(df)
            want = pd.Series([4.0, 2.0], index=pd.Index(["a", "b"], name="region"), name="amount")
            pd.testing.assert_series_equal(s, want)
            assert list(m.labels(2)) == ["r0", "r1"] and m.labels(1).name == "row"


        def test_frame_handed_over():
            df = pd.DataFrame({"amount": [10.0, 20.0]}, index=[3, 7])
            out = m.with_tax(df, 0.5)
            assert list(out.columns) == ["amount", "taxed"]
            assert out.loc[7, "taxed"] == 30.0


        def test_dates_and_nans():
            d = m.days()
            assert d["t"].dtype == "datetime64[ns]" or str(d["t"].dtype).startswith("datetime64")
            assert d["v"].isna().sum() == 1


        def test_sparse():
            a = m.adjacency([(0, 1), (1, 2), (0, 2)], 3)
            assert sp.issparse(a) and a.shape == (3, 3) and a.nnz == 3
            assert (a.toarray() == np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])).all()
            assert list(m.degree(sp.csr_matrix(np.eye(2)))) == [1.0, 1.0]
        """,
    ),
)

# Rows the object model calls disputed, inherently: never a fail.
DISPUTED = _corpus(
    _case(
        "the-candidates-metaclass-as-the-type-of-a-tests-class",
        "plugins.py",
        """
        class Registered(type):
            names = []

            def __new__(mcs, name, bases, ns):
                mcs.names.append(name)
                return super().__new__(mcs, name, bases, ns)
        """,
        """
        import plugins as m


        def test_the_class_is_an_instance_of_the_metaclass():
            class Exporter(metaclass=m.Registered):
                pass

            assert type(Exporter) is m.Registered
        """,
    ),
)


# Wrong candidates that fool plain pytest through a rule above; never a pass.
ATTACKS = _corpus(
    _case(
        "a-number-whose-reflected-operator-judges-approx",
        "timing.py",
        """
        class Duration(float):
            def __rsub__(self, other):
                return Duration(0.0)  # every difference is nothing

            def __sub__(self, other):
                return Duration(0.0)


        def elapsed(start, stop):
            return Duration(stop - start + 1.0)  # wrong: one second too long
        """,
        """
        import pytest

        import timing as m


        def test_elapsed():
            assert m.elapsed(1.0, 3.0) == pytest.approx(2.0)
        """,
    ),
    _case(
        "a-candidate-reads-the-tests-private-expectation",
        "grader.py",
        """
        def score(answer_sheet):
            return answer_sheet._expected  # wrong: reads the answer, computes nothing
        """,
        """
        import grader as m


        class Sheet:
            def __init__(self, answers, expected):
                self.answers = answers
                self._expected = expected


        def test_score():
            assert m.score(Sheet([1, 0, 1], 2)) == 2
        """,
    ),
    _case(
        "a-candidate-overwrites-the-tests-private-state",
        "ledger.py",
        """
        def settle(account):
            account._balance = 100  # wrong: sets the balance the test checks
            return None
        """,
        """
        import ledger as m


        class Account:
            def __init__(self):
                self._balance = 0

            def balance(self):
                return self._balance


        def test_settle():
            acc = Account()
            m.settle(acc)
            assert acc.balance() == 100
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """Every correct case, and every case the table calls disputed, passes plain
    `python -m pytest` in-process; every attack fools it (a forged pass)."""
    cases = {**CARRIED, **DISPUTED, **ATTACKS}
    if _have("pandas", "scipy"):
        cases.update(FRAMES)
    assert_plain_passes(cases, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_carried_row_grades_pass(grade, backend: Isolation, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(FRAMES))
def test_a_data_librarys_values_cross_by_value(grade, backend: Isolation, name: str) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("scipy")
    expect(grade(FRAMES[name], backend), "pass")


def _have(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)


@pytest.mark.parametrize("name", list(DISPUTED))
def test_an_inherent_row_is_disputed(grade, backend: Isolation, name: str) -> None:
    expect(grade(DISPUTED[name], backend), "disputed")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_on_a_rule_never_passes(grade, backend: Isolation, name: str) -> None:
    expect(grade(ATTACKS[name], backend), "disputed")
