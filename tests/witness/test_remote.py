"""The wire between the pytest process and a process-isolated candidate, end to end over
real pipes: a `Worker` serving a candidate module in a thread, a `Judge` in the test.
What the judge holds is plain data, stdlib values rebuilt with its own classes, or
proxies whose classes it built from a description; what the worker holds of the tests
is a capability by kind. (The sandboxed corpus is tests/witness/test_true_grade.py.)"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import fractions
import io
import json
import math
import os
import pathlib
import sys
import uuid
from typing import NamedTuple
from unittest import mock

import pytest

from evalpin.core.instrument.graders.wire.judge import Judge
from evalpin.core.instrument.graders.wire.protocol import ProtocolError, RemoteGone, Unsupported
from tests.wirekit import pair

__all__ = ["pair"]  # the fixture


def test_stdlib_values_cross_by_value_as_the_judges_own_classes(pair) -> None:
    m, _ = pair
    got = m.values()
    expected = [
        collections.Counter("aab"), collections.OrderedDict(a=1),
        collections.defaultdict(list, {"k": [1]}), collections.deque([1, 2], maxlen=3),
        datetime.date(2020, 1, 2),
        datetime.datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC),
        datetime.time(1, 2), datetime.timedelta(hours=1), decimal.Decimal("3.30"),
        fractions.Fraction(1, 3), uuid.UUID(int=7), pathlib.PurePosixPath("a/b"),
        pathlib.Path("/x/y"), 2 + 3j, range(1, 9, 2), slice(1, None), bytearray(b"ab"),
        {"a": 1}.keys(), frozenset({1}), {"a": (1, 2.5, None), 3: [b"x", {1, 2}]}, math.inf,
    ]  # fmt: skip
    assert [type(v) for v in got] == [type(v) for v in expected]
    assert got == expected
    assert got[0] == {"a": 2, "b": 1} and got[2]["new"] == []  # defaultdict still defaults
    assert str(got[8]) == "3.30"  # the Decimal keeps its exponent
    assert m.echo(float("nan")) != m.echo(float("nan"))


def test_candidate_objects_behave_as_in_process(pair) -> None:
    m, _ = pair
    a, b = m.Money(150), m.Money.parse("1.50")
    assert a == b and a is not b and hash(a) == hash(b) and len({a, b}) == 1
    assert isinstance(a, m.Money) and type(a).__name__ == "Money" and type(a) is type(b)
    assert a + m.Money(50) == m.Money(200) and a * 2 == 2 * a == m.Money(300)
    assert sorted([m.Money(3), m.Money(1)]) == [m.Money(1), m.Money(3)]
    assert max([m.Money(3), m.Money(1)]) == m.Money(3)
    assert repr(a) == "Money(cents=150)" and f"{a:.2f}" == "1.50"
    assert dataclasses.asdict(a) == {"cents": 150}
    assert dataclasses.replace(a, cents=1) == m.Money(1)
    assert [f.name for f in dataclasses.fields(a)] == ["cents"]
    box = m.Box()
    with box as inside:
        assert inside is box
    assert len(box) == 2 and list(box) == ["entered", "left"] and "left" in box


def test_value_backed_classes_keep_their_value_and_their_methods(pair) -> None:
    m, _ = pair
    p = m.Point(1, 2)
    assert p == (1, 2) and isinstance(p, tuple) and p.x == 1 and p.norm() == 3
    assert isinstance(p, m.Point) and p._replace(x=5) == (5, 2)
    assert m.Color.RED == 1 and m.Color(2) is m.Color.GREEN and m.Color.RED.label() == "red"
    assert m.echo(m.Color.GREEN) is m.Color.GREEN  # goes back as the worker's member


def test_who_decides_a_comparison(pair) -> None:
    m, _ = pair
    always = m.Equal()
    assert always != "total: 3" and always != 1
    assert always == m.Equal()  # two of its own objects: its own answer, as in-process
    assert always == always  # itself: identity
    text = m.Text("abc")
    assert text == "abc" and text != "xyz" and isinstance(text, str)
    assert text.splitlines() != ["abc"]  # its own method's answer is still proxies
    assert text.shout() == "ABC!"
    assert m.Loose() != {"a": 1} and m.Loose() == {}  # a fresh copy, compared by dict
    with pytest.raises(TypeError):
        assert m.Money(1) < 5


def test_exceptions_keep_their_class_hierarchy_and_attributes(pair) -> None:
    m, _ = pair
    with pytest.raises(m.AppError) as caught:
        m.fails("bad at line 3")
    assert isinstance(caught.value, ValueError) and caught.value.line == 3
    assert str(caught.value) == "bad at line 3" and type(caught.value).__name__ == "ParseError"
    with pytest.raises(json.JSONDecodeError) as decoding:  # the judge's own stdlib class
        m.bad_json()
    assert decoding.value.pos == 1
    with pytest.raises(SystemExit) as exiting:
        m.exits()
    assert exiting.value.code == 3
    with pytest.raises(RuntimeError):  # never a KeyboardInterrupt in the judge
        m.stops()
    with pytest.raises(AttributeError):
        m.no_such_name  # noqa: B018


def test_the_tests_objects_are_capabilities_by_kind(pair) -> None:
    m, _ = pair
    seen: list[int] = []
    assert m.call(seen.append, 5) is None and seen == [5]
    assert m.call(lambda *a, **k: (a, k), 1, x=2) == ((1,), {"x": 2})
    items = [3, 1, 2]
    m.sort_in_place(items)
    assert items == [1, 2, 3]
    generator = (x * x for x in range(4))
    assert m.call(list, generator) == [0, 1, 4, 9]
    with pytest.raises(AttributeError, match="used, not read"):
        m.reach(generator, "gi_frame")
    fn = lambda: None  # noqa: E731
    # The worker holds a function of its own standing for the test's (so that
    # `inspect.isfunction` holds there): its insides are the worker's, never the test's.
    assert m.reach(fn, "__globals__") is not globals()
    assert "pair" not in m.reach(fn, "__globals__")
    assert m.reach(fn, "__code__").co_filename != __file__
    assert m.reach(fn, "__name__") == "<lambda>"
    buffer = io.StringIO("text")
    assert m.call(m.reach(buffer, "read")) == "text"
    with pytest.raises(AttributeError):
        m.reach(buffer, "buffer")
    with pytest.raises(Unsupported):
        m.echo(sys._getframe())  # a frame is no kind of capability


def test_a_test_double_is_used_not_reconfigured(pair) -> None:
    m, _ = pair
    client = mock.MagicMock()
    client.get.return_value = {"ok": True}
    assert m.call(m.reach(client, "get"), 1) == {"ok": True}
    client.get.assert_called_once_with(1)
    for name in ("configure_mock", "reset_mock", "assert_called_with", "return_value"):
        with pytest.raises(AttributeError, match="own API"):
            m.reach(client, name)
    with pytest.raises(PermissionError):
        m.write(client, "get", lambda *a: None)  # a child double is not replaced
    m.write(client, "timeout", 5)
    assert client.timeout == 5


class Recorder:
    def __init__(self) -> None:
        self._state = "the test's own"

    def name(self) -> str:
        return "recorder"


def test_an_object_of_the_tests_class_gets_new_attributes(pair) -> None:
    m, _ = pair
    rec = Recorder()
    m.write(rec, "seen", True)
    assert rec.seen is True
    assert m.call(m.reach(rec, "name")) == "recorder"
    with pytest.raises(PermissionError):  # the test's own private state
        m.write(rec, "_state", 1)
    with pytest.raises(PermissionError):  # a special name
        m.write(rec, "__class__", int)
    m.write(rec, "_cache", 1)  # a private name the candidate stores itself is its own
    assert rec._cache == 1 and rec._state == "the test's own"


def test_monkeypatching_the_candidates_module_holds_in_the_worker(pair, monkeypatch) -> None:
    m, _ = pair
    assert m.report() == "t=1"
    monkeypatch.setattr(m, "now", lambda: 5)
    assert m.report() == "t=5"
    monkeypatch.undo()
    assert m.report() == "t=1"


def test_a_sized_iterable_drained_comes_in_batches(pair, monkeypatch) -> None:
    """`sorted(x)`, `list(x)` of a candidate object with `__len__` and `__iter__` pull its
    iterator in batches (CPython asks `len()` for the hint); a `for` loop does not."""
    stub, judge = pair
    shelves = stub.Shelves(3000)
    sent: list[str] = []
    real = judge.request

    def counted(op, *args, **kwargs):
        sent.append(op)
        return real(op, *args, **kwargs)

    monkeypatch.setattr(judge, "request", counted)
    assert sorted(shelves) == list(range(3000))
    assert list(shelves) == list(range(3000)) and len(shelves) == 3000
    assert len(sent) < 40, collections.Counter(sent)
    sent.clear()
    for x in shelves:
        if x == 4:
            break
    assert sent.count("special") == 1 + 5 and "pull" not in sent  # __iter__, 5 x __next__


@pytest.mark.parametrize(
    "wire",
    [
        {"t": "pickle", "v": "gASV"},
        {"t": "h", "v": 1, "k": "function"},
        {"t": "b", "v": 999},
        {"t": "r", "v": 999},
        {"t": "dict", "v": [[1]]},
        {"t": "bytes", "v": "not base64!"},
        {"t": "type", "v": "__import__"},
        {"t": "float", "v": "1e999999"},
        {"t": "val", "n": "Decimal", "v": 3},
        {"t": "val", "n": "date", "v": [2020, 13, 1]},
        {"t": "k", "v": 5, "n": "X", "b": [{"t": "r", "v": 5}]},
        {"t": "o", "v": 6, "c": {"t": "type", "v": "int"}},
        {"t": "em", "v": "RED", "c": {"t": "type", "v": "int"}},
        {"t": "sx", "v": "os", "q": "system", "a": []},
        {"t": "str", "v": "abc"},
        {"t": "sfn", "v": "os", "n": "system"},  # a stdlib function that has effects
        {"t": "sfn", "v": "builtins", "n": "eval"},
        {"t": "sfn", "v": "sys", "n": "modules.get"},
        {"t": "mod", "v": "../evil"},
        {"t": "sh", "v": -1, "k": "list", "x": []},  # a container of the judge's it never made
        {"t": "sh", "v": 3},  # one it was never shown
        {"t": "arg", "v": 0},  # no call's arguments in hand
        {"t": "val", "n": "UnionType", "v": [None, [1, 2]]},
        {"t": "val", "n": "array", "v": ["Z", ""]},
        # numpy's values: a plain dtype and bytes that fill it, nothing else
        {"t": "val", "n": "numpy.int64", "v": ["|O8", "AAAAAAAAAAA="]},
        {"t": "val", "n": "numpy.int64", "v": ["<i8", "AAAA"]},
        {"t": "val", "n": "numpy.ndarray", "v": ["<i8", [2], "AAAAAAAAAAA=", True]},
        {"t": "val", "n": "numpy.ndarray", "v": ["<i8", [-1], "", True]},
        {"t": "val", "n": "numpy.ndarray", "v": ["[('a', 'O')]", [0], "", True]},
    ],
)
def test_anything_but_the_tagged_shapes_is_refused(wire: dict) -> None:
    r, w = os.pipe()
    judge = Judge([r, w])
    with pytest.raises(ProtocolError):
        judge.decode(wire)
    os.close(w)
    os.close(r)


def test_a_forged_reply_is_a_protocol_error_and_a_dead_peer_is_seen() -> None:
    to_tests_r, to_tests_w = os.pipe()
    to_worker_r, to_worker_w = os.pipe()
    judge = Judge([to_tests_r, to_worker_w])
    os.write(to_tests_w, json.dumps({"ok": 1, "err": "both"}).encode() + b"\n")
    with pytest.raises(ProtocolError):
        judge.request("import", name="cand")
    os.write(to_tests_w, b"not json\n")
    with pytest.raises(ProtocolError):
        judge.request("import", name="cand")
    os.close(to_tests_w)
    with pytest.raises(RemoteGone):
        judge.request("import", name="cand")
    for fd in (to_worker_r, to_tests_r):
        os.close(fd)


def test_only_the_items_modules_may_be_imported(pair) -> None:
    _, judge = pair
    with pytest.raises(ImportError):
        judge.request("import", name="os")


def test_named_tuples_and_enums_of_the_tests_cross_by_value(pair) -> None:
    m, _ = pair

    class Pair(NamedTuple):
        a: int
        b: int

    class Level(enum.IntEnum):
        LOW = 1

    assert m.echo(Pair(1, 2)) == (1, 2)
    assert m.echo(Level.LOW) == 1
