"""The table of immutable values that crossed (wire/crossed.py, issue 48): a value that
comes back under its key with exactly its contents is the object that left, a key of
this end's own is never rebound by the other side, and the table is bounded. No
sandbox: the table alone, and a judge and a worker joined by pipes in this process."""

from __future__ import annotations

import pytest

from evalpin.core.instrument.graders.wire import crossed
from evalpin.core.instrument.graders.wire.crossed import Crossed
from evalpin.core.instrument.graders.wire.protocol import ProtocolError
from tests.wirekit import pair

__all__ = ["pair"]


def test_a_value_comes_home_only_with_its_exact_contents() -> None:
    judge, worker = Crossed(odd=False), Crossed(odd=True)
    row = ("id", ["a", "list"], 1.5)
    key = judge.key(row)
    assert key % 2 == 0 and judge.key(row) == key  # one key for one object
    there = worker.came(key, ("id", ["a", "list"], 1.5))
    assert worker.came(key, ("id", ["a", "list"], 1.5)) is there  # sent twice: one object
    assert worker.key(there) == key  # handed back under the judge's key
    assert judge.came(key, ("id", ["a", "list"], 1.5)) is row
    assert judge.came(key, ("id", ["a", "changed"], 1.5)) is not row  # other contents
    assert judge.came(key, ("id", ["a", "list"], True)) is not row  # 1.5 vs True: types
    assert judge.came(key, ("id", ["a", "list"], 1.5)) is row  # never rebound by the other
    minus = judge.key(-0.0), judge.key((-0.0,))
    assert judge.came(minus[1], (0.0,)) is not minus  # -0.0 is not 0.0


def test_the_other_sides_key_is_rebound_to_what_it_sends_now() -> None:
    judge = Crossed(odd=False)
    first = judge.came(7, ("a", [1]))
    second = judge.came(7, ("a", [2]))  # the worker's tuple's list changed meanwhile
    assert second is not first and judge.came(7, ("a", [2])) is second
    assert judge.key(second) == 7 and judge.key(first) != 7
    with pytest.raises(ProtocolError):
        judge.came("7", "x")


def test_the_table_is_bounded(monkeypatch) -> None:
    monkeypatch.setattr(crossed, "LIMIT", 3)
    judge = Crossed(odd=False)
    kept = [("n", i) for i in range(5)]
    keys = [judge.key(t) for t in kept]
    assert judge.came(keys[0], ("n", 0)) is not kept[0]  # the oldest went first
    assert judge.came(keys[4], ("n", 4)) is kept[4]
    big = "x" * (crossed.BIGGEST + 1)
    assert judge.key(big) is None and judge.key((["y"] * (crossed.BIGGEST + 1),)) is None


def test_strings_and_tuples_cross_back_as_themselves(pair) -> None:
    m, _ = pair
    text = "".join(["in", "side"])
    assert m.echo(text) is text and m.echo([{"k": [text]}])[0]["k"][0] is text
    assert m.echo((text, 2)) == (text, 2) and m.echo(b"\x00raw") == b"\x00raw"
    seen: list = []
    m.call(lambda v: seen.append(v is text), text)
    assert seen == [True]
    assert m.echo({text: 1}) == {"inside": 1}


def test_a_cycle_through_a_tuple_is_weighed_and_compared_once() -> None:
    worker = Crossed(odd=True)
    first: dict = {"id": "x"}
    first["y"] = ("y", first)
    again: dict = {"id": "x"}
    again["y"] = ("y", again)
    other: dict = {"id": "z"}
    other["y"] = ("y", other)
    kept = worker.came(8, first["y"])
    assert worker.came(8, again["y"]) is kept  # the same contents, cycle and all
    assert worker.came(8, other["y"]) is other["y"]  # other contents: the new one
    deep: tuple = ()
    for _ in range(500):
        deep = (deep, [1])
    assert worker.key(deep) is None  # past the wire's depth: not kept, never an error


def test_a_deep_value_is_told_apart_without_an_error() -> None:
    judge = Crossed(odd=False)
    deep: tuple = ("leaf",)
    for _ in range(150):
        deep = (deep,)
    copy: tuple = ("leaf",)
    for _ in range(150):
        copy = (copy,)
    assert judge.came(9, deep) is deep and judge.came(9, copy) is copy  # too deep: new
