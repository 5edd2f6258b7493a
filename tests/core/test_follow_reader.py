"""Reading on where the last read stopped (`RunStream.follow`), and the writer's mark
read without ever blocking (`core/read/writer_mark.py`)."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

from evalpin.core.read.formats import GONE, GREW, SAME, RunStream
from evalpin.core.read.runfile import RunWriter, trim_torn_tail
from evalpin.core.read.writer_mark import mark_path, read_mark
from evalpin.core.records import Summary
from tests.builders import grid, header


def opened(path: Path) -> RunStream:
    stream = RunStream(path)
    while stream.step():
        pass
    return stream


def test_follow_reads_only_whole_new_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RunWriter(path, new=True) as w:
        w.write(header())
        for rec in grid({"a": [True] * 3}):
            w.write(rec)
        stream = opened(path)
        assert stream.followable and len(stream.rows) == 3
        assert stream.follow() == SAME
        line = json.dumps({**json.loads(path.read_text().splitlines()[1]), "case_id": "b"})
        with open(path, "ab") as fh:  # half a record: a write on its way
            fh.write(line[:20].encode())
        assert stream.follow() == SAME and len(stream.rows) == 3
        with open(path, "ab") as fh:
            fh.write(line[20:].encode() + b"\n")
        assert stream.follow() == GREW
        assert [r.case_id for r in stream.rows] == ["a", "a", "a", "b"]
        assert stream.run is not None and stream.run.complete is False
        # The record read on is decoded from its own offset, not a neighbour's.
        assert stream.run.record(3).case_id == "b"
        w.write(Summary("2026-11-29T03:00:00Z", records=4, passed=4))
    assert stream.follow() == GREW
    assert stream.run.complete is True and not stream.followable


def test_a_torn_tail_read_first_is_read_again_once_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RunWriter(path, new=True) as w:
        w.write(header())
        for rec in grid({"a": [True] * 3}):
            w.write(rec)
    whole = path.read_bytes()
    last = whole.rstrip(b"\n").rsplit(b"\n", 1)[1]
    path.write_bytes(whole[: -len(last) - 1] + last[:15])  # the last line torn
    stream = opened(path)
    assert stream.run is not None and stream.run.torn and len(stream.rows) == 2
    with open(path, "ab") as fh:
        fh.write(last[15:] + b"\n")
    assert stream.follow() == GREW
    assert len(stream.rows) == 3 and not stream.run.torn


def test_a_rewritten_or_trimmed_file_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RunWriter(path, new=True) as w:
        w.write(header())
        for rec in grid({"a": [True] * 3}):
            w.write(rec)
        stream = opened(path)
        w.rewrite(path.read_bytes())  # what --resume does: a new file in its place
        assert stream.follow() == GONE
    stream = opened(path)
    with open(path, "ab") as fh:
        fh.write(b'{"record": "case", "ca')
    trim_torn_tail(path)
    assert stream.follow() == SAME
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size - 10)  # cut into what was read
    assert stream.follow() == GONE


def test_the_mark_names_a_live_writer(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RunWriter(path, new=True):
        writer = read_mark(path)
        assert writer is not None and writer.pid == os.getpid() and writer.alive()
        assert writer.said().startswith(f"being written by pid {os.getpid()} since ")
    assert read_mark(path) is None  # the writer closed: its mark is gone


def test_a_mark_of_another_host_or_garbage_is_no_live_writer(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    mark = mark_path(path)
    mark.write_text(json.dumps({"pid": os.getpid(), "host": "elsewhere", "since": "t"}))
    writer = read_mark(path)
    assert writer is not None and not writer.alive()
    for junk in ("[1]", "{}", '{"pid": "12"}', '{"pid": true}', "\xff\xfe", ""):
        mark.write_text(junk)
        assert read_mark(path) is None
    mark.unlink()
    mark.symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text(
        json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": "t"})
    )
    assert read_mark(path) is None  # a link is not followed


def test_a_fifo_in_place_of_the_mark_never_hangs(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    os.mkfifo(mark_path(path))
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(read_mark(path)), daemon=True)
    reader.start()
    reader.join(timeout=30)  # a hang would never end: the join gives up, the test fails
    assert not reader.is_alive() and found == [None]
