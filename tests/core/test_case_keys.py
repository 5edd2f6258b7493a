"""Every key of a run's case line read once (issue 51): written a second time anywhere in
the line (its top level, a tool call, the model's own arguments), the line is refused by
`diff`, `verdict` and the review's loader alike: exit 3 (or the load's error), one line
naming the key and the line, never a traceback and never the last value read silently.

Both kinds of file are mutated: one no trailer vouches for (every line checked as it is
read) and one evalpin's writer finished, edited afterwards (its trailer's CRC no longer
holds, so every line is checked after all); and where the trailer's CRC holds, the
per-line check is skipped: that is what keeps a big diff fast (core/read/vouch.py).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from evalpin.core.errors import InputError
from evalpin.core.read import rundata
from evalpin.core.read.runfile import RunWriter, read_run
from evalpin.core.records import Summary
from tests.builders import vouched_whole
from tests.clirun import cli
from tests.fuzzkit import key_paths, written_twice

ROOT = Path(__file__).parents[2]
# A tool-using run (tool calls with the model's arguments) and a coding run (test
# output tails, completions holding code with escaped quotes and backslashes).
SOURCES = [ROOT / "runs" / "demo-night-1.jsonl", ROOT / "runs" / "demo-coding-publishable.jsonl"]


def _lines(source: Path) -> list[str]:
    return source.read_text().splitlines(keepends=True)


def _target(source: Path) -> int:
    """The index of the line mutated: the richest case line (most keys, all levels)."""
    lines = _lines(source)
    cases = [k for k, line in enumerate(lines) if line.startswith('{"record":"case"')]
    return max(cases, key=lambda k: (len(list(key_paths(json.loads(lines[k]), set()))), -k))


MUTATIONS = [
    (source, path)
    for source in SOURCES
    for path in key_paths(json.loads(_lines(source)[_target(source)]), set())
]


def _vouched_copy(source: Path, out: Path) -> Path:
    """`source` written again by evalpin's writer: its trailer carries the CRC."""
    lines = [json.loads(line) for line in _lines(source)]
    with RunWriter(out, new=True) as writer:
        for line in lines[:-1]:
            writer.write(line)
        trailer = {k: v for k, v in lines[-1].items() if k != "record"}
        writer.write(msgspec.convert(trailer, Summary))
    return out


def _mutated(source: Path, path: tuple, tmp_path: Path, *, vouched: bool) -> tuple[Path, int]:
    """A copy of `source` (vouched or not) whose target line writes `path` twice; the
    1-based number of that line."""
    run = tmp_path / ("vouched.jsonl" if vouched else "plain.jsonl")
    if vouched:
        _vouched_copy(source, run)
    else:
        run.write_text(source.read_text())
    lines = _lines(run)
    k = _target(source)
    lines[k] = written_twice(json.loads(lines[k]), path) + "\n"
    run.write_text("".join(lines))
    return run, k + 1


def _refused(r: Any, key: str, line: int) -> None:
    assert r.code == 3, (r.code, r.out, r.err)
    assert r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    assert f":{line}: duplicate key {key!r}" in r.err, r.err


def _load_error(left: Path, right: Path | None) -> str | None:
    """What the review's loader says it cannot open (None when it opened both)."""
    from evalpin.tui.loader import Loader
    from evalpin.tui.messages import LoadFailed

    said: list[str] = []

    def post(message: object) -> None:
        if isinstance(message, LoadFailed):
            said.append(message.error)

    class Worker:
        is_cancelled = False

    answered = threading.Event()
    answered.set()
    loader = Loader(post, 1, Worker(), answered, lambda apart: None)  # type: ignore[arg-type]
    loader.run(left, right, refused=False)
    return said[0] if said else None


@pytest.mark.parametrize("vouched", [False, True], ids=["no-trailer-vouch", "edited-after"])
@pytest.mark.parametrize(
    ("source", "path"), MUTATIONS, ids=[f"{s.stem}:{'.'.join(map(str, p))}" for s, p in MUTATIONS]
)
def test_every_key_of_a_case_line_written_twice_is_refused(
    capsys, tmp_path, source, path, vouched
) -> None:
    run, line = _mutated(source, path, tmp_path, vouched=vouched)
    key = path[-1]
    _refused(cli(capsys, "verdict", str(run)), key, line)
    _refused(cli(capsys, "diff", str(source), str(run)), key, line)
    _refused(cli(capsys, "diff", str(run), str(source), "--json"), key, line)
    said = _load_error(source, run)
    assert said is not None and f":{line}: duplicate key {key!r}" in said, said


def test_the_mutations_reach_every_level_of_a_case_line() -> None:
    paths = {p for _, p in MUTATIONS}
    assert {("pass",), ("seed",), ("tail",), ("reasons",), ("record",)} <= paths
    assert ("tools", 0, "args", "order_id") in paths  # the model's own arguments too


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_the_unmutated_files_read(capsys, tmp_path, source) -> None:
    """The mutations are what is refused: the files they start from read."""
    vouched = _vouched_copy(source, tmp_path / "v.jsonl")
    for run in (source, vouched):
        assert cli(capsys, "verdict", str(run)).code in (0, 1)
        assert _load_error(source, run) is None
    assert read_run(vouched).summary.crc32 is not None  # type: ignore[union-attr]


def _big(tmp_path: Path, n: int = 3000) -> tuple[Path, list[str]]:
    """A vouched run of `n` case lines (several of the reader's blocks)."""
    source = SOURCES[1]
    lines = [json.loads(line) for line in _lines(source)]
    model = lines[_target(source)]
    run = tmp_path / "big.jsonl"
    with RunWriter(run, new=True) as writer:
        writer.write(lines[0])
        for i in range(n):
            writer.write({**model, "case_id": f"c{i:05d}", "seed": 11})
        writer.write(Summary("2026-12-05T00:00:00Z", records=n, passed=n))
    return run, _lines(run)


def test_a_key_twice_is_refused_wherever_the_line_falls_in_the_file(tmp_path, monkeypatch) -> None:
    """Inside a block read in one call, across two of the reader's chunks (a line read
    alone), and the last before the trailer: each key, each place, refused by line."""
    monkeypatch.setattr(rundata, "_CHUNK", 64 << 10)
    run, lines = _big(tmp_path)
    sizes = [len(line) for line in lines]
    boundary = next(k for k in range(1, len(lines)) if sum(sizes[:k]) // (64 << 10) > 0)
    places = {"in a block": 1500, "across chunks": boundary - 1, "last": len(lines) - 2}
    for where, k in places.items():
        for path in key_paths(json.loads(lines[k]), set()):
            changed = [*lines]
            changed[k] = written_twice(json.loads(lines[k]), path) + "\n"
            run.write_text("".join(changed))
            with pytest.raises(InputError) as caught:
                read_run(run)
            said = str(caught.value)
            assert f":{k + 1}: duplicate key {path[-1]!r}" in said, (where, path, said)


def test_a_file_its_trailer_vouches_for_is_read_without_the_per_line_check(
    tmp_path, monkeypatch
) -> None:
    run, lines = _big(tmp_path)

    def never(block: bytes) -> None:
        raise AssertionError("a line checked although the trailer vouches for them")

    monkeypatch.setattr(rundata, "first_wrong", never)
    assert len(read_run(run).rows) == 3000
    # One byte changed after the run finished (a value, the same length): the CRC no
    # longer holds, so every line is checked; nothing is written twice, so it reads.
    changed = [*lines]
    changed[2] = changed[2].replace('"seed":11', '"seed":12', 1)
    run.write_text("".join(changed))
    with pytest.raises(AssertionError, match="although the trailer vouches"):
        read_run(run)
    monkeypatch.undo()
    assert read_run(run).rows[1].seed == 12


def test_a_run_without_a_trailer_has_every_line_checked(tmp_path) -> None:
    """A run killed (or still running) has no trailer to vouch: each block is checked."""
    run, lines = _big(tmp_path, 400)
    k = 200
    lines[k] = lines[k].rstrip("\n")[:-1] + ',"seed":12}\n'
    run.write_text("".join(lines[:-1]))  # the trailer gone
    with pytest.raises(InputError, match=rf":{k + 1}: duplicate key 'seed'"):
        read_run(run)


def test_the_writer_records_the_crc_of_what_precedes_the_trailer(capsys, tmp_path) -> None:
    run, _ = _big(tmp_path, 10)
    assert vouched_whole(run)
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "user": "say hi", "must_include": ["hi"]}) + "\n")
    replay = tmp_path / "replay.jsonl"
    replay.write_text(json.dumps({"case_id": "a", "text": "hi"}) + "\n")
    out = tmp_path / "runs" / "a.jsonl"
    slot = f"r=replay:{replay}"
    r = cli(capsys, "run", "--fixtures", str(golden), "--slot", slot, "--out", str(out))
    assert r.code == 0, r.err
    assert vouched_whole(out)


def test_lines_longer_than_the_readers_chunk_are_checked_too(tmp_path, monkeypatch) -> None:
    """Each line longer than a chunk: read across chunks, and checked again so when the
    trailer's CRC does not hold."""
    monkeypatch.setattr(rundata, "_CHUNK", 256)
    source = SOURCES[1]
    path = ("tail",)
    for vouched in (False, True):
        run, line = _mutated(source, path, tmp_path, vouched=vouched)
        assert min(map(len, _lines(run)[1:-1])) > 256
        with pytest.raises(InputError, match=rf":{line}: duplicate key 'tail'"):
            read_run(run)
