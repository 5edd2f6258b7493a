"""Two small corpora written the way a new user writes code and tests, for the classes
the issue named and nobody listed: class-heavy code (`classes`) and tests that lean on
pytest's and unittest's own machinery (`machinery`). Each entry is a correct candidate
(its files) and its test; `conformance.py --idioms classes` grades them like the real
projects (plain pytest first: an entry it fails is dropped and named, so a wrong entry
here cannot count as a dispute)."""

from __future__ import annotations

from textwrap import dedent

from conformance_items import Item

CLASSES: dict[str, tuple[dict[str, str], str]] = {
    "dataclass-order-replace": (
        {
            "money.py": """
            from dataclasses import dataclass, field, replace


            @dataclass(frozen=True, order=True)
            class Money:
                cents: int
                currency: str = "EUR"
                tags: tuple = field(default=(), compare=False, metadata={"doc": "free"})

                def __post_init__(self):
                    if self.cents < 0:
                        raise ValueError("negative")

                def __add__(self, other):
                    if not isinstance(other, Money) or other.currency != self.currency:
                        return NotImplemented
                    return replace(self, cents=self.cents + other.cents)
            """
        },
        """
        import dataclasses

        import pytest

        from money import Money


        def test_order_and_hash():
            a, b = Money(100), Money(250)
            assert sorted([b, a]) == [a, b]
            assert {a: 1}[Money(100)] == 1
            assert a + b == Money(350)
            assert type(a + b) is Money


        def test_helpers():
            m = Money(5, "USD")
            assert dataclasses.asdict(m) == {"cents": 5, "currency": "USD", "tags": ()}
            assert dataclasses.replace(m, cents=7).cents == 7
            assert [f.name for f in dataclasses.fields(Money)] == ["cents", "currency", "tags"]
            assert dataclasses.fields(Money)[2].metadata["doc"] == "free"
            with pytest.raises(dataclasses.FrozenInstanceError):
                m.cents = 1
            with pytest.raises(ValueError):
                Money(-1)
        """,
    ),
    "abc-subclassed-by-test": (
        {
            "shapes.py": """
            from abc import ABC, abstractmethod


            class Shape(ABC):
                sides = 0

                @abstractmethod
                def area(self): ...

                def describe(self):
                    return f"{type(self).__name__} with {self.sides} sides, area {self.area():.1f}"
            """
        },
        """
        import inspect

        import pytest

        from shapes import Shape


        class Square(Shape):
            sides = 4

            def __init__(self, side):
                self.side = side

            def area(self):
                return self.side**2


        def test_abstract():
            assert inspect.isabstract(Shape)
            assert Shape.__abstractmethods__ == frozenset({"area"})
            with pytest.raises(TypeError):
                Shape()


        def test_subclass_uses_base_method():
            assert Square(3).describe() == "Square with 4 sides, area 9.0"
            assert isinstance(Square(1), Shape)
        """,
    ),
    "descriptor-on-test-class": (
        {
            "fields.py": """
            class Typed:
                def __init__(self, kind):
                    self.kind = kind

                def __set_name__(self, owner, name):
                    self.name = "_" + name

                def __get__(self, obj, objtype=None):
                    if obj is None:
                        return self
                    return getattr(obj, self.name)

                def __set__(self, obj, value):
                    if not isinstance(value, self.kind):
                        raise TypeError(f"{self.name[1:]} must be {self.kind.__name__}")
                    setattr(obj, self.name, value)
            """
        },
        """
        import pytest

        from fields import Typed


        class Person:
            age = Typed(int)

            def __init__(self, age):
                self.age = age


        def test_descriptor_checks_and_stores():
            p = Person(3)
            assert p.age == 3
            assert isinstance(Person.age, Typed)
            with pytest.raises(TypeError, match="age must be int"):
                p.age = "x"
        """,
    ),
    "property-and-class-attributes": (
        {
            "counter.py": """
            class Counter:
                instances = 0
                step = 1

                def __init__(self):
                    type(self).instances += 1
                    self._n = 0

                @property
                def value(self):
                    return self._n

                @classmethod
                def starting_at(cls, n):
                    c = cls()
                    c._n = n
                    return c

                @staticmethod
                def describe():
                    return "a counter"

                def tick(self):
                    self._n += self.step
                    return self
            """
        },
        """
        import counter


        class Double(counter.Counter):
            step = 2


        def test_property_on_class():
            assert isinstance(counter.Counter.value, property)
            assert counter.Counter.describe() == "a counter"


        def test_class_and_instance_attributes():
            before = counter.Counter.instances
            c = counter.Counter.starting_at(5).tick()
            assert c.value == 6
            assert counter.Counter.instances == before + 1
            assert "step" not in vars(c)


        def test_subclass_constructor_returns_subclass():
            d = Double.starting_at(1).tick()
            assert type(d) is Double
            assert d.value == 3
        """,
    ),
    "operators-keep-types": (
        {
            "units.py": """
            class Meters(float):
                def __add__(self, other):
                    return Meters(float(self) + float(other))

                __radd__ = __add__

                def __repr__(self):
                    return f"Meters({float(self)})"


            class Vector:
                __match_args__ = ("x", "y")

                def __init__(self, x, y):
                    self.x, self.y = x, y

                def __add__(self, other):
                    return Vector(self.x + other.x, self.y + other.y)

                def __mul__(self, k):
                    return Vector(self.x * k, self.y * k)

                __rmul__ = __mul__

                def __eq__(self, other):
                    return isinstance(other, Vector) and (self.x, self.y) == (other.x, other.y)

                def __hash__(self):
                    return hash((self.x, self.y))

                def __iter__(self):
                    yield self.x
                    yield self.y
            """
        },
        """
        from units import Meters, Vector


        def test_float_subclass_keeps_type():
            d = Meters(1.5) + 1
            assert type(d) is Meters
            assert d == 2.5
            assert repr(d) == "Meters(2.5)"


        def test_vector_arithmetic():
            v = Vector(1, 2) + Vector(3, 4)
            assert v == Vector(4, 6)
            assert type(2 * v) is Vector
            assert list(v * 2) == [8, 12]
            assert {Vector(1, 1): "a", (1, 1): "b"}[Vector(1, 1)] == "a"
            match v:
                case Vector(x, y):
                    assert (x, y) == (4, 6)
        """,
    ),
    "generic-class-getitem": (
        {
            "boxes.py": """
            from typing import Generic, TypeVar

            T = TypeVar("T")


            class Box(Generic[T]):
                def __init__(self, item: T):
                    self.item = item

                def get(self) -> T:
                    return self.item
            """
        },
        """
        import typing

        from boxes import Box


        def test_parametrised_alias():
            IntBox = Box[int]
            assert typing.get_origin(IntBox) is Box
            assert typing.get_args(IntBox) == (int,)
            b = IntBox(3)
            assert b.get() == 3
            assert b.__orig_class__ == Box[int]
        """,
    ),
    "registry-init-subclass": (
        {
            "plugins.py": """
            REGISTRY = {}


            class Plugin:
                name = None

                def __init_subclass__(cls, name=None, **kwargs):
                    super().__init_subclass__(**kwargs)
                    cls.name = name or cls.__name__.lower()
                    REGISTRY[cls.name] = cls

                def run(self, text):
                    raise NotImplementedError


            def run_all(text):
                return {name: cls().run(text) for name, cls in sorted(REGISTRY.items())}
            """
        },
        """
        import plugins


        class Upper(plugins.Plugin, name="up"):
            def run(self, text):
                return text.upper()


        class Reverse(plugins.Plugin):
            def run(self, text):
                return text[::-1]


        def test_registered_and_called():
            assert plugins.REGISTRY["up"] is Upper
            assert Reverse.name == "reverse"
            assert plugins.run_all("ab") == {"reverse": "ba", "up": "AB"}
        """,
    ),
    "exception-hierarchy-both-ways": (
        {
            "errors.py": """
            class AppError(Exception):
                def __init__(self, message, code=1):
                    super().__init__(message)
                    self.code = code


            class NotFound(AppError):
                pass


            def guarded(fn):
                try:
                    return fn()
                except AppError as exc:
                    return (type(exc).__name__, exc.code, str(exc))
            """
        },
        """
        import pytest

        import errors


        class Gone(errors.NotFound):
            pass


        def test_candidate_catches_test_subclass():
            def boom():
                raise Gone("bye", code=410)

            assert errors.guarded(boom) == ("Gone", 410, "bye")


        def test_raises_and_attributes():
            with pytest.raises(errors.AppError) as info:
                raise errors.NotFound("x", code=404)
            assert info.value.code == 404
            assert isinstance(info.value, LookupError) is False
        """,
    ),
    "weakref-cache": (
        {
            "interning.py": """
            import weakref


            class Symbol:
                _cache = weakref.WeakValueDictionary()

                def __new__(cls, name):
                    existing = cls._cache.get(name)
                    if existing is not None:
                        return existing
                    self = super().__new__(cls)
                    self.name = name
                    cls._cache[name] = self
                    return self

                @classmethod
                def live(cls):
                    return sorted(cls._cache.keys())
            """
        },
        """
        import gc
        import weakref

        from interning import Symbol


        def test_interned_and_weak():
            a = Symbol("a")
            assert Symbol("a") is a
            ref = weakref.ref(a)
            assert ref() is a
            assert "a" in Symbol.live()
            del a
            gc.collect()
            assert ref() is None
            assert "a" not in Symbol.live()
        """,
    ),
    "mixins-super-chain": (
        {
            "mixins.py": """
            class Base:
                def render(self):
                    return ["base"]


            class Bold(Base):
                def render(self):
                    return ["bold"] + super().render()


            class Italic(Base):
                def render(self):
                    return ["italic"] + super().render()
            """
        },
        """
        from mixins import Base, Bold, Italic


        class Underline(Base):
            def render(self):
                return ["underline"] + super().render()


        class Fancy(Bold, Underline, Italic):
            pass


        def test_mro_through_test_and_candidate_classes():
            assert Fancy().render() == ["bold", "underline", "italic", "base"]
            names = [c.__name__ for c in Fancy.__mro__]
            assert names[:4] == ["Fancy", "Bold", "Underline", "Italic"]
        """,
    ),
    "functools-class-helpers": (
        {
            "versions.py": """
            import functools


            @functools.total_ordering
            class Version:
                def __init__(self, text):
                    self.parts = tuple(int(p) for p in text.split("."))

                def __eq__(self, other):
                    return self.parts == other.parts

                def __lt__(self, other):
                    return self.parts < other.parts

                def __hash__(self):
                    return hash(self.parts)

                @functools.cached_property
                def major(self):
                    return self.parts[0]

                @functools.singledispatchmethod
                def bump(self, arg):
                    raise TypeError(arg)

                @bump.register
                def _(self, arg: int):
                    return Version(".".join(map(str, (self.parts[0] + arg,) + self.parts[1:])))

                @bump.register
                def _(self, arg: str):
                    return self.bump(int(arg))
            """
        },
        """
        from versions import Version


        def test_total_ordering_and_cache():
            a, b = Version("1.2"), Version("1.10")
            assert a < b and b >= a and a != b
            assert max([a, b]) is b
            assert a.major == 1
            assert "major" in vars(a)


        def test_singledispatch():
            assert Version("1.2").bump(1) == Version("2.2")
            assert Version("1.2").bump("2") == Version("3.2")
        """,
    ),
    "protocol-and-namedtuple": (
        {
            "geo.py": """
            from typing import NamedTuple, Protocol, runtime_checkable


            @runtime_checkable
            class HasArea(Protocol):
                def area(self) -> float: ...


            class Rect(NamedTuple):
                w: float
                h: float

                def area(self):
                    return self.w * self.h

                def scaled(self, k):
                    return self._replace(w=self.w * k, h=self.h * k)
            """
        },
        """
        from geo import HasArea, Rect


        class Circle:
            def __init__(self, r):
                self.r = r

            def area(self):
                return 3.0 * self.r**2


        def test_protocol_and_tuple():
            r = Rect(2, 3)
            assert r == (2, 3)
            assert r.scaled(2) == Rect(4, 6)
            assert isinstance(r, HasArea)
            assert isinstance(Circle(1), HasArea)
            assert Rect._fields == ("w", "h")
        """,
    ),
    "slots-and-eq-keys": (
        {
            "points.py": """
            class Point:
                __slots__ = ("x", "y")

                def __init__(self, x, y):
                    self.x, self.y = x, y

                def __eq__(self, other):
                    return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

                def __hash__(self):
                    return hash((Point, self.x, self.y))

                def __repr__(self):
                    return f"Point({self.x}, {self.y})"
            """
        },
        """
        import pytest

        from points import Point


        def test_slots_and_keys():
            p = Point(1, 2)
            with pytest.raises(AttributeError):
                p.z = 3
            assert Point.__slots__ == ("x", "y")
            seen = {p: "p", (1, 2): "tuple"}
            assert seen[Point(1, 2)] == "p"
            assert seen[(1, 2)] == "tuple"
            assert repr([p]) == "[Point(1, 2)]"
        """,
    ),
    "enum-with-methods": (
        {
            "colors.py": """
            import enum


            class Color(enum.Enum):
                RED = "#f00"
                GREEN = "#0f0"

                @property
                def rgb(self):
                    return tuple(int(c * 2, 16) for c in self.value[1:])

                @classmethod
                def parse(cls, text):
                    return cls[text.upper()]


            class Perm(enum.Flag):
                R = 4
                W = 2
                X = 1
            """
        },
        """
        from colors import Color, Perm


        def test_enum():
            assert Color.parse("red") is Color.RED
            assert Color("#0f0") is Color.GREEN
            assert Color.RED.rgb == (255, 0, 0)
            assert [c.name for c in Color] == ["RED", "GREEN"]


        def test_flag():
            rw = Perm.R | Perm.W
            assert Perm.W in rw and Perm.X not in rw
            assert rw.value == 6
        """,
    ),
    "deepcopy-graph": (
        {
            "graph.py": """
            class Node:
                def __init__(self, name):
                    self.name = name
                    self.edges = []

                def link(self, other):
                    self.edges.append(other)
                    other.edges.append(self)
                    return self
            """
        },
        """
        import copy

        from graph import Node


        def test_deepcopy_keeps_shape():
            a, b = Node("a"), Node("b")
            a.link(b)
            c = copy.deepcopy(a)
            assert c is not a
            assert c.edges[0].edges[0] is c
            assert c.edges[0].name == "b"
        """,
    ),
    "iterator-and-context-classes": (
        {
            "reader.py": """
            class Chunks:
                def __init__(self, data, size):
                    self.data, self.size, self.pos = data, size, 0
                    self.closed = False

                def __iter__(self):
                    return self

                def __next__(self):
                    if self.pos >= len(self.data):
                        raise StopIteration
                    chunk = self.data[self.pos : self.pos + self.size]
                    self.pos += self.size
                    return chunk

                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    self.closed = True
                    return False

                def __len__(self):
                    return -(-len(self.data) // self.size)
            """
        },
        """
        from reader import Chunks


        def test_iterate_in_with():
            with Chunks("abcde", 2) as chunks:
                assert len(chunks) == 3
                assert list(chunks) == ["ab", "cd", "e"]
            assert chunks.closed
            assert next(iter(Chunks("xy", 1))) == "x"
        """,
    ),
}

MACHINERY: dict[str, tuple[dict[str, str], str]] = {
    "fixtures-yield-parametrize": (
        {
            "stack.py": """
            class Stack:
                def __init__(self):
                    self.items = []

                def push(self, x):
                    self.items.append(x)

                def pop(self):
                    return self.items.pop()

                def __len__(self):
                    return len(self.items)
            """
        },
        """
        import pytest

        from stack import Stack

        LOG = []


        @pytest.fixture
        def stack():
            s = Stack()
            yield s
            LOG.append(len(s))


        @pytest.fixture(params=[1, 2, 3], ids=["one", "two", "three"])
        def count(request):
            return request.param


        @pytest.mark.parametrize("values, top", [([1, 2], 2), (["a"], "a")])
        def test_push_pop(stack, values, top):
            for v in values:
                stack.push(v)
            assert stack.pop() == top


        def test_count(stack, count):
            for i in range(count):
                stack.push(i)
            assert len(stack) == count


        def test_teardown_ran():
            assert len(LOG) == 5
        """,
    ),
    "tmp-path-both-ways": (
        {
            "notes.py": """
            import json
            from pathlib import Path


            def save(folder, name, data):
                path = Path(folder) / f"{name}.json"
                path.write_text(json.dumps(data))
                return path


            def load_all(folder):
                paths = sorted(Path(folder).glob("*.json"))
                return {p.stem: json.loads(p.read_text()) for p in paths}
            """
        },
        """
        import json

        import notes


        def test_candidate_writes_test_reads(tmp_path):
            path = notes.save(tmp_path, "a", {"x": 1})
            assert path == tmp_path / "a.json"
            assert json.loads((tmp_path / "a.json").read_text()) == {"x": 1}


        def test_test_writes_candidate_reads(tmp_path):
            (tmp_path / "b.json").write_text('{"y": 2}')
            assert notes.load_all(tmp_path) == {"b": {"y": 2}}
        """,
    ),
    "monkeypatch-env-cwd-attr": (
        {
            "settings.py": """
            import os
            import time
            from pathlib import Path


            def level():
                return os.environ.get("APP_LEVEL", "info")


            def local_config():
                return Path("app.cfg").read_text().strip()


            def stamp():
                return f"t={time.time():.0f}"
            """
        },
        """
        import os

        import settings


        def test_env(monkeypatch):
            monkeypatch.setenv("APP_LEVEL", "debug")
            assert settings.level() == "debug"
            monkeypatch.delenv("APP_LEVEL")
            assert settings.level() == "info"


        def test_cwd(tmp_path, monkeypatch):
            (tmp_path / "app.cfg").write_text("on\\n")
            monkeypatch.chdir(tmp_path)
            assert settings.local_config() == "on"


        def test_patch_stdlib_in_candidate(monkeypatch):
            monkeypatch.setattr(settings.time, "time", lambda: 42.0)
            assert settings.stamp() == "t=42"


        def test_candidate_sets_env():
            os.environ["SEEN_BY_CANDIDATE"] = "1"
            try:
                assert os.environ.get("SEEN_BY_CANDIDATE") == "1"
            finally:
                del os.environ["SEEN_BY_CANDIDATE"]
        """,
    ),
    "capsys-caplog-warns": (
        {
            "report.py": """
            import logging
            import sys
            import warnings

            log = logging.getLogger("report")


            def show(rows):
                for row in rows:
                    print(" | ".join(map(str, row)))
                print("done", file=sys.stderr)
                log.info("showed %d rows", len(rows))
                if not rows:
                    warnings.warn("nothing to show", UserWarning)
            """
        },
        """
        import logging

        import pytest

        import report


        def test_output(capsys):
            report.show([(1, 2), ("a", "b")])
            out, err = capsys.readouterr()
            assert out == "1 | 2\\na | b\\n"
            assert err == "done\\n"


        def test_logs(caplog):
            with caplog.at_level(logging.INFO, logger="report"):
                report.show([(1,)])
            assert caplog.records[0].getMessage() == "showed 1 rows"
            assert caplog.records[0].levelname == "INFO"


        def test_warns():
            with pytest.warns(UserWarning, match="nothing"):
                report.show([])
        """,
    ),
    "raises-approx": (
        {
            "stats.py": """
            class EmptyError(ValueError):
                def __init__(self, what):
                    super().__init__(f"no {what}")
                    self.what = what


            def mean(xs):
                if not xs:
                    raise EmptyError("values")
                return sum(xs) / len(xs)


            def normalise(d):
                total = sum(d.values())
                return {k: v / total for k, v in d.items()}
            """
        },
        """
        import pytest

        import stats


        def test_raises_with_match_and_attrs():
            with pytest.raises(stats.EmptyError, match=r"^no values$") as info:
                stats.mean([])
            assert info.value.what == "values"
            assert info.type is stats.EmptyError


        def test_approx():
            assert stats.mean([0.1, 0.2]) == pytest.approx(0.15)
            assert stats.normalise({"a": 1, "b": 2}) == pytest.approx({"a": 1 / 3, "b": 2 / 3})
            assert [stats.mean([1, 2]), 0.3] == pytest.approx([1.5, 0.1 + 0.2])
        """,
    ),
    "marks-xfail-skip": (
        {
            "calc.py": """
            def div(a, b):
                return a / b
            """
        },
        """
        import sys

        import pytest

        import calc


        @pytest.mark.xfail(raises=ZeroDivisionError, strict=True)
        def test_div_zero_expected_to_fail():
            calc.div(1, 0)


        @pytest.mark.skipif(sys.platform == "win32", reason="posix only")
        def test_div():
            assert calc.div(6, 3) == 2


        def test_div_more():
            assert calc.div(1, 4) == 0.25
        """,
    ),
    "unittest-testcase-machinery": (
        {
            "inventory.py": """
            import logging

            log = logging.getLogger("inventory")


            class OutOfStock(Exception):
                pass


            class Inventory:
                def __init__(self):
                    self.items = {}

                def add(self, name, n=1):
                    self.items[name] = self.items.get(name, 0) + n
                    log.info("added %s", name)

                def take(self, name):
                    if not self.items.get(name):
                        raise OutOfStock(name)
                    self.items[name] -= 1
                    return name
            """
        },
        """
        import unittest

        from inventory import Inventory, OutOfStock


        class InventoryTest(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                cls.names = ["apple", "pear"]

            def setUp(self):
                self.inv = Inventory()
                self.addCleanup(self.inv.items.clear)

            def test_add_and_take(self):
                for name in self.names:
                    with self.subTest(name=name):
                        self.inv.add(name, 2)
                        self.assertEqual(self.inv.take(name), name)
                        self.assertEqual(self.inv.items[name], 1)

            def test_out_of_stock(self):
                with self.assertRaisesRegex(OutOfStock, "kiwi"):
                    self.inv.take("kiwi")

            def test_logs(self):
                with self.assertLogs("inventory", level="INFO") as seen:
                    self.inv.add("fig")
                self.assertEqual(seen.output, ["INFO:inventory:added fig"])

            def test_dict_equal(self):
                self.inv.add("a", 3)
                self.assertDictEqual(self.inv.items, {"a": 3})
                self.assertIsInstance(self.inv, Inventory)
        """,
    ),
    "mock-patch-candidate": (
        {
            "client.py": """
            import urllib.request


            def fetch(url):
                with urllib.request.urlopen(url) as resp:
                    return resp.read().decode()


            class Service:
                def __init__(self, transport):
                    self.transport = transport

                def status(self):
                    reply = self.transport.get("/status")
                    return reply["state"] if reply else "down"

                def name(self):
                    return "service"


            def greeting():
                return f"hello from {fetch('http://example.invalid/')}"
            """
        },
        """
        from unittest import mock

        import client


        def test_patch_module_function():
            with mock.patch("client.fetch", return_value="stub") as fake:
                assert client.greeting() == "hello from stub"
            fake.assert_called_once_with("http://example.invalid/")


        def test_magicmock_passed_in():
            transport = mock.MagicMock()
            transport.get.return_value = {"state": "up"}
            assert client.Service(transport).status() == "up"
            transport.get.assert_called_once_with("/status")


        def test_patch_object_method():
            with mock.patch.object(client.Service, "name", return_value="fake"):
                assert client.Service(None).name() == "fake"
            assert client.Service(None).name() == "service"


        def test_side_effect_and_sentinel():
            transport = mock.Mock()
            transport.get.side_effect = [None, {"state": mock.sentinel.state}]
            svc = client.Service(transport)
            assert svc.status() == "down"
            assert svc.status() is mock.sentinel.state
        """,
    ),
    "doctest-of-candidate": (
        {
            "textutil.py": '''
            def title(s):
                """Title-case every word.

                >>> title("hello world")
                'Hello World'
                >>> title("")
                ''
                """
                return " ".join(w.capitalize() for w in s.split(" ")) if s else ""
            '''
        },
        """
        import doctest

        import textutil


        def test_doctests():
            result = doctest.testmod(textutil)
            assert result.attempted == 2
            assert result.failed == 0
        """,
    ),
    "request-finalizer-and-factory": (
        {
            "pool.py": """
            class Pool:
                open_count = 0

                def __init__(self, size):
                    self.size = size
                    Pool.open_count += 1
                    self.closed = False

                def close(self):
                    if not self.closed:
                        Pool.open_count -= 1
                        self.closed = True
            """
        },
        """
        import pytest

        from pool import Pool


        @pytest.fixture
        def make_pool(request):
            def make(size):
                p = Pool(size)
                request.addfinalizer(p.close)
                return p

            return make


        def test_factory(make_pool):
            a, b = make_pool(1), make_pool(2)
            assert (a.size, b.size) == (1, 2)
            assert Pool.open_count >= 2


        def test_all_closed_after():
            assert Pool.open_count == 0
        """,
    ),
    "autospec-and-property-mock": (
        {
            "weather.py": """
            class Station:
                @property
                def temperature(self):
                    raise RuntimeError("no sensor")

                def read(self, unit):
                    return {"unit": unit}


            def summary(station):
                return f"{station.temperature:.1f} {station.read('C')['unit']}"
            """
        },
        """
        from unittest import mock

        import weather


        def test_property_mock_and_autospec():
            kind = mock.PropertyMock
            with mock.patch.object(weather.Station, "temperature", new_callable=kind) as t:
                t.return_value = 21.25
                assert weather.summary(weather.Station()) == "21.2 C"


        def test_autospec_checks_signature():
            fake = mock.create_autospec(weather.Station, instance=True)
            fake.read.return_value = {"unit": "F"}
            fake.temperature = 70.0
            assert weather.summary(fake) == "70.0 F"
            fake.read.assert_called_once_with("C")
        """,
    ),
    "capfd-subprocess-free-output": (
        {
            "shout.py": """
            import os
            import sys


            def shout(msg):
                sys.stdout.write(msg.upper() + "\\n")
                sys.stdout.flush()
                os.write(2, b"raw\\n")
            """
        },
        """
        import shout


        def test_fd_capture(capfd):
            shout.shout("hi")
            out, err = capfd.readouterr()
            assert out == "HI\\n"
            assert err == "raw\\n"
        """,
    ),
}


def items(which: str) -> list[Item]:
    table = {"classes": CLASSES, "machinery": MACHINERY}[which]
    out = []
    for name, (files, test) in table.items():
        out.append(
            Item(
                id=f"{which}:{name}",
                project=f"idioms-{which}",
                test_name=f"test_{name.replace('-', '_')}.py",
                test_source=dedent(test).lstrip(),
                files={k: dedent(v).lstrip() for k, v in files.items()},
            )
        )
    return out
