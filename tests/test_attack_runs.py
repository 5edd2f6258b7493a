"""Hold under attack (issue 40): no run is broken for good. A torn record of any size,
scratch left by killed graders, and a FIFO planted at the writer mark each leave a run
that `--resume` (or the next run) finishes, and an interrupted run claims only what it
wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalpin.core.read.runfile import read_run, trim_torn_tail
from tests.clirun import cli
from tests.test_runner import project

__all__ = ["project"]  # the fixture, shared with test_runner

MiB = 1024**2


def _tear(path: Path, keep_lines: int, torn_bytes: int) -> bytes:
    """Keep the first lines of a finished run, then append a record torn after
    `torn_bytes` bytes, as a kill during one large `os.write` leaves it. The middle of
    the torn record is a hole (sparse), so a large one costs no disk."""
    kept = b"".join(path.read_bytes().splitlines(keepends=True)[:keep_lines])
    path.write_bytes(kept)
    with open(path, "r+b") as fh:
        fh.seek(0, 2)
        fh.write(b'{"record":"case","case_id":"order-2","seed":29,"files":{"data.csv":"')
        fh.truncate(len(kept) + torn_bytes - 1000)
        fh.seek(0, 2)
        fh.write(b"a,b\\n" * 200)  # 1000 bytes, escaped newlines only: no real one yet
    return kept


@pytest.mark.parametrize("torn_mib", [2, 100])
def test_resume_finds_the_last_whole_line_however_far_back(
    capsys, project: Path, torn_mib: int
) -> None:
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/r.jsonl")
    assert r.code == 0, r.err
    path = project / "runs" / "r.jsonl"
    kept = _tear(path, 3, torn_mib * MiB)
    assert read_run(path).torn
    r = cli(capsys, "run", "--resume", "--out", "runs/r.jsonl", "--progress", "json")
    assert r.code == 0, r.err
    assert f"trimmed a torn last line ({torn_mib * MiB} bytes)" in r.out
    assert path.read_bytes().startswith(kept)
    done = read_run(path)
    assert done.complete and not done.torn
    assert len({(row.case_id, row.seed) for row in done.rows}) == len(done.rows) == 6
    assert cli(capsys, "verdict", "runs/r.jsonl").code in (0, 1)  # readable: not exit 3


def test_trimming_walks_back_past_many_chunks_and_never_past_a_newline(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a":1}\n' + b"x" * (5 * MiB + 7))
    assert trim_torn_tail(path) == 5 * MiB + 7
    assert path.read_bytes() == b'{"a":1}\n'
    assert trim_torn_tail(path) == 0
    path.write_bytes(b"y" * (3 * MiB))  # not one whole line: nothing is kept
    assert trim_torn_tail(path) == 3 * MiB
    assert path.read_bytes() == b""
