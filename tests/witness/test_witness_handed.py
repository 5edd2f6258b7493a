"""Objects the tests hand the candidate, or get back from it, that once had no way across
the wire (issue 48): a tests' class whose metaclass is not `type` (a `typing.Protocol`
mixin, a registry metaclass of the tests' own) and the bound methods of its instances;
`classmethod` and `staticmethod` around a function; `time.struct_time`; a dataclass's
`Field`; a `codecs.open` file. Each correct case passes plain `python -m pytest`
in-process and must grade `pass` under `isolation: process`; each attack fools plain
pytest and must stay disputed: handing these over gives the candidate a capability,
never the tests' private state, code or globals."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, corpus_tests, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "bound-methods-of-a-protocol-typed-tests-class",
        "memo.py",
        """
        def remember(fn):
            seen = {}

            def wrapper(*args, **kwargs):
                key = (args, tuple(sorted(kwargs.items())))
                if key not in seen:
                    seen[key] = fn(*args, **kwargs)
                return seen[key]

            wrapper.seen = seen
            wrapper.__wrapped__ = fn
            return wrapper


        def build(cls, *args):
            made = cls(*args)
            return made, cls.__name__, getattr(cls, "kind", None)
        """,
        """
        from typing import Protocol

        import memo as m


        class Counting(Protocol):
            calls: int


        class Squarer(Counting):
            def __init__(self):
                self.calls = 0

            def square(self, x):
                self.calls += 1
                return x * x

            def tagged(*args, **kwargs):
                args[0].calls += 1
                return kwargs["self"]


        class Registry(type):
            made = []

            def __new__(mcs, name, bases, ns):
                cls = super().__new__(mcs, name, bases, ns)
                mcs.made.append(name)
                return cls


        class Widget(metaclass=Registry):
            kind = "widget"

            def __init__(self, size):
                self.size = size


        def test_a_keyword_named_self_reaches_the_tests_method():
            sq = Squarer()
            fast = m.remember(sq.tagged)
            assert fast(self="me") == "me" and sq.calls == 1


        def test_a_bound_method_of_a_protocol_instance_is_remembered():
            sq = Squarer()
            fast = m.remember(sq.square)
            assert [fast(3), fast(3), fast(4)] == [9, 9, 16]
            assert sq.calls == 2
            assert len(fast.seen) == 2


        def test_a_class_with_the_tests_own_metaclass():
            made, name, kind = m.build(Widget, 7)
            assert isinstance(made, Widget) and made.size == 7
            assert (name, kind) == ("Widget", "widget")
            assert Registry.made == ["Widget"]
        """,
    ),
    _case(
        "class-and-static-method-wrappers",
        "wrappers.py",
        """
        import functools


        def unwrap(method):
            if isinstance(method, (classmethod, staticmethod)):
                return method.__func__
            return method


        def kind_of(method):
            return type(method).__name__


        def logged(method, log):
            if not callable(method):
                raise TypeError(f"cannot log a {type(method).__name__}")

            @functools.wraps(method)
            def inner(*a):
                log.append(method.__name__)
                return method(*a)

            return inner


        def as_class_method(fn):
            return classmethod(fn)
        """,
        """
        import pytest

        import wrappers as m


        def make(cls, n):
            return cls(n * 2)


        def test_wrappers_handed_to_the_candidate():
            def plain(x):
                return x + 1

            assert m.unwrap(classmethod(plain)) is plain
            assert m.unwrap(staticmethod(plain)) is plain
            assert m.kind_of(classmethod(plain)) == "classmethod"
            assert m.kind_of(staticmethod(plain)) == "staticmethod"


        def test_a_wrapper_returned_binds_on_the_tests_class():
            class Box(int):
                build = m.as_class_method(make)

            assert isinstance(Box.__dict__["build"], classmethod)
            assert Box.build(4) == 8 and type(Box.build(4)) is Box
        """,
    ),
    _case(
        "struct-times-both-ways",
        "clock.py",
        """
        import time


        def stamp(moment):
            return time.strftime("%Y-%m-%d %H:%M", moment)


        def local_stamp(seconds):
            return time.strftime("%H:%M", time.localtime(seconds))


        def parse(text):
            return time.strptime(text, "%Y-%m-%d")
        """,
        """
        import time

        import clock as m


        def test_a_struct_time_handed_over():
            moment = time.struct_time((2021, 3, 4, 5, 6, 7, 3, 63, 0))
            assert m.stamp(moment) == "2021-03-04 05:06"


        def test_a_fake_localtime(monkeypatch):
            def fake(seconds=None):
                return time.struct_time((1999, 12, 31, 23, 59, 0, 4, 365, 0))

            monkeypatch.setattr(time, "localtime", fake)
            assert m.local_stamp(0) == "23:59"


        def test_a_struct_time_returned():
            got = m.parse("2020-02-29")
            assert isinstance(got, time.struct_time)
            assert got.tm_yday == 60 and got[:3] == (2020, 2, 29)
        """,
    ),
    _case(
        "dataclass-fields-handed-over",
        "defaults.py",
        """
        import dataclasses


        def default_of(field):
            if field.default is not dataclasses.MISSING:
                return field.default
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
            raise LookupError(field.name)


        def describe(field):
            return field.name, field.type, dict(field.metadata), field.init


        def is_frozen(obj):
            return type(obj).__dataclass_params__.frozen


        def class_frozen(cls):
            return cls.__dataclass_params__.frozen


        def field_names(cls):
            return list(cls.__dataclass_fields__)
        """,
        """
        from dataclasses import dataclass, field, fields

        import pytest

        import defaults as m


        @dataclass
        class Order:
            sku: str
            count: int = 1
            tags: list = field(default_factory=lambda: ["new"], metadata={"unit": "tag"})


        def test_defaults_of_fields():
            sku, count, tags = fields(Order)
            assert m.default_of(count) == 1
            assert m.default_of(tags) == ["new"]
            with pytest.raises(LookupError):
                m.default_of(sku)


        @dataclass(frozen=True)
        class Point:
            x: int


        def test_a_field_described():
            assert m.describe(fields(Order)[2]) == ("tags", list, {"unit": "tag"}, True)


        def test_frozen_or_not():
            assert m.is_frozen(Point(1)) is True
            assert m.is_frozen(Order("a")) is False


        def test_a_dataclass_handed_as_a_class():
            assert m.class_frozen(Point) is True and m.class_frozen(Order) is False
            assert m.field_names(Order) == ["sku", "count", "tags"]
        """,
    ),
    _case(
        "a-codecs-file-handed-over",
        "words.py",
        """
        def count_words(stream):
            return sum(len(line.split()) for line in iter(stream.readline, ""))
        """,
        """
        import codecs

        import words as m


        def test_counting_a_codecs_file(tmp_path):
            path = tmp_path / "text.txt"
            path.write_text("één twee\\ndrie\\n", encoding="utf-8")
            with codecs.open(str(path), encoding="utf-8") as stream:
                assert m.count_words(stream) == 3
        """,
    ),
    _case(
        "pickles-that-name-the-tests-module",
        "records.py",
        """
        import functools
        import sys
        from collections import namedtuple


        def record(name, *fields):
            caller = sys._getframe(1).f_globals["__name__"]
            return namedtuple(name, fields, module=caller)


        class Marker:
            def __init__(self, name):
                self.name = name

            def __reduce__(self):
                return self.name

            def __repr__(self):
                return self.name


        def marker(name):
            made = Marker(name)
            type(made).__module__ = sys._getframe(1).f_globals["__name__"]
            return made


        def counted(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                wrapper.calls += 1
                return fn(*args)

            wrapper.calls = 0
            return wrapper


        class Keyed:
            def __init__(self, key):
                self.key = key
                self.items = {}

            def add(self, value):
                self.items[self.key(value)] = value
        """,
        """
        import pickle

        import records as m

        Pair = m.record("Pair", "left", "right")
        UNSET = m.marker("UNSET")


        def by_length(text):
            return len(text)


        def test_a_record_made_for_the_test_module_pickles():
            pair = Pair(1, "b")
            assert Pair.__module__ == __name__
            assert pickle.loads(pickle.dumps(pair)) == pair


        def test_a_marker_pickles_as_itself():
            assert pickle.loads(pickle.dumps(UNSET)) is UNSET


        class Shapes:
            class Square:
                @m.counted
                def area(side):
                    return side * side


        class Tools:
            @staticmethod
            @m.counted
            def double(x):
                return 2 * x


        def test_a_decorated_static_method_pickles_by_name():
            double = Tools.double
            assert double(4) == 8
            assert pickle.loads(pickle.dumps(double)) is double


        def test_a_decorated_method_of_a_nested_class_pickles_by_name():
            area = Shapes.Square.area
            assert area(3) == 9 and area.calls == 1
            assert pickle.loads(pickle.dumps(area)) is area


        def test_an_object_holding_a_tests_function_pickles():
            keyed = m.Keyed(by_length)
            keyed.add("abc")
            again = pickle.loads(pickle.dumps(keyed))
            assert again.key is by_length
            assert again.items == {3: "abc"}
        """,
    ),
    _case(
        "arguments-kept-and-functions-copied",
        "keeper.py",
        """
        import types


        class Shelf(dict):
            def put_default(self, key, default=None):
                if key not in self:
                    dict.__setitem__(self, key, default)
                return dict.__getitem__(self, key)


        def clone(fn):
            made = types.FunctionType(
                fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
            )
            made.__dict__.update(fn.__dict__)
            return made
        """,
        """
        import keeper as m


        def test_an_argument_stored_in_a_dict_of_the_candidates():
            shelf = m.Shelf()
            bucket = []
            assert shelf.put_default("a", bucket) is bucket
            assert shelf.put_default("b") is None
            assert shelf.put_default("a", None) is bucket


        def test_a_copy_of_a_tests_function():
            def one():
                return 1

            copy = m.clone(one)
            assert copy is not one
            assert copy() == one() == 1
        """,
    ),
    _case(
        "wrappers-aliases-and-made-dataclasses",
        "shapes.py",
        """
        import dataclasses
        import typing


        def tally(counts, word):
            counts[word] = counts.get(word, 0) + 1
            return len(counts)


        def optional_of(hint):
            args = typing.get_args(hint)
            if typing.get_origin(hint) is typing.Union and type(None) in args:
                return next(a for a in args if a is not type(None))
            return None


        def listing(kind):
            return typing.List[kind]


        def columns(rows):
            first = rows[0]
            names = [f.name for f in dataclasses.fields(first)]
            return names, [[getattr(r, n) for n in names] for r in rows]
        """,
        """
        import typing
        from collections import UserDict, UserList, UserString
        from dataclasses import make_dataclass

        import shapes as m


        def test_a_user_dict_filled_in_place():
            counts = UserDict()
            assert m.tally(counts, "a") == 1
            assert m.tally(counts, "a") == 1
            assert counts == {"a": 2} and type(counts) is UserDict


        def test_typing_aliases_both_ways():
            assert m.optional_of(typing.Optional[int]) is int
            assert m.optional_of(typing.List[int]) is None
            assert m.listing(str) == typing.List[str]


        def test_a_made_dataclass_handed_over():
            Row = make_dataclass("Row", ["name", "size"])
            names, cells = m.columns([Row("a", 1), Row("b", 2)])
            assert names == ["name", "size"] and cells == [["a", 1], ["b", 2]]
        """,
    ),
    _case(
        "syntax-trees-both-ways",
        "names.py",
        """
        import ast


        def assigned(tree):
            found = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign):
                    found.update(t.id for t in node.targets if isinstance(t, ast.Name))
            return sorted(found)


        def check_contexts(tree):
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, (ast.Load, ast.Store)):
                    raise RuntimeError(f"odd context for {node.id}")


        def rename(tree, old, new):
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id == old:
                    node.id = new


        def parse(source):
            return ast.parse(source)
        """,
        """
        import ast

        import pytest

        import names as m


        def test_a_tree_handed_over():
            assert m.assigned(ast.parse("a = 1\\nb = a\\nprint(b)")) == ["a", "b"]


        def test_a_tree_with_an_odd_node():
            tree = ast.parse("x = 10")
            tree.body[0].targets[0].ctx = object()
            with pytest.raises(RuntimeError):
                m.check_contexts(tree)


        def test_a_tree_changed_in_place():
            tree = ast.parse("total = x + 1")
            m.rename(tree, "x", "y")
            assert ast.unparse(tree) == "total = y + 1"


        def test_a_tree_returned():
            got = m.parse("z = [1, 2]")
            assert isinstance(got, ast.Module)
            assert ast.dump(got, include_attributes=True) == ast.dump(
                ast.parse("z = [1, 2]"), include_attributes=True
            )
        """,
    ),
    _case(
        "cycles-through-a-candidates-dict",
        "bag.py",
        """
        class Bag(dict):
            def __getattr__(self, name):
                try:
                    return self[name]
                except KeyError:
                    raise AttributeError(name) from None

            def __setattr__(self, name, value):
                self[name] = value


        def plain(value, seen=None):
            seen = {} if seen is None else seen
            if id(value) in seen:
                return seen[id(value)]
            if isinstance(value, dict):
                out = seen[id(value)] = {}
                out.update((k, plain(v, seen)) for k, v in value.items())
                return out
            if isinstance(value, list):
                out = seen[id(value)] = []
                out.extend(plain(v, seen) for v in value)
                return out
            return value
        """,
        """
        import bag as m


        def test_a_bag_that_holds_itself_through_a_list():
            top = m.Bag(name="top")
            top.kids = ["leaf", top]
            got = m.plain(top)
            assert type(got) is dict and got["name"] == "top"
            assert got["kids"][0] == "leaf" and got["kids"][1] is got


        def test_two_bags_that_hold_each_other():
            a = m.Bag(name="a")
            b = m.Bag(name="b", other=a)
            a.other = b
            got = m.plain(a)
            assert got["other"]["other"] is got
        """,
    ),
    _case(
        "a-weak-cache-of-the-tests",
        "interning.py",
        """
        def intern(cache, key, make):
            found = cache.get(key)
            if found is None:
                found = cache[key] = make(key)
            return found


        def remember_all(seen, items):
            for item in items:
                seen.add(item)
            return len(seen)
        """,
        """
        import weakref

        import interning as m


        class Token:
            def __init__(self, key):
                self.key = key


        def test_a_weak_value_dictionary_as_a_cache():
            cache = weakref.WeakValueDictionary()
            first = m.intern(cache, "a", Token)
            assert m.intern(cache, "a", Token) is first and first.key == "a"
            assert len(cache) == 1 and "a" in cache


        def test_a_weak_set():
            seen = weakref.WeakSet()
            tokens = [Token(1), Token(2)]
            assert m.remember_all(seen, tokens + tokens[:1]) == 2
            assert tokens[0] in seen
        """,
    ),
    _case(
        "an-endless-generator-handed-over",
        "labels.py",
        """
        from collections.abc import Sized


        def number(rows, start):
            labels = list(start) if isinstance(start, Sized) else start
            return [f"{n}. {row}" for row, n in zip(rows, labels)]


        def kinds(thing):
            return isinstance(thing, Sized), callable(thing)


        def has(thing, item):
            return item in thing
        """,
        """
        import labels as m


        def endless(start):
            n = start
            while True:
                yield n
                n += 1
                assert n < 50, "pulled too far"


        def test_an_endless_generator_is_pulled_lazily():
            assert m.number(["a", "b"], endless(1)) == ["1. a", "2. b"]
            assert m.number(["a"], [7, 8]) == ["7. a"]


        def test_a_generator_is_no_sized_callable():
            assert m.kinds(endless(0)) == (False, False)
            assert m.kinds([1]) == (True, False)


        def test_membership_iterates():
            assert m.has(endless(0), 5) is True
        """,
    ),
    # A candidate's wrapper driving the test's generator: resumed, thrown into, closed.
    _case(
        "a-tests-generator-resumed-by-the-candidate",
        "forwarder.py",
        """
        class Forwarder:
            def __init__(self, source):
                self._source = source

            def __iter__(self):
                return self

            def __next__(self):
                return next(self._source)

            def send(self, value):
                return self._source.send(value)

            def throw(self, *args):
                return self._source.throw(*args)

            def close(self):
                return self._source.close()
        """,
        """
        import pytest

        from forwarder import Forwarder

        closed = []


        def running_total():
            total = 0
            try:
                while True:
                    total += yield total
            except LookupError:
                yield "reset"
            finally:
                closed.append(total)


        def test_the_candidate_drives_the_tests_generator():
            wrapped = Forwarder(running_total())
            assert next(wrapped) == 0
            assert wrapped.send(5) == 5 and wrapped.send(7) == 12
            assert wrapped.throw(KeyError) == "reset"
            wrapped.close()
            assert closed == [12]
            with pytest.raises(StopIteration):
                next(wrapped)


        def test_a_plain_iterator_is_not_resumed():
            with pytest.raises(AttributeError):
                Forwarder(iter([1, 2])).send(3)
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        "a-bound-method-leaks-its-tests-instance",
        "peek.py",
        """
        def answer(method):
            return method.__self__._expected  # wrong: reads the tests' answer
        """,
        """
        from typing import Protocol

        import peek as m


        class Answering(Protocol):
            pass


        class Oracle(Answering):
            def __init__(self):
                self._expected = 42

            def ask(self):
                return 0


        def test_answer():
            oracle = Oracle()
            assert m.answer(oracle.ask) == oracle._expected
        """,
    ),
    _case(
        "a-metaclass-made-class-leaks-its-private-state",
        "peek.py",
        """
        def answer(cls):
            return cls._secret  # wrong: reads the tests' private class state
        """,
        """
        import peek as m


        class Meta(type):
            pass


        class Vault(metaclass=Meta):
            _secret = "open sesame"


        def test_answer():
            assert m.answer(Vault) == "open sesame"
        """,
    ),
    _case(
        "a-class-method-unwrapped-to-the-tests-globals",
        "peek.py",
        """
        def answer(method):
            return method.__func__.__globals__["EXPECTED"]  # wrong: the tests' globals
        """,
        """
        import peek as m

        EXPECTED = 17


        def helper(cls):
            return 0


        def test_answer():
            assert m.answer(classmethod(helper)) == EXPECTED
        """,
    ),
    _case(
        "a-look-alike-struct-time-equal-to-anything",
        "clockwork.py",
        """
        class struct_time(tuple):
            def __eq__(self, other):
                return True  # wrong: equal to anything

            __hash__ = tuple.__hash__


        struct_time.__module__ = "time"


        def parse(text):
            return struct_time((1970, 1, 1, 0, 0, 0, 3, 1, 0))  # wrong: ignores the text
        """,
        """
        import time

        import clockwork as m


        def test_parse():
            assert m.parse("2020-02-29") == time.strptime("2020-02-29", "%Y-%m-%d")
        """,
    ),
    _case(
        "a-field-factory-read-for-its-globals",
        "peek.py",
        """
        def answer(field):
            return field.default_factory.__globals__["EXPECTED"]  # wrong: the tests' globals
        """,
        """
        from dataclasses import dataclass, field, fields

        import peek as m

        EXPECTED = ["forged"]


        @dataclass
        class Row:
            cells: list = field(default_factory=lambda: [])


        def test_answer():
            assert m.answer(fields(Row)[0]) == EXPECTED
        """,
    ),
    _case(
        "the-tests-module-read-by-name",
        "peek.py",
        """
        import sys


        def answer(module):
            return sys.modules[module].EXPECTED  # wrong: the tests' expected value
        """,
        """
        import peek as m

        EXPECTED = 99


        def test_answer():
            assert m.answer(__name__) == 99
        """,
    ),
    _case(
        "a-tests-class-attribute-read-through-the-module",
        "peek.py",
        """
        import sys


        def answer(module):
            return sys.modules[module].Expected.total  # wrong: the tests' class's data
        """,
        """
        import peek as m


        class Expected:
            total = 1234


        def test_answer():
            assert m.answer(__name__) == Expected.total
        """,
    ),
    _case(
        "the-callers-frame-read-for-its-globals",
        "peek.py",
        """
        import sys


        def answer():
            return sys._getframe(1).f_globals["EXPECTED"]  # wrong: the caller's globals
        """,
        """
        import peek as m

        EXPECTED = 7


        def test_answer():
            assert m.answer() == EXPECTED
        """,
    ),
)


# Record arrays and text arrays by value (numpy's dtype and bytes), when numpy is there.
NUMPY = _corpus(
    _case(
        "record-and-text-arrays-both-ways",
        "grid.py",
        """
        import numpy as np


        def widths(rows):
            return {name: max(len(str(v)) for v in rows[name]) for name in rows.dtype.names}


        def labels(n):
            return np.array([f"row{i}" for i in range(n)])


        def bump(rows, field):
            rows[field] += 1
        """,
        """
        import numpy as np

        import grid as m


        def records():
            kinds = {"names": ["who", "age"], "formats": ["U8", "i2"]}
            return np.array([("ann", 31), ("bartholo", 7)], dtype=kinds)


        def test_a_record_array_handed_over():
            assert m.widths(records()) == {"who": 8, "age": 2}


        def test_a_text_array_returned():
            got = m.labels(3)
            assert got.dtype == np.dtype("<U4") and list(got) == ["row0", "row1", "row2"]


        def test_a_record_array_filled_in_place():
            rows = records()
            m.bump(rows, "age")
            assert list(rows["age"]) == [32, 8]
        """,
    ),
)


def _has_numpy() -> bool:
    import importlib.util

    return importlib.util.find_spec("numpy") is not None


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_carried_case_grades_pass,
    test_an_attack_never_passes,
) = corpus_tests(CARRIED, ATTACKS, NUMPY if _has_numpy() else {})


@pytest.mark.parametrize("name", list(NUMPY))
def test_a_numpy_case_grades_pass(grade, backend: Isolation, name: str) -> None:
    pytest.importorskip("numpy")
    expect(grade(NUMPY[name], backend), "pass")
