"""Hold under attack (issue 40): no run is broken for good. A torn record of any size,
scratch left by killed graders, and a FIFO planted at the writer mark each leave a run
that `--resume` (or the next run) finishes, and an interrupted run claims only what it
wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalpin.core.read.runfile import read_run, trim_torn_tail
from tests.clirun import cli
from tests.runkit import held, project, slow_project, start, wait_for_cases

__all__ = ["project", "slow_project"]  # the fixtures (tests/runkit.py)

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


def test_a_fifo_at_the_writer_mark_never_hangs_a_second_writer(slow_project: Path) -> None:
    """A neighbour swaps the holder's mark for a FIFO: the second writer is still refused
    at once (the holder unnamed), and claims none of the first writer's cases."""
    first = start(slow_project)
    try:
        wait_for_cases(first, 2)
        with held(slow_project):  # the first still writing when the second starts
            mark = slow_project / "runs" / ".slow.jsonl.writer"
            mark.unlink()
            os.mkfifo(mark)
            second = subprocess.Popen(
                [sys.executable, "-m", "evalpin", "run", "--resume", "--out", "runs/slow.jsonl"],
                cwd=slow_project,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                _, err = second.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                second.terminate()  # the old behaviour: stuck opening the FIFO
                _, err = second.communicate(timeout=30)
                pytest.fail(f"the second writer hung on the FIFO; on SIGTERM it said: {err}")
            assert second.returncode == 1, err
            assert "being written by another process" in err
            assert "interrupted" not in err
    finally:
        first.kill()
        first.wait()
        first.stdout.close()
        first.stderr.close()


def test_an_interrupt_before_the_lock_claims_nothing(
    slow_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM lands while the run is still getting the file (here: in the writer's
    open): the file's cases are another writer's, and the run says it did none."""
    from evalpin.run import runner, session
    from evalpin.run.events import InterruptedEvent

    first = start(slow_project)
    wait_for_cases(first, 3)
    first.kill()
    first.wait()
    first.stdout.close()
    first.stderr.close()
    assert len(read_run(slow_project / "runs" / "slow.jsonl").rows) >= 3

    def signalled(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # what the SIGTERM handler raises

    monkeypatch.setattr(runner, "RunWriter", signalled)
    seen: list[object] = []
    request = session.RunRequest(out=Path("runs/slow.jsonl"), resume=True)
    assert session.start_run(request, {}, seen.append) == 130
    [interrupted] = [e for e in seen if isinstance(e, InterruptedEvent)]
    assert (interrupted.done, interrupted.total) == (0, 24)


def test_a_fifo_where_the_notes_are_never_hangs_the_review(tmp_path: Path) -> None:
    """The review reads its notes beside the runs: a FIFO planted there is reported as
    unreadable at once, never waited on."""
    import threading

    from evalpin.core.read.notes import read_notes

    notes = tmp_path / "notes.jsonl"
    os.mkfifo(notes)
    books: list[object] = []
    reader = threading.Thread(target=lambda: books.append(read_notes(notes)), daemon=True)
    reader.start()
    reader.join(timeout=60)  # a guard: blocked, it would wait forever
    if not books:
        with open(notes, "wb"):  # let the stuck reader go before failing
            pass
        pytest.fail("reading the notes blocked on a FIFO")
    assert "not a regular file" in (books[0].error or "")


CODING_SET = """\
schema: coding-eval/v1
dataset_id: slow
dataset_version: '1'
items:
  - id: sleepy
    language: python
    prompt_file: prompt.md
    test_file: test_sleepy.py
    timeout_s: 3
    expected_files: [solution.py]
"""


def test_scratch_of_a_killed_run_is_removed_by_its_resume(tmp_path: Path) -> None:
    """`kill -9` while a coding case runs leaves its scratch folder behind; the resume
    removes it (its grader is gone), and leaves a live one's alone."""
    import json
    import time

    (tmp_path / "coding.yaml").write_text(CODING_SET)
    (tmp_path / "prompt.md").write_text("Sleep.\n")
    (tmp_path / "test_sleepy.py").write_text("import solution\n\ndef test_it():\n    pass\n")
    answer = {
        "case_id": "sleepy",
        "text": "",
        "files": {"solution.py": "import time\ntime.sleep(60)\n"},
    }
    (tmp_path / "replay.jsonl").write_text(json.dumps(answer) + "\n")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "EVAL_WORKDIR": str(work)}
    command = [sys.executable, "-m", "evalpin", "run", "--fixtures", "coding.yaml"]
    command += ["--slot", "s=replay:replay.jsonl", "--seeds", "1", "--out", "runs/r.jsonl"]
    first = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list(work.iterdir()):
            assert first.poll() is None and time.monotonic() < deadline, "no case started"
            time.sleep(0.05)
    finally:
        first.kill()
        first.wait()
    left = list(work.iterdir())  # the killed grader's scratch (the witness's too, beside it)
    assert left
    resumed = subprocess.run(
        [*command[:3], "run", "--resume", "--out", "runs/r.jsonl"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert not any(p.exists() for p in left)
    assert list(work.iterdir()) == []
    assert read_run(tmp_path / "runs" / "r.jsonl").record(0).reasons == ["timeout"]


def test_a_link_planted_at_the_run_file_is_never_written_through(capsys, project: Path) -> None:
    """Someone swaps an unfinished run for a link to another file: `--resume` refuses,
    and the other file is neither trimmed nor appended to."""
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/r.jsonl")
    assert r.code == 0, r.err
    path = project / "runs" / "r.jsonl"
    kept = _tear(path, 3, 4096)
    victim = project / "victim.jsonl"
    victim.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(victim)
    r = cli(capsys, "run", "--resume", "--out", "runs/r.jsonl")
    assert r.code == 1
    assert "is a symlink: a run file is not written through one" in r.err
    assert victim.read_bytes().startswith(kept) and len(victim.read_bytes()) > len(kept)
    with pytest.raises(OSError, match=r"Too many levels|symbolic"):
        trim_torn_tail(path)
    assert len(victim.read_bytes()) > len(kept)  # still torn: nothing cut through the link
