"""The floor under any pytest-based grade of a benchmark: pytest alone, one session per
problem (the candidate file as evalpin writes it for the reference answer, the problem's
test file), each in a fork of a warm process (pytest and its plugins imported, its
configuration prepared up to where a case's paths matter, the collector's objects
frozen, as in evalpin's fork server), N at a time. No sandbox, no witness, no grader.
Each session is still `pytest.main` with evalpin's own arguments: only the config object
it starts from was made before the fork (`evalpin.run.sandbox.prepared`); with
`--unprepared` each session makes its own (the floor as it was before issue 52).

evalpin grades a passing case with two such sessions (plain pytest, then the witness's
pytest on stand-ins) and a failing one with one: `SESSIONS` per problem (2 for the
canonical solutions, which all pass) is the floor no sandbox work can go under, run N at
a time as evalpin's `--jobs N` runs cases. Run by `bench_humaneval.py floor` (after its
`setup`; `--benchmark mbpp` for MBPP's set), or alone, on any imported set:

    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -I -B benchmarks/pytest_floor.py N [SESSIONS [SET]]
        [--unprepared]
"""

import gc
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from evalpin.core.instrument.graders.coding import pytest_args
from evalpin.run.sandbox.prepared import PREPARED_PYTEST

HUMANEVAL = Path(__file__).resolve().parent / "data" / "humaneval" / "set" / "HumanEval.yaml"


def items(set_path: Path = HUMANEVAL) -> list[Path]:
    """One folder per problem of the set, laid out as evalpin's sandbox lays out a case:
    `work/` (the candidate file, as evalpin writes it for the reference, and the test
    file) beside `ctl/` (the ini and the report). pytest collects from the folder that
    holds both, so an ini shared by every problem would make each session list every
    problem's folder."""
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.instrument.graders.candidate import written_files

    root = set_path.parent.parent / "floor-boxes"
    if not root.exists():
        staging = root.with_name("floor-staging")
        shutil.rmtree(staging, ignore_errors=True)
        for n, item in enumerate(load_fixtures(set_path).cases):
            work, ctl = staging / f"{n:05d}" / "work", staging / f"{n:05d}" / "ctl"
            work.mkdir(parents=True)
            ctl.mkdir()
            shutil.copy(item.test_file, work / item.test_file.name)
            answer = {name: f.read_text() for name, f in item.reference_files.items()}
            for name, text in written_files(item, answer).items():
                (work / name).write_text(text)
            (ctl / "pytest.ini").write_text("[pytest]\n")
            (ctl / "test").write_text(item.test_file.name)
        staging.rename(root)
    return sorted(p for p in root.iterdir() if p.is_dir())


def args(folder: Path) -> list[str]:
    """evalpin's own pytest arguments for the problem in `folder`."""
    work, ctl = folder / "work", folder / "ctl"
    test = (ctl / "test").read_text()
    return pytest_args(str(ctl / "pytest.ini"), str(work), str(ctl / "report.xml"), test)


def session(folder: Path) -> int:
    """Fork; the child runs one pytest session with evalpin's own arguments."""
    pid = os.fork()
    if pid == 0:
        os.chdir(folder / "work")
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os._exit(pytest.main(args(folder)))
    return pid


def warm(prepared: bool = True) -> None:
    """What evalpin's fork server does before it forks a pytest session, by the same
    code (`prepared.py`): pytest's plugins imported and (`prepared`) its configuration
    and argument parser made, once."""
    space: dict = {}
    exec(PREPARED_PYTEST, space)
    space["load_pytest"]()
    if prepared:
        space["prepare_pytest"]()


def main() -> None:
    unprepared = "--unprepared" in sys.argv
    argv = [a for a in sys.argv if a != "--unprepared"]
    workers = int(argv[1]) if len(argv) > 1 else 2
    sessions = int(argv[2]) if len(argv) > 2 else 1
    set_path = Path(argv[3]).resolve() if len(argv) > 3 else HUMANEVAL
    warm(not unprepared)
    queue = [folder for folder in items(set_path) for _ in range(sessions)]
    gc.collect()
    gc.freeze()
    started = time.perf_counter()
    running: set[int] = set()
    failed = 0
    total = len(queue)
    while queue or running:
        while queue and len(running) < workers:
            running.add(session(queue.pop(0)))
        pid, status = os.wait()
        running.discard(pid)
        failed += os.waitstatus_to_exitcode(status) != 0
    elapsed = time.perf_counter() - started
    how = "unprepared" if unprepared else "prepared"
    print(f"pytest alone ({how}), {sessions} session(s) per problem, {workers} workers:",
          f"{elapsed:.2f} s,",
          f"{total - failed}/{total} sessions pass")  # fmt: skip
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
