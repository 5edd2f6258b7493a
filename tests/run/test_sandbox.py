"""The sandbox, for real: every hostile behaviour is a tiny coding item run in a child
process, with no mocks. Tests that depend on namespaces skip, saying why, where the
machine has none, and fail there under `EVALPIN_REQUIRE` (tests/capabilities.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import sysconfig
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import CodingItem
from evalpin.core.instrument.graders.coding import (
    MAX_PROCESSES,
    PYTEST_ENV,
    PYTEST_INI,
    pytest_argv,
)
from evalpin.core.records import TAIL_CHARS
from evalpin.run.sandbox import (
    OFF_ENFORCED,
    OFF_UNENFORCED,
    Isolation,
    Outcome,
    probe_isolation,
    run_item,
)
from tests.capabilities import need, need_cgroup
from tests.harness import BARE, CORRECT, TEST_ADD, TEST_FOUND, one_item
from tests.procs import surviving

ENFORCED = probe_isolation()


def need_namespaces() -> None:
    if ENFORCED.kind == "none":
        need("unshare", ENFORCED.why)


@pytest.fixture
def backend(backend: Isolation) -> Isolation:
    """Each namespace backend (conftest's), without the pids cgroup: these tests check
    what the namespaces alone enforce (the cgroup would also kill leftovers)."""
    return dataclasses.replace(backend, pids_cgroup=False)


@pytest.fixture
def make_item(tmp_path: Path) -> Callable[..., CodingItem]:
    """Write a one-item `coding-eval/v1` set and load it, as a user's fixture would be."""

    def make(
        test_source: str,
        *,
        timeout: float = 30,  # generous: a pass expected on a loaded machine is a pass
        forbidden: list[str] = (),
        isolation: str = "process",
        memory_mb: int | None = None,
    ) -> CodingItem:
        return one_item(
            tmp_path / f"set-{secrets.token_hex(3)}",
            "test_solution.py",
            test_source,
            "solution.py",
            item_id="case",
            dataset="sandbox-tests",
            timeout_s=timeout,
            forbidden_imports=list(forbidden),
            isolation=isolation,
            **({"memory_mb": memory_mb} if memory_mb else {}),
        )

    return make


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Callable[..., Outcome]]:
    """run_item under a per-test EVAL_WORKDIR; afterwards nothing may be left there."""
    parent = tmp_path / "workdirs"
    parent.mkdir()

    def go(item: CodingItem, solution: str, **kwargs: object) -> Outcome:
        outcome = run_item(item, {"solution.py": solution}, workdir_parent=parent, **kwargs)
        assert list(parent.iterdir()) == [], "the work directory was not removed"
        return outcome

    yield go


@pytest.fixture
def sleep_mark() -> Iterator[str]:
    """A unique `sleep` argument, so leftover processes can be found on the host (and
    are killed afterwards, whatever the test found)."""
    mark = f"{900 + secrets.randbelow(99)}.{secrets.randbelow(10**6):06d}"
    yield mark
    for pid in surviving(mark):
        os.kill(pid, 9)


# -- the normal path ------------------------------------------------------------------


def test_a_correct_solution_passes(make_item, run) -> None:
    outcome = run(make_item(TEST_ADD), CORRECT)
    assert (outcome.passed, outcome.reasons) == (True, [])
    assert "1 passed" in outcome.tail
    assert outcome.network == ENFORCED.network
    assert outcome.seconds > 0


def test_a_wrong_solution_fails_with_a_useful_stable_tail(make_item, run) -> None:
    outcome = run(make_item(TEST_ADD), CORRECT.replace("a + b", "a - b"))
    assert (outcome.passed, outcome.reasons) == (False, ["tests_failed"])
    assert "assert -1 == 5" in outcome.tail
    assert "test_solution.py:4" in outcome.tail
    assert "evalpin-" not in outcome.tail  # temp paths are made relative
    assert len(outcome.tail) <= TAIL_CHARS


TEST_THREE = (
    "import pytest\nfrom solution import add\n\n"
    "def test_small():\n    assert add(2, 3) == 5\n\n"
    "class TestBig:\n    def test_big(self):\n        assert add(10**6, 1) == 10**6 + 1\n\n"
    "@pytest.mark.parametrize('n', [1, 2])\n"
    "def test_negative(n):\n    assert add(-n, 0) == -n\n"
)


@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_a_failing_grade_names_its_failing_tests(make_item, run, isolation: str) -> None:
    wrong = "def add(a, b):\n    return a + b if a < 100 and a > 0 else 0\n"
    outcome = run(make_item(TEST_THREE, isolation=isolation), wrong)
    assert outcome.reasons == ["tests_failed"]
    assert outcome.failed_tests == ["TestBig::test_big", "test_negative"]
    passing = run(make_item(TEST_THREE, isolation=isolation), CORRECT)
    assert (passing.passed, passing.failed_tests) == (True, [])


def test_failed_tests_name_the_expected_tests_that_never_ran(make_item, run) -> None:
    crash = "import os\nos._exit(3)\n"
    outcome = run(make_item(TEST_ADD), crash)
    assert outcome.reasons == ["tests_failed"]
    assert outcome.failed_tests == ["test_add"]


def test_static_failures_never_run_the_code(make_item, run, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"import subprocess\nopen({str(marker)!r}, 'w').close()\n" + CORRECT
    outcome = run(make_item(TEST_ADD, forbidden=["subprocess"]), code)
    assert outcome.reasons == ["forbidden_import:subprocess"]
    assert not marker.exists()
    assert "static checks failed" in outcome.tail


def test_a_syntax_error_names_the_line(make_item, run) -> None:
    outcome = run(make_item(TEST_ADD), "def add(a, b)\n    return a + b\n")
    assert outcome.reasons == ["syntax_error:solution.py"]
    assert "solution.py:1:" in outcome.tail


def test_files_outside_the_surface_fail_before_running(make_item, tmp_path: Path) -> None:
    files = {"solution.py": CORRECT, "conftest.py": "import pytest\n", "../up.py": ""}
    outcome = run_item(make_item(TEST_ADD), files, workdir_parent=tmp_path)
    assert outcome.reasons == ["outside_surface:conftest.py", "outside_surface:../up.py"]
    assert not (tmp_path / "up.py").exists()


def test_missing_solution(make_item) -> None:
    outcome = run_item(make_item(TEST_ADD), {})
    assert outcome.reasons == ["missing_file:solution.py"]


def test_unsupported_language_is_a_sandbox_error(make_item) -> None:
    item = make_item(TEST_ADD)
    other = CodingItem(**{**item.__dict__, "language": "rust"})
    assert run_item(other, {"solution.py": CORRECT}).reasons == [
        "sandbox_error:unsupported_language"
    ]


def test_a_wrapper_that_cannot_start_is_a_sandbox_error(
    make_item, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_namespaces()
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("EVALPIN_POOL", "0")  # the fork server needs no wrapper command
    outcome = run(make_item(TEST_ADD), CORRECT)
    assert (outcome.passed, outcome.reasons) == (False, ["sandbox_error:start"])
    assert "cannot start sandbox" in outcome.tail


def test_without_namespaces_network_is_recorded_unenforced(make_item, run) -> None:
    outcome = run(make_item(TEST_ADD), CORRECT, isolation=BARE)
    assert (outcome.passed, outcome.network) == (True, OFF_UNENFORCED)


def test_probe_enforces_network_off_here() -> None:
    need_namespaces()
    assert ENFORCED.network == OFF_ENFORCED
    assert probe_isolation(()).network == OFF_UNENFORCED


# -- the pytest invocation itself -----------------------------------------------------


def test_the_invocation_ignores_local_pytest_config_and_shadows(tmp_path: Path) -> None:
    """Run the graded command directly (no sandbox) in a folder holding every local file
    that could hijack pytest: none of them may act."""
    work, ctl = tmp_path / "work", tmp_path / "ctl"
    work.mkdir()
    ctl.mkdir()
    (work / "solution.py").write_text(CORRECT)
    (work / "test_solution.py").write_text(TEST_ADD)
    (work / "pytest.py").write_text("raise SystemExit('shadowed pytest')\n")
    (work / "sitecustomize.py").write_text("raise SystemExit('shadowed site')\n")
    (work / "pytest.ini").write_text("[pytest]\naddopts = --collect-only\n")
    (work / "conftest.py").write_text("import pytest\npytest.exit('conftest ran', 3)\n")
    (ctl / "evalpin-pytest.ini").write_text(PYTEST_INI)
    argv = pytest_argv(
        sys.executable,
        str(ctl / "evalpin-pytest.ini"),
        str(work),
        str(ctl / "r.xml"),
        "test_solution.py",
    )
    # PYTHONPATH would put the shadows first; PYTEST_ADDOPTS is the allow-list's job.
    env = {"PATH": os.defpath, **PYTEST_ENV, "PYTHONPATH": str(work)}
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert b"test_add" in (ctl / "r.xml").read_bytes()


# -- hostile code ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "import os\nos._exit(0)\n",
        CORRECT + "import atexit, os\natexit.register(lambda: os._exit(0))\n"
        "def test_extra():\n    os._exit(0)\n",
    ],
    ids=["exit-at-import", "exit-in-a-test"],
)
def test_exiting_early_leaves_no_report_and_fails(make_item, run, code: str) -> None:
    test = TEST_ADD + "\nfrom solution import *  # noqa\n"
    outcome = run(make_item(test, isolation="in-process"), code)
    assert (outcome.passed, outcome.reasons) == (False, ["tests_failed"])


def test_a_report_swapped_for_a_fifo_does_not_hang_the_grader(make_item, run) -> None:
    code = CORRECT + textwrap.dedent(
        """
        import atexit, os, sys
        def swap():
            report = sys.argv[sys.argv.index("--junitxml") + 1]
            os.unlink(report)
            os.mkfifo(report)
        atexit.register(swap)
        """
    )
    item = make_item(TEST_ADD, isolation="in-process")
    outcomes: list[Outcome] = []
    # In a daemon thread, so a regression fails this test instead of hanging the suite.
    grader = threading.Thread(target=lambda: outcomes.append(run(item, code)), daemon=True)
    grader.start()
    grader.join(timeout=120)  # a guard: a grade can take 10 s on a loaded machine
    assert outcomes, "the grader blocked on the report"
    assert outcomes[0].reasons == ["tampering:pytest"]  # its atexit callback is seen


def test_the_callers_pytest_and_python_variables_do_not_reach_pytest(
    make_item, run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "evil-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['EVIL_SITE'] = '1'\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "--collect-only")
    monkeypatch.setenv("PYTEST_PLUGINS", "no_such_plugin")
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-not-real")
    code = CORRECT + textwrap.dedent(
        """
        import os
        FOUND = sorted(
            k for k in os.environ
            if k.startswith(("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHON", "OPENAI", "EVIL"))
            or "TOKEN" in k
        )
        """
    )
    outcome = run(make_item(TEST_ADD + "\n" + TEST_FOUND), code)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_rlimit_caps_memory(make_item, run) -> None:
    code = "def add(a, b):\n    block = bytearray(3 * 1024**3)\n"
    outcome = run(make_item(TEST_ADD), code)
    assert outcome.reasons == ["tests_failed"]
    assert "MemoryError" in outcome.tail


def test_rlimit_caps_file_size(make_item, run) -> None:
    code = CORRECT + textwrap.dedent(
        """
        FOUND = []
        try:
            with open("big.bin", "wb") as f:
                for _ in range(80):
                    f.write(b"x" * 1024**2)
            FOUND.append("wrote 80 MiB")
        except OSError:
            pass
        """
    )
    outcome = run(make_item(TEST_FOUND), code)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_huge_output_is_read_as_it_comes_and_only_the_tail_kept(make_item, tmp_path) -> None:
    """The model finds the grader's pipe behind pytest's capture and floods it."""
    code = CORRECT + textwrap.dedent(
        """
        import os, stat
        chunk = b"flood " * 100_000 + b"\\n"
        for fd in range(64):
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    for _ in range(250):  # 150 MB: 3x the growth allowed below
                        os.write(fd, chunk)
            except OSError:
                pass
        """
    )
    item = make_item(TEST_ADD, isolation="in-process", timeout=60)  # 150 MB on a busy machine
    solution = tmp_path / "flood.py"
    solution.write_text(code)
    # In a fresh grader process: this one's peak (ru_maxrss) may be past 150 MB already.
    argv = [sys.executable, "-c", MEASURED_GRADER, str(item.test_file.parent / "set.yaml")]
    done = subprocess.run([*argv, str(solution)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"], result["tail"]
    assert "flood" in result["tail"]
    assert len(result["tail"]) <= TAIL_CHARS
    assert result["grown_kib"] / 1024 < 50


MEASURED_GRADER = """
import json, resource, sys
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import run_item
item = load_fixtures(sys.argv[1]).cases[0]
files = {"solution.py": open(sys.argv[2]).read()}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
outcome = run_item(item, files)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"passed": outcome.passed, "tail": outcome.tail, "grown_kib": grown}))
"""


@pytest.mark.parametrize(
    "body",
    [
        "while True:\n        pass",
        "time.sleep(60)",
        "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "    signal.alarm(1)\n"
        "    time.sleep(60)",
    ],
    ids=["busy-loop", "sleep", "ignores-signals"],
)
def test_timeouts_kill_the_run(make_item, run, body: str) -> None:
    code = f"import signal, time\n\ndef add(a, b):\n    {body}\n"
    outcome = run(make_item(TEST_ADD, timeout=1), code)
    assert outcome.reasons == ["timeout"]
    assert outcome.tail.endswith("[evalpin] killed after 1 s (the item's timeout_s)")


# Returns once the detached grandchild has exec'd `sleep MARK` (its end of a close-on-exec
# pipe closes then), so a survivor is there to be found without waiting.
DETACH = """
import os, sys
def _detach(mark):
    child = os.fork()
    if child == 0:
        os.setsid()
        r, w = os.pipe()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execv("/bin/sleep", ["sleep", mark])
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    os.waitpid(child, 0)
"""


@pytest.mark.parametrize("hang", [False, True], ids=["pytest-exits", "pytest-times-out"])
def test_a_setsid_grandchild_does_not_outlive_the_run(
    make_item, run, backend: Isolation, hang: bool, sleep_mark: str
) -> None:
    mark = sleep_mark
    code = DETACH + f"_detach({mark!r})\n" + CORRECT
    if hang:
        # Clearing its parent-death signal, pytest would outlive a kill of the wrapper
        # alone; under unshare it is the namespace's init and must be killed directly.
        code += "import ctypes, time\nctypes.CDLL(None).prctl(1, 0)\ntime.sleep(60)\n"
    # The item's timeout matters only when pytest hangs; otherwise it is generous, so a
    # busy machine cannot turn a clean exit into a timeout.
    outcome = run(make_item(TEST_ADD, timeout=1.5 if hang else 30), code, isolation=backend)
    assert outcome.reasons == (["timeout"] if hang else []), outcome.tail
    assert surviving(mark) == []


def test_without_namespaces_a_setsid_grandchild_survives(make_item, run, sleep_mark) -> None:
    """The canary for the test above: it does detect a survivor."""
    run(make_item(TEST_ADD), DETACH + f"_detach({sleep_mark!r})\n" + CORRECT, isolation=BARE)
    assert surviving(sleep_mark) != []


def test_a_fork_bomb_hits_the_process_cap_and_is_cleaned_up(make_item, run, sleep_mark) -> None:
    need_namespaces()
    if os.geteuid() == 0:  # root is exempt from RLIMIT_NPROC: only the cgroup caps it
        need_cgroup(ENFORCED.pids_cgroup)
    mark = sleep_mark
    code = CORRECT + textwrap.dedent(
        f"""
        import os
        FORKED = 0
        try:
            while FORKED < 1000:  # bounded, in case the cap is missing
                if os.fork() == 0:
                    os.execv("/bin/sleep", ["sleep", {mark!r}])
                FORKED += 1
        except OSError:
            pass
        """
    )
    test = "import solution\n\ndef test_count():\n    assert solution.FORKED < 0, solution.FORKED\n"
    outcome = run(make_item(test), code)
    forked = int(re.search(r"AssertionError: (\d+)", outcome.tail)[1])
    assert 0 < forked < MAX_PROCESSES
    assert surviving(mark) == []


def test_loopback_servers_are_unreachable(make_item, run, backend: Isolation) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        outcome = run(make_item(TEST_FOUND), connect_code(port), isolation=backend)
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):
            server.accept()
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_with_network_allowed_the_same_server_is_reached(make_item, run) -> None:
    """The canary for the test above: the probe does connect when it can."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        outcome = run(make_item(TEST_FOUND), connect_code(port), allow_network=True)
        server.settimeout(2)
        conn, _ = server.accept()
        conn.close()
    assert outcome.network == "on"
    assert "connected" in outcome.tail


def connect_code(port: int) -> str:
    return CORRECT + textwrap.dedent(
        f"""
        import socket
        FOUND = []
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
            FOUND.append("connected")
        except OSError:
            pass
        """
    )


# The model's secret hunt: its own environment, every /proc environ and command line it
# can read (the grader's own included), and the same again after trying to unmount the
# fresh /proc to uncover the host's.
# The unmount is only tried in a mount namespace other than the test's own: if the
# sandbox ever regressed, it must not unmount the host's /proc (it has, once).
HUNT = CORRECT + textwrap.dedent(
    """
    import ctypes, os
    KEY = "sk-evalpin-" + "fake-0123456789"
    FOUND = []
    if any(KEY in v for v in os.environ.values()):
        FOUND.append("env")
    def scan(where):
        for pid in os.listdir("/proc"):
            for part in ("environ", "cmdline"):
                try:
                    with open(f"/proc/{pid}/{part}", "rb") as f:
                        if KEY.encode() in f.read():
                            who = "ppid" if pid == str(os.getppid()) else "proc"
                            FOUND.append(f"{where}:{who}:{part}")
                except OSError:
                    pass
    scan("proc")
    if os.stat("/proc/self/ns/mnt").st_ino == HOST_MOUNT_NS:
        FOUND.append("host mount namespace")
    elif ctypes.CDLL(None).umount2(b"/proc", 2) == 0:
        FOUND.append("unmounted /proc")
        scan("host-proc")
    """
).replace("HOST_MOUNT_NS", str(os.stat("/proc/self/ns/mnt").st_ino))
# The key is on the grader's command line too: /proc/PID/cmdline is world-readable, so
# only the pid namespace hides it.
GRADER = """
import json, sys
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import Isolation, run_item
item = load_fixtures(sys.argv[1]).cases[0]
files = {"solution.py": open(sys.argv[3]).read()}
iso = Isolation(**json.loads(sys.argv[2]))
outcome = run_item(item, files, secret_names=["EVALPIN_FAKE_KEY"], isolation=iso)
print(json.dumps({"passed": outcome.passed, "reasons": outcome.reasons, "tail": outcome.tail}))
"""
FAKE_KEY = "sk-evalpin-fake-0123456789"


def grade_in_a_process_holding_the_key(item: CodingItem, tmp_path: Path, iso: Isolation) -> dict:
    """A grader process started with the key in its environment, as `evalpin run` is:
    only then is the key in /proc/<grader>/environ for the model to find."""
    solution = tmp_path / "hunt.py"
    solution.write_text(HUNT)
    set_file = item.test_file.parent / "set.yaml"
    env = {**os.environ, "EVALPIN_FAKE_KEY": FAKE_KEY}
    isolation = json.dumps(dataclasses.asdict(iso))
    argv = [sys.executable, "-c", GRADER, str(set_file), isolation, str(solution), FAKE_KEY]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_api_key_is_out_of_reach(make_item, tmp_path: Path, backend: Isolation) -> None:
    result = grade_in_a_process_holding_the_key(make_item(TEST_FOUND), tmp_path, backend)
    assert (result["passed"], result["reasons"]) == (True, []), result["tail"]
    assert FAKE_KEY not in result["tail"]


def test_without_namespaces_the_parents_environ_leaks(make_item, tmp_path: Path) -> None:
    """The canary for the test above: the hunt does find the key when /proc is shared."""
    result = grade_in_a_process_holding_the_key(make_item(TEST_FOUND), tmp_path, BARE)
    assert result["reasons"] == ["tests_failed"]
    assert "proc:ppid:environ" in result["tail"]
    assert "proc:ppid:cmdline" in result["tail"]


def test_secret_values_are_cut_from_the_tail(
    make_item, run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key the model read from a file still never reaches the tail. Without namespaces,
    so that the file is readable at all (the private root hides it)."""
    monkeypatch.setenv("EVALPIN_FAKE_KEY", FAKE_KEY)
    leaked = tmp_path / "dotenv"
    leaked.write_text(FAKE_KEY)
    code = CORRECT + f"FOUND = [open({str(leaked)!r}).read()]\n"
    outcome = run(make_item(TEST_FOUND), code, secret_names=["EVALPIN_FAKE_KEY"], isolation=BARE)
    assert outcome.reasons == ["tests_failed"]
    assert FAKE_KEY not in outcome.tail
    assert "[redacted]" in outcome.tail


def test_nothing_outside_the_work_dir_is_writable(
    make_item, run, tmp_path: Path, backend: Isolation
) -> None:
    """Writes land in the private root (its /tmp) or fail; none reaches the host."""
    targets = [
        tmp_path / "host-file",
        Path(sysconfig.get_paths()["purelib"]) / f"evalpin_probe_{secrets.token_hex(4)}.pth",
    ]
    code = CORRECT + textwrap.dedent(
        f"""
        import os
        FOUND = []
        for path in {[str(t) for t in targets]!r}:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write("import os\\n")
            except OSError:
                pass
        with open("inside.txt", "w") as f:
            f.write("the work dir stays writable")
        with open(os.path.join(os.environ["TMPDIR"], "t"), "w") as f:
            f.write("and so does TMPDIR")
        """
    )
    try:
        outcome = run(make_item(TEST_FOUND), code, isolation=backend)
        assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail
        assert [t for t in targets if t.exists()] == []
    finally:
        for target in targets:
            target.unlink(missing_ok=True)


def test_no_capabilities_remain(make_item, run, backend: Isolation) -> None:
    code = CORRECT + textwrap.dedent(
        """
        FOUND = [
            line for line in open("/proc/self/status")
            if line.startswith(("CapPrm", "CapEff", "CapBnd", "CapAmb"))
            and line.split()[1].strip("0")
        ]
        """
    )
    outcome = run(make_item(TEST_FOUND), code, isolation=backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_the_runs_pids_cgroup_is_removed(make_item, run) -> None:
    need_cgroup(ENFORCED.pids_cgroup)
    code = CORRECT + "FOUND = [line for line in open('/proc/self/cgroup') if 'evalpin-' in line]\n"
    outcome = run(make_item(TEST_FOUND), code)
    name = re.search(r"evalpin-[0-9a-f]+", outcome.tail)
    assert name, outcome.tail  # the tested code ran inside a cgroup of its own
    assert list(Path("/sys/fs/cgroup").glob(f"**/{name[0]}")) == []


def test_bwrap_is_found_when_installed() -> None:
    if shutil.which("bwrap") is None:
        need("bwrap", "bubblewrap is not installed")
    assert probe_isolation(("bwrap",)).kind == "bwrap"


KILLED_GRADER = """
import json, sys
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import probe_isolation, run_item
item = load_fixtures(sys.argv[1]).cases[0]
iso = probe_isolation((sys.argv[2],))
solution = open(sys.argv[3]).read()
print("graded", run_item(item, {"solution.py": solution}, isolation=iso).reasons, flush=True)
"""


def test_a_sigkilled_grader_leaves_no_sandbox_or_cgroup_behind(
    make_item, backend: Isolation, sleep_mark: str
) -> None:
    """The grader dies mid-item: its sandbox dies with it, and the next run removes the
    cgroup it could not."""
    item = make_item(TEST_ADD, timeout=60)
    # In a file: on the grader's command line the mark would be found at once.
    code = item.test_file.parent / "solution.py"
    code.write_text("import os\nos.execv('/bin/sleep', ['sleep', " + repr(sleep_mark) + "])\n")
    argv = [sys.executable, "-c", KILLED_GRADER, str(item.test_file.parent / "set.yaml")]
    grader = subprocess.Popen([*argv, backend.kind, str(code)], stdout=subprocess.PIPE)
    for _ in range(600):  # until the candidate is running (a condition, not a timing)
        if surviving(sleep_mark) or grader.poll() is not None:
            break
        threading.Event().wait(0.05)
    assert surviving(sleep_mark), "the candidate never started"
    # Looked at before the kill: once the grader is dead, any grader's next cgroup (a
    # test beside this one, another run) may remove it before this test looks.
    left = f"evalpin-{grader.pid}-"
    stale = list(Path("/sys/fs/cgroup").glob(f"*/**/{left}*"))
    grader.kill()
    grader.wait()
    grader.stdout.close()
    for _ in range(600):
        if not surviving(sleep_mark):
            break
        threading.Event().wait(0.05)
    assert surviving(sleep_mark) == []
    from evalpin.run.sandbox.cgroup import Cgroup

    # `backend` here has no cgroup; the grader process probed its own, cgroup included.
    if not probe_isolation((backend.kind,)).pids_cgroup:
        need_cgroup(False)  # the sandbox died with its grader; the cgroup half is not here
    assert stale != [], "the grader ran its candidate in no cgroup of its own"
    Cgroup.create(64 * 1024**2).remove()
    assert [p for p in Path("/sys/fs/cgroup").glob(f"*/**/{left}*")] == []


# -- how a sandbox's interpreter starts -------------------------------------------------

SHOW_START = """
import json, os, sys
print(json.dumps({"hash": hash("evalpin's seed"), "path": sys.path,
                  "env": sorted(k for k in os.environ if k.startswith("PYTHON"))}))
"""


def test_a_launched_sandbox_has_the_graders_seed_and_isolated_start(
    backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started by the launcher (no fork server): the grader's one string hash seed, as a
    forked sandbox has; the box's PYTHON* variables are in its environment but did not
    act at startup (`-I`'s rule), and the seed's variable is not shown to the code."""
    from evalpin.run.sandbox import execute
    from evalpin.run.sandbox.box import scratch
    from evalpin.run.sandbox.mounts import Spec
    from evalpin.run.sandbox.zygote import HASH_SEED

    need_namespaces()
    monkeypatch.setenv("EVALPIN_POOL", "0")
    planted = tmp_path / "planted"
    planted.mkdir()
    env = {"PATH": os.defpath, "PYTHONPATH": str(planted), "PYTHONWARNINGS": "error"}
    with scratch(None, False, 256) as box:
        folder = box.folder("w")
        spec = Spec([sys.executable, "-I", "-B", "-c", SHOW_START], env, folder, rw=[folder])
        run = execute(backend, box, [spec], 60)
    assert run.exit_code == 0, run.output
    shown = json.loads(run.output.decode().strip().splitlines()[-1])
    expected = subprocess.run(
        [sys.executable, "-c", 'print(hash("evalpin\'s seed"))'],
        env={"PYTHONHASHSEED": HASH_SEED},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown["hash"] == int(expected)
    assert shown["env"] == ["PYTHONPATH", "PYTHONWARNINGS"]
    assert str(planted) not in shown["path"]
