"""Limits that hold or refuse, neighbours that cannot fail a case, reports that stay
bounded, and the witness run alone (issues 49 and 50), through the real pipeline."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalpin.core.bounded import MAX_LINE_BYTES
from evalpin.core.instrument.graders.junit import MAX_FAILED_TESTS, MAX_TEST_NAME_CHARS
from evalpin.core.read.runfile import RecordTooLarge, RunWriter, read_run
from evalpin.run.sandbox import probe_isolation
from evalpin.run.sandbox.limits import enforcement
from tests.capabilities import lacking, need
from tests.clirun import cli
from tests.harness import grade_set, make_set


def replayed(folder: Path, solution: str) -> None:
    answer = {"case_id": "case", "files": {"solution.py": solution}, "text": ""}
    (folder / "replay.jsonl").write_text(json.dumps(answer) + "\n")


# -- a forged report stays a case of its own, and the run file reads -------------------

# Plain pytest shares the candidate's process: at exit it rewrites the JUnit report with
# one failing test whose name is 24 MiB of backslashes (each one two bytes in JSON).
REPORT_FORGER = textwrap.dedent(
    """
    import atexit, sys

    def add(a, b):
        return a + b

    def _forge():
        if "--junitxml" not in sys.argv:
            return  # the witness's worker: nothing to forge there
        path = sys.argv[sys.argv.index("--junitxml") + 1]
        name = "\\\\" * (24 << 20)
        with open(path, "w") as report:
            report.write('<testsuites><testsuite name="p" tests="1" failures="1">'
                         f'<testcase classname="test_solution" name="{name}">'
                         '<failure message="m"/></testcase></testsuite></testsuites>')

    atexit.register(_forge)
    """
)
TEST_ADD = "from solution import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_forged_enormous_report_is_a_bounded_fail_and_the_file_reads(
    capsys, open_tmp: Path, monkeypatch, jobs: str
) -> None:
    monkeypatch.chdir(open_tmp)
    make_set(open_tmp, TEST_ADD)
    replayed(open_tmp, REPORT_FORGER)
    out = open_tmp / "run.jsonl"
    args = ("run", "--fixtures", "set.yaml", "--slot", "x=replay:replay.jsonl", "--seeds", "1,2")
    r = cli(capsys, *args, "--jobs", jobs, "--out", str(out))
    assert r.code == 0, r.err
    assert out.stat().st_size < 1 << 20  # nothing of the 24 MiB name but its first chars
    run = read_run(out)  # reads back whole
    assert len(run.rows) == 2 and not any(row.passed for row in run.rows)
    for record in run.records(list(range(2))).values():
        assert record.reasons == ["tests_failed"]
        assert record.failed_tests and record.failed_tests[0].endswith("...")
        assert all(len(name) <= MAX_TEST_NAME_CHARS for name in record.failed_tests)


def test_failed_test_names_are_cut_and_counted() -> None:
    from evalpin.core.instrument.graders.junit import failed_tests

    cases = "".join(
        f'<testcase classname="test_m" name="test_{i}{"x" * 500}"><failure/></testcase>'
        for i in range(MAX_FAILED_TESTS + 40)
    )
    names = failed_tests(f"<testsuite>{cases}</testsuite>".encode(), [])
    assert len(names) == MAX_FAILED_TESTS + 1 and names[-1] == "[40 more not named]"
    assert all(len(n) == MAX_TEST_NAME_CHARS for n in names[:-1])


def test_the_writer_never_writes_a_line_the_reader_refuses(tmp_path: Path) -> None:
    from evalpin.core.records import CaseRecord
    from evalpin.run.runner import _oversized

    path = tmp_path / "run.jsonl"
    with RunWriter(path, new=True) as writer:
        writer.write({"record": "case", "case_id": "small"})
        huge = CaseRecord(case_id="big", seed=1, passed=True, text="\u00e9" * (MAX_LINE_BYTES // 5))
        with pytest.raises(RecordTooLarge):
            writer.write(huge)  # 6 bytes a character once escaped
        kept = _oversized(huge, MAX_LINE_BYTES + 1)
        writer.write(kept)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2 and max(map(len, lines)) < 1 << 12
    record = json.loads(lines[1])
    assert record["status"] == "error" and record["reasons"] == ["provider_error:oversized"]
    assert record["pass"] is False and "text" not in record


# -- every limit enforced, or the run refuses --------------------------------------------


def test_a_root_grader_enforces_every_limit_and_says_how() -> None:
    if os.geteuid() != 0:
        need("root", "the grader is not root here")
    iso = probe_isolation()
    if not iso.pids_cgroup:
        need("cgroup", f"no cgroup here: {iso.why}")
    limits = enforcement(iso)
    assert set(limits) == {"memory", "processes", "timeout", "disk"}
    assert not [how for how in limits.values() if how.startswith("not enforced")], limits
    assert limits["memory"].startswith("cgroup v")


def test_an_unprivileged_grader_without_a_cgroup_refuses_or_records(
    open_tmp: Path, unprivileged
) -> None:
    make_set(open_tmp, TEST_ADD, memory_mb=128)
    replayed(open_tmp, "def add(a, b):\n    return a + b\n")
    os.chown(open_tmp, unprivileged.uid, unprivileged.uid)
    base = [
        "-I",
        "-m",
        "evalpin",
        "run",
        "--fixtures",
        "set.yaml",
        "--slot",
        "x=replay:replay.jsonl",
    ]
    base += ["--seeds", "1"]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        command = unprivileged.argv(*base, *extra)
        command[-1] = f"cd {open_tmp} && " + command[-1]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd="/")

    refused = run("--out", "refused.jsonl")
    probe = json.loads(
        subprocess.run(
            unprivileged.argv("-I", "-c", _PROBE), capture_output=True, text=True, cwd="/"
        ).stdout
    )
    if probe["memory"] is not None and not probe["memory"].startswith("not enforced"):
        lacking(
            "a host without delegated cgroups",
            "this host gives an unprivileged user a memory cgroup: nothing to refuse",
        )
    assert refused.returncode == 1, refused.stderr
    assert "refused" in refused.stderr and "memory" in refused.stderr
    assert not (open_tmp / "refused.jsonl").exists()  # nothing written half-way

    accepted = run("--out", "accepted.jsonl", "--allow-unenforced-limits")
    assert accepted.returncode == 0, accepted.stderr
    assert "NOT enforced" in accepted.stderr
    run_file = read_run(open_tmp / "accepted.jsonl")
    limits = run_file.header.controls["limits"]
    assert limits["memory"].startswith("not enforced")
    assert run_file.header.controls["witness"] == "beside"
    verdict = subprocess.run(
        [sys.executable, "-m", "evalpin", "verdict", str(open_tmp / "accepted.jsonl"), "--json"],
        capture_output=True,
        text=True,
    )
    checks = {c["rule"]: c for c in json.loads(verdict.stdout)["checklist"]}
    assert checks["limits enforced"]["ok"] is False
    assert "memory" in checks["limits enforced"]["why"]
    assert checks["witness mode"]["value"] == "beside"


_PROBE = """
import json
from evalpin.run.sandbox import probe_isolation
from evalpin.run.sandbox.limits import enforcement
print(json.dumps({"memory": enforcement(probe_isolation())["memory"]}))
"""


# -- neighbours cannot fail an honest case ---------------------------------------------

# Forty processes, each in a session of its own, spinning for the whole of its tests.
HOG = textwrap.dedent(
    """
    import os, time

    def add(a, b):
        for _ in range(40):
            if os.fork() == 0:
                os.setsid()
                while True:
                    pass
        time.sleep(30)
        return a + b
    """
)
# An honest case that needs about half a second of CPU, with a timeout of 10 s (a pass
# expected on a loaded machine too); the hog's 4 s only ends it sooner.
HONEST_TEST = textwrap.dedent(
    """
    from solution import add

    def test_add():
        n = 0
        for i in range(1_000_000):
            n += i
        assert add(2, 3) == 5 and n > 0
    """
)


HONEST = "def add(a, b):\n    return a + b\n"
# The hog and the honest case graded at once (`--jobs 2`), in the process running this:
# argv[1] the backend, argv[2] the folder holding `hog/` and `honest/`.
SIDE_BY_SIDE = """
import json, sys, threading
from pathlib import Path
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import probe_isolation, run_item
iso, folder = probe_isolation((sys.argv[1],)), Path(sys.argv[2])
def grade(name):
    item = load_fixtures(folder / name / "set.yaml").cases[0]
    solution = (folder / name / "solution-under-test.py").read_text()
    done = run_item(item, {"solution.py": solution}, isolation=iso)
    results[name] = [done.passed, done.reasons, done.tail]
results = {}
hog = threading.Thread(target=grade, args=("hog",))
hog.start()
grade("honest")
hog.join()
print(json.dumps(results))
"""


def _neighbours(folder: Path) -> None:
    for name, test, solution, timeout in (
        ("hog", TEST_ADD, HOG, 4),
        ("honest", HONEST_TEST, HONEST, 10),
    ):
        (folder / name).mkdir()
        make_set(folder / name, test, timeout=timeout)
        (folder / name / "solution-under-test.py").write_text(solution)


def test_a_hog_beside_an_honest_case_cannot_fail_it(open_tmp: Path, backend) -> None:
    _neighbours(open_tmp)
    done = subprocess.run(
        [sys.executable, "-I", "-c", SIDE_BY_SIDE, backend.kind, str(open_tmp)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["honest"][:2] == [True, []], result["honest"][2]
    assert result["hog"][:2] == [False, ["timeout"]], result["hog"][2]


def test_a_hog_cannot_fail_an_honest_case_as_an_unprivileged_grader(
    open_tmp: Path, backend, unprivileged
) -> None:
    _neighbours(open_tmp)
    command = unprivileged.argv("-I", "-c", SIDE_BY_SIDE, backend.kind, str(open_tmp))
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["honest"][:2] == [True, []], result["honest"][2]
    assert result["hog"][:2] == [False, ["timeout"]], result["hog"][2]


# -- the witness alone -----------------------------------------------------------------

# Plain pytest's copy says when it ends; the worker's (its answer made wrong on purpose,
# so the witness's tail is kept) says when it was called. Beside, plain pytest stays up
# for HOLD_S: longer than the witness takes to start on a loaded machine (a guard, not a
# measurement); alone, the order is the grader's whatever the time, so it need not wait.
HOLD_S = {True: 0.5, False: 6}
TIMER = textwrap.dedent(
    """
    import atexit, os, sys, time

    def value():
        if "pytest" in sys.modules and "evalpin_wire" not in sys.modules:
            time.sleep(HOLD_S)
            return 1
        print(f"WORKER-AT {time.monotonic():.3f}")
        return 2

    if "pytest" in sys.modules and "evalpin_wire" not in sys.modules:
        atexit.register(lambda: os.write(2, f"PLAIN-END {time.monotonic():.3f}\\n".encode()))
    """
)
TIMER_TEST = "from solution import value\n\n\ndef test_value():\n    assert value() == 1\n"


@pytest.mark.parametrize("alone", [True, False])
def test_the_witness_alone_runs_with_nothing_else_alive(open_tmp: Path, backend, alone) -> None:
    timer = TIMER.replace("HOLD_S", repr(HOLD_S[alone]))
    outcome = grade_set(make_set(open_tmp, TIMER_TEST), timer, backend, witness_alone=alone)
    assert outcome.reasons == ["witness:failed"], (outcome.tail, outcome.witness_tail)
    plain_end = float(re.search(r"PLAIN-END ([\d.]+)", outcome.tail)[1])
    worker_at = float(re.search(r"WORKER-AT ([\d.]+)", outcome.witness_tail)[1])
    if alone:
        assert worker_at > plain_end
    else:  # beside: the witness started with plain pytest (a core to spare here)
        assert worker_at < plain_end
