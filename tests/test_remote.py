"""The wire between the pytest process and a process-isolated candidate: what arrives is
plain data or a handle, never an object the other side designed. Two real peers over
real pipes, the serving one in a thread."""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import types
from collections.abc import Iterator

import pytest

from evalpin.core.graders.remote import Handle, Peer, ProtocolError, RemoteGone


class Equal:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class Text(str):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__

    def splitlines(self, *args: object) -> list:
        return [Equal(), Equal()]


class Number(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class Custom(ValueError):
    pass


def _module() -> types.ModuleType:
    module = types.ModuleType("candidate")
    module.text = lambda: Text("abc")
    module.number = lambda: Number(7)
    module.equal = lambda: Equal()
    module.data = lambda: {"a": (1, 2.5, None), 3: [b"x", {1, 2}, frozenset({3})], "n": math.inf}
    module.echo = lambda value: value
    module.call = lambda fn, *args: fn(*args)
    module.raises = lambda: (_ for _ in ()).throw(Custom("bad value"))
    module.key_error = lambda: {}["missing"]
    module.exits = lambda: sys.exit(3)
    module.gen = lambda n: (i * i for i in range(n))
    module.sort_in_place = lambda xs: xs.sort()
    module.builtin_type = lambda: KeyError
    module.custom_class = lambda: Custom
    module.is_custom = lambda cls: cls is Custom
    return module


@pytest.fixture
def candidate() -> Iterator[Handle]:
    sys.modules["candidate"] = _module()
    to_worker_r, to_worker_w = os.pipe()
    to_tests_r, to_tests_w = os.pipe()
    worker = Peer(to_worker_r, to_tests_w, frozenset({"candidate"}))
    thread = threading.Thread(target=worker.serve_forever, daemon=True)
    thread.start()
    tests = Peer(to_tests_r, to_worker_w)
    info = tests.request("import", module="candidate")
    yield Handle(tests, info["id"], "object")
    os.close(to_worker_w)
    thread.join()
    del sys.modules["candidate"]


def test_a_str_subclass_arrives_as_a_plain_str(candidate: Handle) -> None:
    value = candidate.text()
    assert type(value) is str and value == "abc"
    assert value != "xyz"
    assert value.splitlines() == ["abc"]
    number = candidate.number()
    assert type(number) is int and number == 7 and number != 8


def test_an_always_equal_object_is_a_handle_that_compares_by_identity(candidate: Handle) -> None:
    value = candidate.equal()
    assert isinstance(value, Handle)
    assert value != "anything" and value != 1 and value != candidate.equal()
    assert value == value


def test_plain_data_round_trips_with_exact_types(candidate: Handle) -> None:
    data = candidate.data()
    assert data == {"a": (1, 2.5, None), 3: [b"x", {1, 2}, frozenset({3})], "n": math.inf}
    assert type(data["a"]) is tuple and type(data[3][2]) is frozenset
    assert candidate.echo(float("nan")) != candidate.echo(float("nan"))  # nan stays nan
    assert candidate.builtin_type() is KeyError


def test_exceptions_arrive_as_their_nearest_builtin_type(candidate: Handle) -> None:
    with pytest.raises(ValueError, match="bad value"):
        candidate.raises()
    with pytest.raises(KeyError) as caught:
        candidate.key_error()
    assert caught.value.args == ("missing",)
    with pytest.raises(RuntimeError):  # SystemExit is not an Exception: never exits pytest
        candidate.exits()
    with pytest.raises(AttributeError):
        candidate.no_such_name  # noqa: B018


def test_callbacks_iterators_and_in_place_changes(candidate: Handle) -> None:
    seen: list[int] = []
    assert candidate.call(seen.append, 5) is None and seen == [5]
    with pytest.raises(ConnectionError, match="down"):
        candidate.call(lambda: (_ for _ in ()).throw(ConnectionError("down")))
    assert list(candidate.gen(4)) == [0, 1, 4, 9]
    items = [3, 1, 2]
    candidate.sort_in_place(items)
    assert items == [1, 2, 3]


def test_only_the_items_modules_may_be_imported(candidate: Handle) -> None:
    with pytest.raises(ImportError):
        candidate._peer.request("import", module="os")


@pytest.mark.parametrize(
    "wire",
    [
        {"t": "pickle", "v": "gASV"},
        {"t": "handle", "v": 1, "k": "function"},
        {"t": "back", "v": 999},
        {"t": "dict", "v": [[1]]},
        {"t": "bytes", "v": "not base64!"},
        {"t": "type", "v": "__import__"},
        {"t": "float", "v": "1e999999"},
        {"t": "tuple", "v": [], "x": 1},
        {"t": "str", "v": "abc"},
    ],
)
def test_anything_but_the_tagged_shapes_is_refused(wire: dict) -> None:
    r, w = os.pipe()
    peer = Peer(r, w)
    with pytest.raises((ProtocolError, ValueError)):
        peer.decode(wire)
    os.close(w)


def test_a_forged_reply_is_a_protocol_error_and_a_dead_peer_is_seen() -> None:
    to_tests_r, to_tests_w = os.pipe()
    to_worker_r, to_worker_w = os.pipe()
    tests = Peer(to_tests_r, to_worker_w)
    os.write(to_tests_w, json.dumps({"ok": 1, "extra": "code"}).encode() + b"\n")
    with pytest.raises(ProtocolError):
        tests.request("import", module="candidate")
    os.write(to_tests_w, b"not json\n")
    with pytest.raises(ProtocolError):
        tests.request("import", module="candidate")
    os.close(to_tests_w)
    with pytest.raises(RemoteGone):
        tests.request("import", module="candidate")
    os.close(to_worker_r)


def test_the_candidates_exception_classes_have_local_stand_ins(candidate: Handle) -> None:
    stand_in = candidate.custom_class()
    assert isinstance(stand_in, type) and issubclass(stand_in, ValueError)
    assert stand_in.__name__ == "Custom"
    with pytest.raises(stand_in, match="bad value"):
        candidate.raises()
    assert candidate.is_custom(stand_in) is True  # goes back as the worker's own class
    with pytest.raises(stand_in):
        candidate.call(lambda: (_ for _ in ()).throw(stand_in("from the test")))
