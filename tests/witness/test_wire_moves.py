"""The wire reads the working folder only after a move (issue 49's speed clause: a
`getcwd` on each side of every call, two system calls a chatty call): every way a test or a
candidate moves it is still followed, both ways, through the real pipeline; and the
one-pass wire form of a call's plain arguments is the general one's, tags and kept
containers included."""

from __future__ import annotations

import math
import os

import pytest

from evalpin.core.instrument.graders.wire import process
from evalpin.core.instrument.graders.wire.shares import merge
from tests.harness import _d, anywhere, grade_files, verdict
from tests.wirekit import pair

__all__ = ["anywhere", "pair"]  # the fixtures

MOVER = _d(
    """
    import contextlib
    import os
    import posix
    from os import chdir as bound_chdir


    def where():
        return os.getcwd()


    def by_bound_name(folder):
        bound_chdir(folder)


    def by_descriptor(folder):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fchdir(fd)
        finally:
            os.close(fd)


    def by_posix(folder):
        posix.chdir(folder)


    def listing_inside(folder):
        with contextlib.chdir(folder):
            return sorted(os.listdir("."))
    """
)
MOVER_TESTS = _d(
    """
    import os
    from os import chdir

    import mover


    def test_a_name_bound_before_the_candidate_was_imported(tmp_path):
        start = os.getcwd()
        chdir(tmp_path)
        try:
            assert mover.where() == str(tmp_path)
        finally:
            chdir(start)
        assert mover.where() == start


    def test_a_descriptor_and_the_posix_module(tmp_path):
        start = os.getcwd()
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        fd = os.open(tmp_path / "a", os.O_RDONLY)
        try:
            os.fchdir(fd)
            assert mover.where() == str(tmp_path / "a")
        finally:
            os.close(fd)
            os.chdir(start)
        mover.by_descriptor(str(tmp_path / "b"))
        assert os.getcwd() == str(tmp_path / "b")
        mover.by_posix(str(tmp_path / "a"))
        assert os.getcwd() == str(tmp_path / "a")
        mover.by_bound_name(start)
        assert os.getcwd() == start


    def test_the_candidate_moves_for_a_while_and_comes_back(tmp_path):
        (tmp_path / "f.txt").write_text("x")
        start = os.getcwd()
        assert mover.listing_inside(str(tmp_path)) == ["f.txt"]
        assert os.getcwd() == start == mover.where()


    def test_the_folder_many_calls_later(tmp_path, monkeypatch):
        for _ in range(50):
            mover.where()
        monkeypatch.chdir(tmp_path)
        assert [mover.where() for _ in range(3)] == [str(tmp_path)] * 3
    """
)


def test_every_move_of_the_working_folder_is_followed(tmp_path, anywhere) -> None:
    outcome = grade_files(tmp_path, anywhere, {"mover.py": MOVER}, MOVER_TESTS)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail or outcome.tail)


def test_the_folder_is_read_only_after_a_move(tmp_path, monkeypatch) -> None:
    process.follow_moves()
    reads = []
    monkeypatch.setattr(process, "getcwd", lambda: reads.append(1) or os.getcwd())
    state = process.now()
    reads.clear()
    for _ in range(5):
        into: dict = {}
        state = process.changes(into, state)
        assert into == {}
    assert reads == []
    monkeypatch.chdir(tmp_path)  # (pytest's own, through os.chdir)
    into = {}
    state = process.changes(into, state)
    assert into == {"cwd": str(tmp_path)} and reads == [1]
    with pytest.raises(FileNotFoundError):
        os.chdir(tmp_path / "missing")  # counted, though it moved nothing
    into = {}
    state = process.changes(into, state)
    assert into == {} and reads == [1, 1]
    process.follow_moves()  # twice: still one count a move
    before = os.chdir
    process.follow_moves()
    assert os.chdir is before


def test_a_plain_arguments_wire_form_is_the_general_ones(pair) -> None:
    m, judge = pair
    text, key = "s", "k"
    assert judge.encode([[3, 2.5, text, None, True], {key: 1}, {7}]) == [
        [3, 2.5, judge.encode(text), None, True],  # a str with its key (crossed.py)
        {"t": "dict", "v": [[judge.encode(key), 1]]},
        {"t": "set", "v": [7]},
    ]
    assert judge.encode(text) == {"t": "s", "v": "s", "i": judge.encode(text)["i"]}
    tagged = judge.encode([[1.0, math.inf], [-math.inf], {"n": math.nan}, [1 << 14000]])
    assert tagged[0] == [1.0, {"t": "float", "v": "inf"}] and tagged[1][0]["v"] == "-inf"
    assert tagged[2]["v"][0][1] == {"t": "float", "v": "nan"}
    assert tagged[3][0]["t"] == "int"
    assert judge.encode({math.inf: [1]})["v"][0][0] == {"t": "float", "v": "inf"}
    big = [1 << 14000, -(1 << 14000)]
    assert m.echo([big, {"x": math.nan}])[0] == big
    row = [1, 2]
    again = judge.encode([row, row])  # met twice: marked by the general way, not plain
    assert again[1] == {"t": "same", "v": 1} and again[0][0] == {"t": "id", "v": 1}
    kept = [5, 6]
    key = judge.shares.start(kept)  # a container kept in step: by its key, never plain
    try:
        assert judge.encode([kept, 1])[0]["t"] == "sh"
        assert judge.encode({"k": kept})["v"][0][1]["t"] == "sh"
    finally:
        judge.shares.drop(key)
    assert judge.encode([kept]) == [[5, 6]]


def test_a_flat_state_refills_the_original_in_place() -> None:
    original, nested = [1, 2, 3], [9]
    holder = [nested, 1]
    merge(original, [4, 5])
    assert original == [4, 5]
    mapping = {"a": 1, "b": 2}
    merge(mapping, {"c": 3.5, "d": None})
    assert mapping == {"c": 3.5, "d": None}
    merge(holder, [[8], 2])  # a nested container: kept, refilled
    assert holder == [[8], 2] and holder[0] is nested
