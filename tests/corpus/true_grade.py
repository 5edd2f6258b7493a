"""The acceptance corpus for `isolation: process` (tests/witness/test_true_grade.py grades
it): CORRECT, small modules and tests written the way people write them, each to grade
`pass`; ATTACKS, wrong modules that try to forge the grade through an object the test
hands them, each to grade `fail`."""

from __future__ import annotations

from tests.harness import Case, _corpus, _d

# -- shared candidate modules -----------------------------------------------------------

MONEY = _d(
    """
    import functools
    from dataclasses import dataclass


    @functools.total_ordering
    @dataclass(frozen=True, eq=False)
    class Money:
        cents: int

        def __eq__(self, other):
            if not isinstance(other, Money):
                return NotImplemented
            return self.cents == other.cents

        def __hash__(self):
            return hash(("Money", self.cents))

        def __lt__(self, other):
            if not isinstance(other, Money):
                return NotImplemented
            return self.cents < other.cents

        def __add__(self, other):
            if not isinstance(other, Money):
                return NotImplemented
            return Money(self.cents + other.cents)

        def __radd__(self, other):
            if other == 0:
                return self
            return NotImplemented

        def __sub__(self, other):
            if not isinstance(other, Money):
                return NotImplemented
            return Money(self.cents - other.cents)

        def __mul__(self, factor):
            if not isinstance(factor, int):
                return NotImplemented
            return Money(self.cents * factor)

        __rmul__ = __mul__

        def __neg__(self):
            return Money(-self.cents)

        def __abs__(self):
            return Money(abs(self.cents))

        def __repr__(self):
            return f"Money({self.cents})"

        def __str__(self):
            return f"${self.cents // 100}.{self.cents % 100:02d}"

        def __format__(self, spec):
            if not spec:
                return str(self)
            return format(self.cents / 100, spec)


    def parse(text):
        units, _, frac = text.partition(".")
        return Money(int(units) * 100 + int((frac + "00")[:2]))
    """
)

PLAIN_MONEY = _d(
    """
    from dataclasses import dataclass


    @dataclass(frozen=True)
    class Money:
        cents: int


    def parse(text):
        units, _, frac = text.partition(".")
        return Money(int(units) * 100 + int((frac + "00")[:2]))
    """
)

CONFPARSE = _d(
    """
    class AppError(Exception):
        pass


    class ParseError(AppError, ValueError):
        def __init__(self, line, message):
            super().__init__(f"{message} at line {line}")
            self.line = line


    def parse_config(text):
        result = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise ParseError(number, "missing '='")
            key, value = (part.strip() for part in line.split("=", 1))
            result[key] = value
        return result
    """
)

# -- 1. the CORRECT corpus: each must grade pass ----------------------------------------

CORRECT = _corpus(
    # -- dataclasses
    Case(
        "dataclass-equality",
        "money.py",
        PLAIN_MONEY,
        _d(
            """
            import money as m


            def test_parse_equals_constructed():
                assert m.parse("1.50") == m.Money(150)
                assert m.parse("2") == m.Money(200)


            def test_not_equal():
                assert m.parse("2") != m.Money(150)
                assert m.Money(1) != 1
            """
        ),
    ),
    Case(
        "frozen-dataclass-set-and-dict-key",
        "money.py",
        PLAIN_MONEY,
        _d(
            """
            import dataclasses

            import pytest

            import money as m


            def test_set_dedupes():
                assert len({m.Money(1), m.Money(1)}) == 1
                assert m.Money(1) in {m.Money(1), m.Money(2)}


            def test_dict_key():
                assert {m.Money(1): "one"}[m.Money(1)] == "one"
                prices = {m.parse("0.01"): "penny"}
                assert prices.get(m.Money(1)) == "penny"


            def test_hash_is_stable():
                assert hash(m.Money(3)) == hash(m.parse("0.03"))


            def test_frozen():
                x = m.Money(1)
                with pytest.raises(dataclasses.FrozenInstanceError):
                    x.cents = 2
            """
        ),
    ),
    Case(
        "dataclasses-asdict-astuple",
        "money.py",
        PLAIN_MONEY,
        _d(
            """
            import dataclasses

            import money as m


            def test_asdict():
                assert dataclasses.asdict(m.Money(5)) == {"cents": 5}


            def test_astuple():
                assert dataclasses.astuple(m.parse("0.05")) == (5,)


            def test_is_dataclass():
                assert dataclasses.is_dataclass(m.Money(5))
                assert dataclasses.is_dataclass(m.Money)
            """
        ),
    ),
    Case(
        "dataclasses-replace-fields",
        "money.py",
        PLAIN_MONEY,
        _d(
            """
            import dataclasses

            import money as m


            def test_replace():
                assert dataclasses.replace(m.Money(5), cents=7) == m.Money(7)


            def test_fields():
                assert [f.name for f in dataclasses.fields(m.Money)] == ["cents"]
                assert [f.name for f in dataclasses.fields(m.Money(1))] == ["cents"]
            """
        ),
    ),
    Case(
        "from-import-names",
        "money.py",
        PLAIN_MONEY,
        _d(
            """
            from money import Money, parse


            def test_from_import():
                assert parse("0.99") == Money(99)
                assert Money(99).cents == 99
            """
        ),
    ),
    # -- operators between candidate objects
    Case(
        "operators-add-sub",
        "money.py",
        MONEY,
        _d(
            """
            import money as m


            def test_add():
                assert m.Money(100) + m.Money(50) == m.Money(150)


            def test_sub():
                assert m.Money(100) - m.Money(30) == m.Money(70)


            def test_chain():
                total = m.parse("1.00") + m.parse("2.00") - m.parse("0.50")
                assert total == m.Money(250)
            """
        ),
    ),
    Case(
        "operators-mul-by-int-both-sides",
        "money.py",
        MONEY,
        _d(
            """
            import money as m


            def test_mul_right():
                assert m.Money(100) * 3 == m.Money(300)


            def test_mul_left():
                assert 3 * m.Money(100) == m.Money(300)
            """
        ),
    ),
    Case(
        "sum-with-radd",
        "money.py",
        MONEY,
        _d(
            """
            import money as m


            def test_sum():
                assert sum([m.Money(1), m.Money(2), m.Money(3)]) == m.Money(6)


            def test_sum_with_start():
                assert sum([], m.Money(0)) == m.Money(0)
                assert sum((m.Money(5) for _ in range(3)), m.Money(1)) == m.Money(16)
            """
        ),
    ),
    Case(
        "unary-neg-abs",
        "money.py",
        MONEY,
        _d(
            """
            import money as m


            def test_neg():
                assert -m.Money(5) == m.Money(-5)


            def test_abs():
                assert abs(m.Money(-5)) == m.Money(5)
            """
        ),
    ),
    Case(
        "ordering-sorted-max-min",
        "money.py",
        MONEY,
        _d(
            """
            import money as m


            def test_sorted():
                xs = [m.Money(3), m.Money(1), m.Money(2)]
                assert sorted(xs) == [m.Money(1), m.Money(2), m.Money(3)]
                assert sorted(xs, reverse=True)[0] == m.Money(3)


            def test_max_min():
                xs = [m.parse("0.09"), m.parse("0.01"), m.parse("0.05")]
                assert max(xs) == m.Money(9)
                assert min(xs) == m.Money(1)


            def test_total_ordering():
                assert m.Money(1) <= m.Money(1)
                assert m.Money(1) < m.Money(2)
                assert m.Money(3) > m.Money(2)
                assert m.Money(3) >= m.Money(3)
                assert not m.Money(3) <= m.Money(2)
            """
        ),
    ),
    # -- types
    Case(
        "isinstance-issubclass-type",
        "shapes.py",
        _d(
            """
            class Base:
                def area(self):
                    return 0


            class Sub(Base):
                def __init__(self, side=1):
                    self.side = side

                def area(self):
                    return self.side * self.side


            class Money:
                def __init__(self, cents):
                    self.cents = cents


            def parse(text):
                return Money(int(text) * 100)


            def make(side):
                return Sub(side)
            """
        ),
        _d(
            """
            import shapes as m


            def test_isinstance():
                assert isinstance(m.parse("3"), m.Money)
                assert isinstance(m.make(2), m.Base)
                assert not isinstance(m.parse("3"), m.Base)


            def test_issubclass():
                assert issubclass(m.Sub, m.Base)
                assert not issubclass(m.Base, m.Sub)


            def test_type_name():
                x = m.parse("3")
                assert type(x).__name__ == "Money"
                assert type(x) is m.Money


            def test_same_type():
                a, b = m.make(2), m.make(3)
                assert type(a) is type(b)
                assert a.area() == 4 and b.area() == 9
            """
        ),
    ),
    Case(
        "instance-methods-property-classmethod",
        "account.py",
        _d(
            """
            class Account:
                interest = 0.5

                def __init__(self, owner, balance=0):
                    self.owner = owner
                    self._balance = balance

                @property
                def balance(self):
                    return self._balance

                def deposit(self, amount):
                    if amount <= 0:
                        raise ValueError("amount must be positive")
                    self._balance += amount
                    return self

                @classmethod
                def from_string(cls, text):
                    owner, balance = text.split(":")
                    return cls(owner, int(balance))

                @staticmethod
                def currency():
                    return "EUR"
            """
        ),
        _d(
            """
            import pytest

            import account as m


            def test_deposit():
                acct = m.Account("bob")
                acct.deposit(5).deposit(2)
                assert acct.balance == 7
                assert acct.owner == "bob"


            def test_classmethod_and_static():
                acct = m.Account.from_string("ann:5")
                assert (acct.owner, acct.balance) == ("ann", 5)
                assert m.Account.currency() == "EUR"
                assert acct.interest == 0.5


            def test_rejects_negative():
                with pytest.raises(ValueError, match="positive"):
                    m.Account("bob").deposit(-1)


            def test_attribute_set_by_test():
                acct = m.Account("bob")
                acct.owner = "rob"
                assert acct.owner == "rob"
            """
        ),
    ),
    Case(
        "module-constants",
        "settings.py",
        _d(
            """
            VERSION = "1.0"
            DEFAULTS = {"retries": 3, "verbose": False}
            LIMITS = (1, 10)


            def retries():
                return DEFAULTS["retries"]
            """
        ),
        _d(
            """
            import settings as m


            def test_constants():
                assert m.VERSION == "1.0"
                assert m.DEFAULTS == {"retries": 3, "verbose": False}
                assert m.LIMITS == (1, 10)
                assert m.DEFAULTS["retries"] == m.retries()


            def test_has_names():
                assert hasattr(m, "retries")
                assert callable(m.retries)
                assert not hasattr(m, "missing")
            """
        ),
    ),
    # -- exceptions
    Case(
        "exception-hierarchy-pytest-raises",
        "confparse.py",
        CONFPARSE,
        _d(
            """
            import pytest

            import confparse as m

            BAD = "a = 1\\nb = 2\\noops\\n"


            def test_parses():
                assert m.parse_config("a = 1\\n# note\\nb=2\\n") == {"a": "1", "b": "2"}


            def test_app_error():
                with pytest.raises(m.AppError):
                    m.parse_config(BAD)


            def test_value_error():
                with pytest.raises(ValueError):
                    m.parse_config(BAD)


            def test_line_and_message():
                with pytest.raises(m.ParseError) as info:
                    m.parse_config(BAD)
                assert info.value.line == 3
                assert str(info.value) == "missing '=' at line 3"
                assert info.type is m.ParseError


            def test_match():
                with pytest.raises(m.ParseError, match="line 3"):
                    m.parse_config(BAD)
            """
        ),
    ),
    Case(
        "exception-try-except-in-test",
        "confparse.py",
        CONFPARSE,
        _d(
            """
            import confparse as m


            def test_except_base_class():
                try:
                    m.parse_config("x\\n")
                except m.AppError as e:
                    assert isinstance(e, m.ParseError)
                    assert isinstance(e, ValueError)
                    assert e.line == 1
                    assert e.args == ("missing '=' at line 1",)
                else:
                    raise AssertionError("no error raised")


            def test_except_value_error():
                caught = None
                try:
                    m.parse_config("ok = 1\\nbad\\n")
                except ValueError as e:
                    caught = e
                assert type(caught).__name__ == "ParseError"
                assert caught.line == 2
            """
        ),
    ),
    Case(
        "builtin-exceptions-raised",
        "lookup.py",
        _d(
            """
            TABLE = {"a": 1}


            def get(key):
                return TABLE[key]


            def ratio(a, b):
                return a / b


            def check(value):
                if not isinstance(value, int):
                    raise TypeError(f"expected int, got {type(value).__name__}")
                return value
            """
        ),
        _d(
            """
            import pytest

            import lookup as m


            def test_key_error():
                with pytest.raises(KeyError) as info:
                    m.get("zzz")
                assert info.value.args == ("zzz",)


            def test_zero_division():
                with pytest.raises(ZeroDivisionError):
                    m.ratio(1, 0)


            def test_type_error_message():
                with pytest.raises(TypeError, match="expected int, got str"):
                    m.check("x")
                assert m.check(4) == 4
            """
        ),
    ),
    # -- containers and protocols
    Case(
        "container-protocol",
        "stack.py",
        _d(
            """
            class Stack:
                def __init__(self, items=()):
                    self._items = list(items)

                def push(self, item):
                    self._items.append(item)

                def pop(self):
                    return self._items.pop()

                def __len__(self):
                    return len(self._items)

                def __iter__(self):
                    return iter(self._items)

                def __contains__(self, item):
                    return item in self._items

                def __getitem__(self, index):
                    return self._items[index]
            """
        ),
        _d(
            """
            import pytest

            import stack as m


            @pytest.fixture
            def stack():
                s = m.Stack()
                for x in (1, 2, 3):
                    s.push(x)
                return s


            def test_len_iter(stack):
                assert len(stack) == 3
                assert list(stack) == [1, 2, 3]
                assert [x * 10 for x in stack] == [10, 20, 30]


            def test_contains_getitem(stack):
                assert 2 in stack
                assert 9 not in stack
                assert stack[0] == 1
                assert stack[-1] == 3
                assert stack[0:2] == [1, 2]


            def test_truthiness(stack):
                assert stack
                assert not m.Stack()
                assert stack.pop() == 3
                assert len(stack) == 2


            def test_index_error():
                with pytest.raises(IndexError):
                    m.Stack()[0]
            """
        ),
    ),
    Case(
        "generator-function",
        "counting.py",
        _d(
            """
            def countdown(n):
                while n > 0:
                    yield n
                    n -= 1


            def evens():
                n = 0
                while True:
                    yield n
                    n += 2
            """
        ),
        _d(
            """
            import itertools

            import pytest

            import counting as m


            def test_list():
                assert list(m.countdown(3)) == [3, 2, 1]


            def test_next_and_stop():
                g = m.countdown(1)
                assert next(g) == 1
                with pytest.raises(StopIteration):
                    next(g)


            def test_infinite():
                assert list(itertools.islice(m.evens(), 4)) == [0, 2, 4, 6]
                assert sum(m.countdown(4)) == 10
            """
        ),
    ),
    Case(
        "context-manager-class",
        "guard.py",
        _d(
            """
            class Recorder:
                def __init__(self):
                    self.events = []

                def __enter__(self):
                    self.events.append("enter")
                    return self

                def __exit__(self, exc_type, exc, tb):
                    self.events.append("exit")
                    return False


            class Suppress:
                def __init__(self, *kinds):
                    self.kinds = kinds
                    self.caught = None

                def __enter__(self):
                    return self

                def __exit__(self, exc_type, exc, tb):
                    if exc_type is not None and issubclass(exc_type, self.kinds):
                        self.caught = exc
                        return True
                    return False
            """
        ),
        _d(
            """
            import pytest

            import guard as m


            def test_with():
                with m.Recorder() as r:
                    r.events.append("body")
                assert r.events == ["enter", "body", "exit"]


            def test_suppresses():
                with m.Suppress(ValueError) as s:
                    raise ValueError("boom")
                assert str(s.caught) == "boom"


            def test_does_not_suppress_others():
                with pytest.raises(KeyError):
                    with m.Suppress(ValueError):
                        raise KeyError("k")
            """
        ),
    ),
    Case(
        "callable-object",
        "ops.py",
        _d(
            """
            class Multiplier:
                def __init__(self, factor):
                    self.factor = factor

                def __call__(self, value):
                    return value * self.factor
            """
        ),
        _d(
            """
            import ops as m


            def test_call():
                triple = m.Multiplier(3)
                assert triple(4) == 12
                assert callable(triple)
                assert list(map(triple, [1, 2])) == [3, 6]
            """
        ),
    ),
    # -- text forms
    Case(
        "repr-str-format",
        "money.py",
        MONEY,
        _d(
            """
            import money as m


            def test_repr():
                assert repr(m.Money(150)) == "Money(150)"
                assert repr([m.Money(1)]) == "[Money(1)]"


            def test_str_and_fstring():
                x = m.parse("1.50")
                assert str(x) == "$1.50"
                assert f"{x}" == "$1.50"
                assert f"total: {x!r}" == "total: Money(150)"


            def test_format_spec():
                x = m.Money(150)
                assert format(x, ".2f") == "1.50"
                assert f"{x:.1f}" == "1.5"
                assert "{:.3f}".format(x) == "1.500"
            """
        ),
    ),
    # -- stdlib values returned by the candidate
    Case(
        "stdlib-counter",
        "words.py",
        _d(
            """
            from collections import Counter


            def letter_counts(text):
                return Counter(text)
            """
        ),
        _d(
            """
            from collections import Counter

            import words as m


            def test_counter():
                counts = m.letter_counts("aab")
                assert counts == {"a": 2, "b": 1}
                assert counts == Counter("aba")
                assert isinstance(counts, Counter)
                assert counts.most_common(1) == [("a", 2)]
                assert counts["z"] == 0
            """
        ),
    ),
    Case(
        "stdlib-defaultdict",
        "grouping.py",
        _d(
            """
            from collections import defaultdict


            def group(words):
                groups = defaultdict(list)
                for word in words:
                    groups[word[0]].append(word)
                return groups
            """
        ),
        _d(
            """
            from collections import defaultdict

            import grouping as m


            def test_defaultdict():
                groups = m.group(["ab", "ac", "b"])
                assert groups == {"a": ["ab", "ac"], "b": ["b"]}
                assert isinstance(groups, defaultdict)
                assert groups["z"] == []
                assert sorted(groups) == ["a", "b", "z"]
            """
        ),
    ),
    Case(
        "stdlib-ordereddict",
        "ordering.py",
        _d(
            """
            from collections import OrderedDict


            def by_length(words):
                return OrderedDict((w, len(w)) for w in sorted(words, key=len))
            """
        ),
        _d(
            """
            from collections import OrderedDict

            import ordering as m


            def test_ordereddict():
                result = m.by_length(["ccc", "a", "bb"])
                assert result == OrderedDict([("a", 1), ("bb", 2), ("ccc", 3)])
                assert list(result.keys()) == ["a", "bb", "ccc"]
                assert isinstance(result, OrderedDict)
                result.move_to_end("a")
                assert list(result) == ["bb", "ccc", "a"]
            """
        ),
    ),
    Case(
        "stdlib-typing-namedtuple",
        "geometry.py",
        _d(
            """
            from typing import NamedTuple


            class Point(NamedTuple):
                x: int
                y: int


            def shift(p, dx):
                return Point(p.x + dx, p.y)


            def origin_plus(x, y):
                return Point(x, y)
            """
        ),
        _d(
            """
            import geometry as m


            def test_namedtuple_equals_tuple():
                p = m.origin_plus(1, 2)
                assert p == (1, 2)
                assert p.x == 1 and p.y == 2
                x, y = p
                assert (x, y) == (1, 2)


            def test_namedtuple_methods():
                p = m.shift(m.Point(1, 2), 3)
                assert p == m.Point(4, 2)
                assert p._replace(y=0) == (4, 0)
                assert p._asdict() == {"x": 4, "y": 2}
                assert isinstance(p, tuple)
            """
        ),
    ),
    Case(
        "stdlib-collections-namedtuple",
        "pairs.py",
        _d(
            """
            from collections import namedtuple

            Pair = namedtuple("Pair", "a b")


            def make_pair():
                return Pair(1, 2)
            """
        ),
        _d(
            """
            import pairs as m


            def test_pair():
                pair = m.make_pair()
                assert pair == (1, 2)
                assert pair.a == 1
                assert pair[1] == 2
                assert pair._asdict() == {"a": 1, "b": 2}
                assert type(pair).__name__ == "Pair"
            """
        ),
    ),
    Case(
        "stdlib-datetime",
        "schedule.py",
        _d(
            """
            import datetime as dt


            def duration(minutes):
                return dt.timedelta(minutes=minutes)


            def next_day(day):
                return day + dt.timedelta(days=1)


            def at_noon(day):
                return dt.datetime(day.year, day.month, day.day, 12, 0)
            """
        ),
        _d(
            """
            from datetime import date, datetime, timedelta

            import schedule as m


            def test_timedelta():
                assert m.duration(90) == timedelta(hours=1, minutes=30)
                assert m.duration(90).total_seconds() == 5400


            def test_date():
                assert m.next_day(date(2024, 1, 31)) == date(2024, 2, 1)
                assert m.next_day(date(2024, 2, 28)).isoformat() == "2024-02-29"


            def test_datetime():
                noon = m.at_noon(date(2024, 3, 1))
                assert noon == datetime(2024, 3, 1, 12, 0)
                assert isinstance(noon, datetime)
                assert noon - datetime(2024, 3, 1) == timedelta(hours=12)
            """
        ),
    ),
    Case(
        "stdlib-decimal-fraction",
        "numbers_kit.py",
        _d(
            """
            from decimal import Decimal
            from fractions import Fraction


            def total(prices):
                return sum((Decimal(p) for p in prices), Decimal("0"))


            def share(parts):
                return Fraction(1, parts)
            """
        ),
        _d(
            """
            from decimal import Decimal
            from fractions import Fraction

            import numbers_kit as m


            def test_decimal():
                result = m.total(["1.10", "2.20"])
                assert result == Decimal("3.30")
                assert str(result) == "3.30"


            def test_fraction():
                assert m.share(3) == Fraction(1, 3)
                assert m.share(3) * 3 == 1
                assert m.share(4).denominator == 4
            """
        ),
    ),
    Case(
        "stdlib-uuid-path",
        "ids.py",
        _d(
            """
            import uuid
            from pathlib import PurePosixPath


            def ns_id(name):
                return uuid.uuid5(uuid.NAMESPACE_DNS, name)


            def join(*parts):
                return PurePosixPath(*parts)
            """
        ),
        _d(
            """
            import uuid
            from pathlib import PurePosixPath

            import ids as m


            def test_uuid():
                assert m.ns_id("x") == uuid.uuid5(uuid.NAMESPACE_DNS, "x")
                assert m.ns_id("x").version == 5
                assert str(m.ns_id("x")) == str(uuid.uuid5(uuid.NAMESPACE_DNS, "x"))


            def test_path():
                p = m.join("a", "b", "c.txt")
                assert p == PurePosixPath("a/b/c.txt")
                assert p.name == "c.txt"
                assert p.suffix == ".txt"
                assert str(p.parent) == "a/b"
            """
        ),
    ),
    Case(
        "enum-members",
        "colors.py",
        _d(
            """
            import enum


            class Color(enum.Enum):
                RED = 1
                GREEN = 2


            def pick(value):
                return Color(value)
            """
        ),
        _d(
            """
            import colors as m


            def test_identity():
                assert m.pick(1) is m.Color.RED
                assert m.Color(1) is m.Color.RED
                assert m.Color["GREEN"] is m.Color.GREEN


            def test_value_name():
                assert m.Color.RED.value == 1
                assert m.pick(2).name == "GREEN"
                assert list(m.Color) == [m.Color.RED, m.Color.GREEN]
                assert m.pick(1) == m.Color.RED
                assert m.pick(1) != m.Color.GREEN
            """
        ),
    ),
    Case(
        "intenum-compares-to-int",
        "levels.py",
        _d(
            """
            import enum


            class Level(enum.IntEnum):
                LOW = 1
                HIGH = 3


            def level_of(name):
                return Level[name.upper()]
            """
        ),
        _d(
            """
            import levels as m


            def test_intenum():
                assert m.level_of("high") == 3
                assert m.Level.LOW == 1
                assert m.Level.HIGH > m.Level.LOW
                assert int(m.level_of("low")) == 1
                assert m.level_of("low") + 1 == 2
                assert sorted([m.Level.HIGH, m.Level.LOW]) == [1, 3]
            """
        ),
    ),
    Case(
        "builtin-values-complex-range-frozenset-bytes",
        "values.py",
        _d(
            """
            def root():
                return complex(0, 1)


            def evens(n):
                return range(0, n, 2)


            def tags():
                return frozenset({"a", "b"})


            def encode(text):
                return text.encode("utf-8")
            """
        ),
        _d(
            """
            import values as m


            def test_complex():
                assert m.root() == 1j
                assert m.root() ** 2 == -1


            def test_range():
                assert m.evens(5) == range(0, 5, 2)
                assert list(m.evens(5)) == [0, 2, 4]
                assert len(m.evens(10)) == 5


            def test_frozenset():
                assert m.tags() == frozenset({"a", "b"})
                assert m.tags() == {"a", "b"}
                assert "a" in m.tags()


            def test_bytes():
                assert m.encode("hi") == b"hi"
                assert m.encode("é").decode("utf-8") == "é"
                assert m.encode("hi")[0] == 104
            """
        ),
    ),
    # -- the test environment
    Case(
        "capsys-print",
        "hello.py",
        _d(
            """
            import sys


            def greet():
                print("hello")


            def warn(text):
                print(f"warning: {text}", file=sys.stderr)
            """
        ),
        _d(
            """
            import hello as m


            def test_stdout(capsys):
                m.greet()
                assert capsys.readouterr().out == "hello\\n"


            def test_stderr(capsys):
                m.warn("low")
                captured = capsys.readouterr()
                assert captured.err == "warning: low\\n"
                assert captured.out == ""


            def test_twice(capsys):
                m.greet()
                m.greet()
                assert capsys.readouterr().out == "hello\\nhello\\n"
            """
        ),
    ),
    Case(
        "capfd-print",
        "hello.py",
        _d(
            """
            import sys


            def greet():
                print("hello")
                sys.stdout.flush()


            def warn(text):
                print(f"warning: {text}", file=sys.stderr)
            """
        ),
        _d(
            """
            import hello as m


            def test_stdout(capfd):
                m.greet()
                out, err = capfd.readouterr()
                assert out == "hello\\n"


            def test_stderr(capfd):
                m.warn("low")
                assert capfd.readouterr().err == "warning: low\\n"
            """
        ),
    ),
    Case(
        "monkeypatch-builtins-input",
        "prompt.py",
        _d(
            """
            def ask():
                return int(input("number? "))
            """
        ),
        _d(
            """
            import prompt as m


            def test_input(monkeypatch):
                monkeypatch.setattr("builtins.input", lambda _="": "42")
                assert m.ask() == 42
            """
        ),
    ),
    Case(
        "monkeypatch-sys-stdin",
        "reader.py",
        _d(
            """
            import sys


            def read_lines():
                return [line.rstrip("\\n") for line in sys.stdin]
            """
        ),
        _d(
            """
            import io

            import reader as m


            def test_stdin(monkeypatch):
                monkeypatch.setattr("sys.stdin", io.StringIO("a\\nb\\n"))
                assert m.read_lines() == ["a", "b"]
            """
        ),
    ),
    Case(
        "monkeypatch-chdir-candidate-writes",
        "saver.py",
        _d(
            """
            def save(text):
                with open("out.txt", "w") as f:
                    f.write(text + "\\n")
            """
        ),
        _d(
            """
            import saver as m


            def test_writes_in_cwd(monkeypatch, tmp_path):
                monkeypatch.chdir(tmp_path)
                m.save("hi")
                assert (tmp_path / "out.txt").read_text() == "hi\\n"
            """
        ),
    ),
    Case(
        "reads-file-test-wrote",
        "linecount.py",
        _d(
            """
            from pathlib import Path


            def count_lines(path):
                return len(Path(path).read_text().splitlines())


            def first_line(path):
                with open(path) as f:
                    return f.readline().rstrip("\\n")
            """
        ),
        _d(
            """
            import linecount as m


            def test_path_form(tmp_path):
                path = tmp_path / "in.txt"
                path.write_text("a\\nb\\nc\\n")
                assert m.count_lines(path) == 3
                assert m.first_line(path) == "a"


            def test_str_form(tmp_path):
                path = tmp_path / "in.txt"
                path.write_text("only\\n")
                assert m.count_lines(str(path)) == 1
                assert m.first_line(str(path)) == "only"
            """
        ),
    ),
    Case(
        "writes-to-path-test-passes",
        "reporting.py",
        _d(
            """
            def write_report(path, numbers):
                with open(path, "w") as f:
                    for n in numbers:
                        f.write(f"{n}\\n")
                return len(numbers)
            """
        ),
        _d(
            """
            import reporting as m


            def test_write(tmp_path):
                target = tmp_path / "report.txt"
                assert m.write_report(target, [1, 2]) == 2
                assert target.read_text() == "1\\n2\\n"


            def test_write_str(tmp_path):
                target = tmp_path / "sub"
                target.mkdir()
                m.write_report(str(target / "r.txt"), [3])
                assert (target / "r.txt").read_text() == "3\\n"
            """
        ),
    ),
    Case(
        "monkeypatch-setenv",
        "config_env.py",
        _d(
            """
            import os


            def mode():
                return os.environ.get("APP_MODE", "default")
            """
        ),
        _d(
            """
            import config_env as m


            def test_setenv(monkeypatch):
                monkeypatch.setenv("APP_MODE", "x")
                assert m.mode() == "x"


            def test_delenv(monkeypatch):
                monkeypatch.delenv("APP_MODE", raising=False)
                assert m.mode() == "default"
            """
        ),
    ),
    Case(
        "monkeypatch-module-global",
        "clock.py",
        _d(
            """
            import time


            def now():
                return int(time.time())


            def report():
                return f"at {now()}"
            """
        ),
        _d(
            """
            import clock as m


            def test_patched_now(monkeypatch):
                monkeypatch.setattr(m, "now", lambda: 5)
                assert m.report() == "at 5"


            def test_unpatched_again():
                assert m.report() != "at 5"
            """
        ),
    ),
    Case(
        "candidate-uses-test-object",
        "visitor.py",
        _d(
            """
            def visit(obj):
                obj.seen = True
                obj.note("hi")
                return obj.size() * 2
            """
        ),
        _d(
            """
            import visitor as m


            class Recorder:
                def __init__(self):
                    self.seen = False
                    self.notes = []

                def note(self, text):
                    self.notes.append(text)

                def size(self):
                    return 21


            def test_visit():
                obj = Recorder()
                assert m.visit(obj) == 42
                assert obj.seen is True
                assert obj.notes == ["hi"]
            """
        ),
    ),
    Case(
        "candidate-calls-test-callback",
        "mapping.py",
        _d(
            """
            def apply(xs, fn):
                return [fn(x) for x in xs]
            """
        ),
        _d(
            """
            import functools

            import mapping as m


            def double(v):
                return v * 2


            def test_lambda():
                assert m.apply([1, 2, 3], lambda v: v * 2) == [2, 4, 6]


            def test_function_and_partial():
                assert m.apply([1], double) == [2]
                assert m.apply([2, 3], functools.partial(pow, 2)) == [4, 8]


            def test_closure_state():
                seen = []
                m.apply(["a", "b"], seen.append)
                assert seen == ["a", "b"]
            """
        ),
    ),
    Case(
        "candidate-iterates-test-generator",
        "totals.py",
        _d(
            """
            def total(items):
                result = 0
                for item in items:
                    result += item
                return result


            def first(items):
                return next(iter(items))
            """
        ),
        _d(
            """
            import totals as m


            def test_generator():
                assert m.total(x * x for x in range(10)) == 285


            def numbers():
                yield 4
                yield 5


            def test_generator_function_and_iter():
                assert m.total(numbers()) == 9
                assert m.first(iter([7, 8])) == 7
                assert m.total(range(4)) == 6
            """
        ),
    ),
    Case(
        "candidate-uses-test-stringio",
        "streams.py",
        _d(
            """
            def copy_upper(src, dst):
                for line in src:
                    dst.write(line.upper())


            def read_all(src):
                return src.read()
            """
        ),
        _d(
            """
            import io

            import streams as m


            def test_copy():
                src, dst = io.StringIO("a,b\\nc\\n"), io.StringIO()
                m.copy_upper(src, dst)
                assert dst.getvalue() == "A,B\\nC\\n"


            def test_read():
                assert m.read_all(io.StringIO("xyz")) == "xyz"
            """
        ),
    ),
    Case(
        "mock-client-assert-called",
        "notify.py",
        _d(
            """
            def send(client, text):
                client.post("/msg", json={"text": text})
            """
        ),
        _d(
            """
            from unittest.mock import Mock, call

            import notify as m


            def test_posts():
                client = Mock()
                m.send(client, "hi")
                client.post.assert_called_once_with("/msg", json={"text": "hi"})


            def test_call_list():
                client = Mock()
                m.send(client, "a")
                m.send(client, "b")
                assert client.post.call_count == 2
                assert client.post.call_args_list == [
                    call("/msg", json={"text": "a"}),
                    call("/msg", json={"text": "b"}),
                ]
            """
        ),
    ),
    Case(
        "mock-return-value-and-side-effect",
        "me_api.py",
        _d(
            """
            def fetch_id(client):
                try:
                    return client.get("/me")["id"]
                except TimeoutError:
                    return None
            """
        ),
        _d(
            """
            from unittest.mock import MagicMock, Mock

            import me_api as m


            def test_return_value():
                client = Mock()
                client.get.return_value = {"id": 7}
                assert m.fetch_id(client) == 7
                client.get.assert_called_once_with("/me")


            def test_side_effect():
                client = Mock()
                client.get.side_effect = TimeoutError
                assert m.fetch_id(client) is None


            def test_magicmock():
                gateway = MagicMock()
                gateway.get.return_value.__getitem__.return_value = 9
                assert m.fetch_id(gateway) == 9
                gateway.get.return_value.__getitem__.assert_called_once_with("id")
            """
        ),
    ),
    # -- pytest idioms
    Case(
        "parametrize-fixture-approx",
        "stats_kit.py",
        _d(
            """
            def mean(xs):
                return sum(xs) / len(xs)


            def cents(text):
                units, _, frac = text.partition(".")
                return int(units) * 100 + int((frac + "00")[:2])
            """
        ),
        _d(
            """
            import pytest

            import stats_kit as m


            @pytest.fixture
            def data():
                return [0.1, 0.2, 0.3]


            def test_mean(data):
                assert m.mean(data) == pytest.approx(0.2)


            @pytest.mark.parametrize(
                ("text", "expected"),
                [("1.50", 150), ("2", 200), ("0.05", 5)],
            )
            def test_cents(text, expected):
                assert m.cents(text) == expected
            """
        ),
    ),
    Case(
        "test-class",
        "stack.py",
        _d(
            """
            class Stack:
                def __init__(self):
                    self.items = []

                def push(self, x):
                    self.items.append(x)

                def peek(self):
                    return self.items[-1]
            """
        ),
        _d(
            """
            import stack as m


            class TestStack:
                def setup_method(self):
                    self.stack = m.Stack()

                def test_push_peek(self):
                    self.stack.push(1)
                    assert self.stack.peek() == 1

                def test_items_list(self):
                    self.stack.push("a")
                    self.stack.push("b")
                    assert self.stack.items == ["a", "b"]
            """
        ),
    ),
    Case(
        "loop-2000-calls",
        "adder.py",
        _d(
            """
            def add(a, b):
                return a + b
            """
        ),
        _d(
            """
            import adder as m


            def test_many_calls():
                for i in range(2000):
                    assert m.add(i, 1) == i + 1
            """
        ),
    ),
    # Beyond the brief's list: the test subclasses the candidate's base class and hands an
    # instance back (the template-method idiom). Drop it if it is judged out of scope.
    Case(
        "test-subclasses-candidate-class",
        "plugin.py",
        _d(
            """
            class Plugin:
                name = "base"

                def run(self, x):
                    return self.transform(x) + 1

                def transform(self, x):
                    return x


            def run_all(plugins, x):
                return [p.run(x) for p in plugins]
            """
        ),
        _d(
            """
            import plugin as m


            class Doubler(m.Plugin):
                name = "double"

                def transform(self, x):
                    return x * 2


            def test_subclass():
                assert issubclass(Doubler, m.Plugin)
                assert isinstance(Doubler(), m.Plugin)
                assert Doubler().run(3) == 7
                assert m.run_all([m.Plugin(), Doubler()], 3) == [4, 7]
            """
        ),
    ),
    Case(
        "stdlib-zoneinfo-handed-and-returned",
        "meeting.py",
        _d(
            """
            from datetime import datetime, time


            def local_time(moment: datetime, tz) -> time:
                return moment.astimezone(tz).timetz()


            def zone_of(moment: datetime):
                return moment.tzinfo
            """
        ),
        _d(
            """
            from datetime import datetime, time, timezone
            from zoneinfo import ZoneInfo

            import meeting as m

            BERLIN = ZoneInfo("Europe/Berlin")


            def test_a_zone_handed_over_comes_back_on_the_time():
                t = m.local_time(datetime(2026, 7, 1, 12, tzinfo=timezone.utc), BERLIN)
                assert t.replace(tzinfo=None) == time(14, 0)
                assert t.tzinfo is BERLIN  # ZoneInfo caches by key: the same object


            def test_a_zone_returned_is_the_zone():
                assert m.zone_of(datetime(2026, 1, 1, tzinfo=BERLIN)) is BERLIN
            """
        ),
    ),
)


# -- 2. the ATTACK corpus: each must grade fail -----------------------------------------


def _forge_code(module: str, names: list[str]) -> str:
    """Code that, if it ever ran in the pytest process, writes a passing JUnit report for
    `names` to the `--junitxml` path (now and at exit) and ends the process with 0."""
    cases = "".join(f'<testcase classname="test_{module}" name="{n}"/>' for n in names)
    report = (
        '<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="0" '
        f'failures="0" skipped="0" tests="{len(names)}">{cases}</testsuite></testsuites>'
    )
    return _d(
        f"""
        import atexit, os, sys
        _args = list(sys.argv)
        try:
            _args += open("/proc/self/cmdline", "rb").read().decode().split("\\0")
        except OSError:
            pass
        _paths = [a.split("=", 1)[1] for a in _args if a.startswith("--junitxml=")]
        _paths += [_args[i + 1] for i, a in enumerate(_args[:-1]) if a == "--junitxml"]
        def _forge(_paths=_paths):
            for _p in _paths:
                with open(_p, "w") as _f:
                    _f.write({report!r})
        atexit.register(_forge)
        _forge()
        os._exit(0)
        """
    )


ATTACKS = _corpus(
    # Would fool plain pytest: the candidate patches a pure-Python stdlib class that the
    # test compares with (every Fraction equals every value), then answers wrong.
    Case(
        "stdlib-class-patched-equality",
        "ratio.py",
        _d(
            """
            import fractions

            fractions.Fraction.__eq__ = lambda self, other: True


            def share(part, whole):
                return fractions.Fraction(7, 3)
            """
        ),
        _d(
            """
            from fractions import Fraction

            import ratio as m


            def test_share():
                assert m.share(1, 2) == Fraction(1, 2)
            """
        ),
    ),
    # (a) Would fool plain pytest: the generator is the test's, its frame's builtins are
    # the pytest process's, and the code run through them forges the report and exits 0.
    Case(
        "generator-frame-builtins-exec",
        "squares.py",
        _d(
            f"""
            CODE = {_forge_code("squares", ["test_sum_of_squares"])!r}


            def total(it):
                try:
                    it.gi_frame.f_builtins["exec"](CODE)
                except Exception:
                    pass
                return 0  # the honest (wrong) answer
            """
        ),
        _d(
            """
            import squares as m


            def test_sum_of_squares():
                assert m.total(x * x for x in range(10)) == 285
            """
        ),
    ),
    # (b) Would fool plain pytest: the assertion method is replaced instead of posting.
    Case(
        "mock-configure-mock-replaces-assert",
        "notify.py",
        _d(
            """
            def send(client, text):
                client.configure_mock(
                    **{"post.assert_called_once_with": lambda *a, **k: None}
                )
            """
        ),
        _d(
            """
            from unittest.mock import Mock

            import notify as m


            def test_posts():
                client = Mock()
                m.send(client, "hi")
                client.post.assert_called_once_with("/msg", json={"text": "hi"})
            """
        ),
    ),
    # (c) Would fool plain pytest: the forbidden call is wiped from the record.
    Case(
        "magicmock-reset-hides-forbidden-call",
        "billing.py",
        _d(
            """
            def cancel(gateway, amount):
                gateway.charge(amount)  # forbidden
                gateway.reset_mock()
                gateway.refund(amount)
            """
        ),
        _d(
            """
            from unittest.mock import MagicMock

            import billing as m


            def test_refunds_without_charging():
                gateway = MagicMock()
                m.cancel(gateway, 5)
                gateway.charge.assert_not_called()
                gateway.refund.assert_called_once()
            """
        ),
    ),
    # (d) Would fool plain pytest: the handed path leads up the tree to the test file, and
    # its assert holds the expected answer.
    Case(
        "path-walk-reads-test-file",
        "digest.py",
        _d(
            """
            import os
            import re
            from pathlib import Path


            def _answer(start):
                budget = [200_000]  # entries, so the walk up to / ends in time
                for folder in [start, *start.parents]:
                    skip = {"proc", "sys", "dev", "usr", "lib", "lib64", "bin", "sbin", "etc"}
                    tops = [folder] if folder != Path("/") else [
                        p for p in folder.iterdir() if p.name not in skip
                    ]
                    for top in tops:
                        for hit in _rglob(top, "test_*.py", budget):
                            try:
                                text = hit.read_text(errors="replace")
                            except OSError:
                                continue
                            found = re.search(r'digest[(]path[)] == "([^"]*)"', text)
                            if found:
                                return found.group(1)
                return None


            def _rglob(top, pattern, budget):
                # top.rglob(pattern), skipping unreadable folders, stopping on a budget
                for root, dirs, files in os.walk(top, onerror=lambda e: None):
                    budget[0] -= len(dirs) + len(files)
                    if budget[0] < 0:
                        return
                    for hit in Path(root).glob(pattern):
                        yield hit


            def digest(path):
                path = Path(path)
                forged = _answer(path.parent)
                if forged is not None:
                    return forged
                return f"{len(path.read_text().split())} words"  # the honest (wrong) answer
            """
        ),
        _d(
            """
            import digest as m


            def test_digest(tmp_path):
                path = tmp_path / "in.txt"
                path.write_text("alpha\\nbeta\\n")
                assert m.digest(path) == "2 lines, 9 letters: alpha/beta"
            """
        ),
    ),
    # (e) Would fool plain pytest: an object equal to anything.
    Case(
        "always-equal-object",
        "render.py",
        _d(
            """
            class Anything:
                def __eq__(self, other):
                    return True

                def __ne__(self, other):
                    return False

                __hash__ = object.__hash__


            def render(n):
                return Anything()
            """
        ),
        _d(
            """
            import render as m


            def test_render():
                assert m.render(3) == "total: 3"
            """
        ),
    ),
    # (f) Would fool plain pytest: a dict subclass that equals every dict.
    Case(
        "dict-subclass-always-equal",
        "tally.py",
        _d(
            """
            class Loose(dict):
                def __eq__(self, other):
                    return True

                def __ne__(self, other):
                    return False

                __hash__ = None


            def tally(text):
                return Loose()
            """
        ),
        _d(
            """
            import tally as m


            def test_tally():
                assert m.tally("aab") == {"a": 2, "b": 1}
            """
        ),
    ),
    # (g) Would fool plain pytest: a str subclass that equals every string.
    Case(
        "str-subclass-always-equal",
        "greeting.py",
        _d(
            """
            class Loose(str):
                def __eq__(self, other):
                    return True

                def __ne__(self, other):
                    return False

                __hash__ = str.__hash__


            def greet(name):
                return Loose("nope")
            """
        ),
        _d(
            """
            import greeting as m


            def test_greet():
                assert m.greet("ann") == "hello, ann"
            """
        ),
    ),
    # (h) Would fool plain pytest: the callback's function attributes lead to the pytest
    # process's builtins, and the code run through them forges the report and exits 0.
    Case(
        "callback-globals-code-closure",
        "mapping.py",
        _d(
            f"""
            CODE = {_forge_code("mapping", ["test_apply"])!r}


            def _builtins_of(fn):
                routes = [
                    lambda: fn.__globals__["__builtins__"],
                    lambda: fn.__globals__["pytest"].__builtins__,
                    lambda: fn.__closure__[0].cell_contents.__globals__["__builtins__"],
                    lambda: type(fn.__code__).__init__.__globals__["__builtins__"],
                ]
                for route in routes:
                    try:
                        found = route()
                        return found if isinstance(found, dict) else vars(found)
                    except Exception:
                        pass
                return None


            def apply(fn, xs):
                found = _builtins_of(fn)
                if found is not None:
                    try:
                        found["exec"](CODE)
                    except Exception:
                        pass
                try:
                    fn.__code__.co_consts, fn.__closure__
                except Exception:
                    pass
                return []  # the honest (wrong) answer
            """
        ),
        _d(
            """
            import mapping as m


            def test_apply():
                step = 1
                assert m.apply(lambda v: v + step, [1, 2]) == [2, 3]
            """
        ),
    ),
    # (i) Would fool plain pytest, where the replaced child is what the test then asserts
    # on (a lambda given a no-op `assert_called_once_with`): under evalpin it must fail.
    Case(
        "mock-child-replaced-by-setattr",
        "notify.py",
        _d(
            """
            def send(client, text):
                fake = lambda *a, **k: None
                fake.assert_called_once_with = lambda *a, **k: None
                client.post = fake
            """
        ),
        _d(
            """
            from unittest.mock import Mock

            import notify as m


            def test_posts():
                client = Mock()
                m.send(client, "hi")
                client.post.assert_called_once_with("/msg", json={"text": "hi"})
            """
        ),
    ),
    # (j) Would fool plain pytest: the mock's own assertion method is reassigned.
    Case(
        "mock-assert-method-reassigned",
        "pinger.py",
        _d(
            """
            def ping(client):
                client.assert_called_with = lambda *a, **k: None
            """
        ),
        _d(
            """
            from unittest.mock import Mock

            import pinger as m


            def test_ping():
                client = Mock()
                m.ping(client)
                client.assert_called_with("ping")
            """
        ),
    ),
    # (k) The file object's buffer and class lead into the pytest process (in plain
    # pytest they are C types with nothing to reach: an attack on the stand-ins only).
    Case(
        "file-object-buffer-and-class-globals",
        "words_file.py",
        _d(
            f"""
            CODE = {_forge_code("words_file", ["test_first_word"])!r}


            def first_word(f):
                routes = [
                    lambda: f.__class__.__init__.__globals__["__builtins__"],
                    lambda: f.buffer.raw.__class__.__init__.__globals__["__builtins__"],
                    lambda: f.readline.__self__.__class__.__init__.__globals__,
                    lambda: f.buffer.raw.__reduce_ex__.__globals__,
                ]
                for route in routes:
                    try:
                        found = route()
                        found = found if isinstance(found, dict) else vars(found)
                        found.get("exec", found.get("__builtins__", {{}}).get("exec"))(CODE)
                    except Exception:
                        pass
                try:
                    f.buffer.raw.write(b"alpha")
                except Exception:
                    pass
                return f.read().split()[1]  # the honest (wrong) answer
            """
        ),
        _d(
            """
            import words_file as m


            def test_first_word(tmp_path):
                (tmp_path / "in.txt").write_text("alpha beta gamma\\n")
                with open(tmp_path / "in.txt") as f:
                    assert m.first_word(f) == "alpha"
            """
        ),
    ),
)
