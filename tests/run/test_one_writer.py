"""One writer per run file (issue 28, items 1-3): a second writer is refused at once,
naming the holder; a lock left by a killed run never blocks its resume; runs that pick
the same default name each get their own file; a write error names the file and says
that `--resume` continues. Real `evalpin run` processes."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

from evalpin.core.read.runfile import read_run
from tests.clirun import cli_process
from tests.runkit import held, project, slow_project, start, wait_for_cases

__all__ = ["project", "slow_project"]  # the fixtures (tests/runkit.py)


def test_a_second_writer_is_refused_and_a_killed_ones_lock_is_gone(slow_project: Path) -> None:
    first = start(slow_project)
    wait_for_cases(first, 3)
    first.kill()
    first.wait()  # its lock died with it
    resumed = start(slow_project, "--resume")
    try:
        wait_for_cases(resumed, 1)
        with held(slow_project):  # the resume still writing when the second starts
            second = cli_process(
                "run", "--resume", "--out", "runs/slow.jsonl", "--slots", "slots.yaml",
                cwd=slow_project,
            )  # fmt: skip
        assert second.code == 1
        line = second.err.strip().splitlines()[-1]
        assert "runs/slow.jsonl: being written by pid" in line and "since" in line
    finally:
        _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    done = read_run(slow_project / "runs" / "slow.jsonl")
    keys = [(r.case_id, r.seed) for r in done.rows]
    assert done.complete and len(keys) == 24 and len(set(keys)) == 24
    assert not (slow_project / "runs" / ".slow.jsonl.writer").exists()


def test_concurrent_runs_with_the_default_name_never_collide(project: Path) -> None:
    command = [sys.executable, "-m", "evalpin", "run", "--fixtures", "golden.jsonl"]
    command += ["--slot", "night", "--progress", "none"]
    procs = [
        subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0, 0, 0], [p.stderr.read() for p in procs if p.stderr]
    files = sorted((project / "runs").glob("*.jsonl"))
    assert len(files) == 4
    assert all(read_run(f).complete for f in files)


def _small_files() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (2500, 2500))


def test_a_write_error_names_the_file_and_how_to_go_on(slow_project: Path) -> None:
    import signal

    # A recording of every case, so the cases are judged (a run that judges none fails).
    answers = [{"case_id": f"case-{i:02d}", "text": "order 1001 is on its way"} for i in range(12)]
    recorded = slow_project / "many-answers.jsonl"
    recorded.write_text("".join(json.dumps(a) + "\n" for a in answers))
    command = [sys.executable, "-m", "evalpin", "run", "--fixtures", "many.jsonl"]
    command += ["--slot", f"recorded=replay:{recorded.name}", "--seeds", "1,2"]
    command += ["--out", "runs/big.jsonl"]

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, EFBIG
        _small_files()

    done = subprocess.run(
        command, cwd=slow_project, capture_output=True, text=True, preexec_fn=limited, timeout=120
    )
    assert done.returncode == 1
    line = done.stderr.strip().splitlines()[-1]
    assert "run failed: runs/big.jsonl: File too large" in line
    assert "evalpin run --resume --out runs/big.jsonl continues once the cause is gone" in line
    kept = read_run(slow_project / "runs" / "big.jsonl")
    assert kept.rows and not kept.complete
    again = cli_process("run", "--resume", "--out", "runs/big.jsonl", cwd=slow_project)
    assert again.code == 0, again.err
    assert read_run(slow_project / "runs" / "big.jsonl").complete
