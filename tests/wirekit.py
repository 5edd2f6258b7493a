"""The wire's two sides in one process, over real pipes: a `Worker` serving a candidate
module in a thread and a `Judge` the test calls through (the `pair` fixture, imported by
the modules that use it), with the candidate it serves."""

from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Iterator

import pytest

from evalpin.core.instrument.graders.wire import stubs
from evalpin.core.instrument.graders.wire.judge import Judge
from evalpin.core.instrument.graders.wire.worker import Worker, serve

CANDIDATE = """
import collections, dataclasses, datetime, decimal, enum, fractions, itertools, math, pathlib, uuid
from typing import NamedTuple


class Shelves:
    \"\"\"A sized iterable (boltons' BarrelList): `list()` asks its `len()`, not a hint.\"\"\"

    def __init__(self, n):
        self.lists = [list(range(0, n // 2)), list(range(n // 2, n))]

    def __len__(self):
        return sum(len(shelf) for shelf in self.lists)

    def __iter__(self):
        return itertools.chain.from_iterable(self.lists)


class Equal:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class Text(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__

    def splitlines(self, *args):
        return [Equal(), Equal()]

    def shout(self):
        return self.upper() + "!"


class Loose(dict):
    def __eq__(self, other):
        return True


@dataclasses.dataclass(frozen=True, order=True)
class Money:
    cents: int

    def __add__(self, other):
        return Money(self.cents + other.cents) if isinstance(other, Money) else NotImplemented

    def __mul__(self, k):
        return Money(self.cents * k)

    __rmul__ = __mul__

    def __format__(self, spec):
        return format(self.cents / 100, spec)

    @classmethod
    def parse(cls, text):
        return cls(round(float(text) * 100))


class AppError(Exception):
    pass


class ParseError(AppError, ValueError):
    def __init__(self, message, line):
        super().__init__(message)
        self.line = line


class Point(NamedTuple):
    x: int
    y: int

    def norm(self):
        return abs(self.x) + abs(self.y)


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2

    def label(self):
        return self.name.lower()


class Box:
    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, x):
        return x in self.items

    def __enter__(self):
        self.items.append("entered")
        return self

    def __exit__(self, *exc):
        self.items.append("left")
        return False


def values():
    return [
        collections.Counter("aab"), collections.OrderedDict(a=1),
        collections.defaultdict(list, {"k": [1]}), collections.deque([1, 2], maxlen=3),
        datetime.date(2020, 1, 2), datetime.datetime(2020, 1, 2, 3, 4, 5, 6,
        tzinfo=datetime.timezone.utc), datetime.time(1, 2), datetime.timedelta(hours=1),
        decimal.Decimal("3.30"), fractions.Fraction(1, 3), uuid.UUID(int=7),
        pathlib.PurePosixPath("a/b"), pathlib.Path("/x/y"), 2 + 3j, range(1, 9, 2),
        slice(1, None), bytearray(b"ab"), {"a": 1}.keys(), frozenset({1}),
        {"a": (1, 2.5, None), 3: [b"x", {1, 2}]}, math.inf,
    ]


def echo(value):
    return value


def call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def fails(message):
    raise ParseError(message, 3)


def exits():
    raise SystemExit(3)


def stops():
    raise KeyboardInterrupt


def reach(obj, name):
    return getattr(obj, name)


def write(obj, name, value):
    setattr(obj, name, value)


def sort_in_place(xs):
    xs.sort()


def bad_json():
    import json
    json.loads("{")


now = lambda: 1  # noqa: E731


def report():
    return f"t={now()}"
"""


@pytest.fixture
def pair(tmp_path) -> Iterator[tuple[types.ModuleType, Judge]]:
    (tmp_path / "cand.py").write_text(CANDIDATE)
    sys.path.insert(0, str(tmp_path))
    to_worker_r, to_worker_w = os.pipe()
    to_tests_r, to_tests_w = os.pipe()
    worker = Worker([to_worker_r, to_tests_w], frozenset({"cand"}))
    thread = threading.Thread(target=serve, args=(worker,), daemon=True)
    thread.start()
    judge = Judge([to_tests_r, to_worker_w])
    stub = types.ModuleType("cand_stub")
    sys.modules["cand_stub"] = stub
    saved, stubs._client = stubs._client, judge
    try:
        stubs.stub("cand", stub.__dict__)
        yield stub, judge
    finally:
        stubs._client = saved
        os.close(to_worker_w)
        thread.join(5)
        os.close(to_tests_r)
        sys.path.remove(str(tmp_path))
        for name in ("cand_stub", "cand"):
            sys.modules.pop(name, None)
