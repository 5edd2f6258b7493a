"""The fork server (issue 42): sandboxes forked from one warm zygote keep every
guarantee of a fresh start. A case that tries to leave state for the next one (files in
every folder it can write, its environment, patched modules, a detached process, bytes
written to every descriptor it holds, signals to every process it sees) leaves nothing:
the next case, forked from the same zygote, sees a fresh namespace, root and cgroup, and
the zygote serves on. Real sandboxes, as root on the unshare backend (where the fork
server is used)."""

from __future__ import annotations

import os
import secrets
import textwrap
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import probe_isolation, run_item
from evalpin.run.sandbox import zygote as fork_server
from tests.capabilities import need, need_root

# Named for this session: the host's /proc also shows a run beside this one.
MARK = f"evalpin-leak-{secrets.token_hex(4)}"


@pytest.fixture(autouse=True)
def _root_on_unshare() -> None:
    """The fork server serves a root grader on the unshare backend."""
    need_root()
    iso = probe_isolation()
    if iso.kind != "unshare":
        need("unshare", iso.why)


@pytest.fixture(autouse=True)
def _no_server_left(_root_on_unshare):
    """The fork servers these tests start (by grading outside any run) end with them."""
    yield
    fork_server.close()


# Case N: at import, it tries everything it can to reach the next case.
LEAVER = textwrap.dedent(
    f"""\
    import json, os, signal, sys, builtins

    for folder in ("/tmp", "/dev/shm", os.path.expanduser("~"), os.getcwd(), "/"):
        try:
            with open(os.path.join(folder, "{MARK}"), "w") as f:
                f.write("left by case N")
        except OSError:
            pass
    os.environ["{MARK}"] = "1"
    json.dumps = lambda *a, **k: "patched"
    builtins.{MARK.replace("-", "_")} = True
    sys.modules["{MARK}"] = sys
    if os.fork() == 0:  # a detached process that means to outlive the case
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["/bin/sleep", "300", "{MARK}"])
        os._exit(0)
    for fd in range(3, 512):  # the zygote's channel, if it were reachable
        try:
            os.write(fd, b'{{"config": {{}}, "fds": []}}')
        except OSError:
            pass
    for pid in range(2, 600):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


    def answer():
        return 42
    """
)
LEAVER_TEST = "from solution import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"

# Case N+1: passes only where nothing of case N is seen.
CHECKER = "def answer():\n    return 42\n"
CHECKER_TEST = textwrap.dedent(
    f"""\
    import builtins, json, os, socket, sys

    from solution import answer


    def test_nothing_of_the_last_case_is_here():
        assert answer() == 42
        for folder in ("/tmp", "/dev/shm", os.path.expanduser("~"), os.getcwd(), "/"):
            assert not os.path.exists(os.path.join(folder, "{MARK}")), folder
        assert "{MARK}" not in os.environ
        assert json.dumps([1]) == "[1]"
        assert not hasattr(builtins, "{MARK.replace("-", "_")}")
        assert "{MARK}" not in sys.modules


    def test_a_fresh_namespace_root_and_cgroup():
        assert [name for _, name in socket.if_nameindex()] == ["lo"]  # no network
        assert os.getuid() != 0
        assert "evalpin-" in open("/proc/self/cgroup").read()
        seen = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        assert seen and seen[0] == 1 and len(seen) < 5, seen  # this case's own only
        assert not os.path.exists(HOST_FOLDER)  # the set's folder: not in the root
    """
)


def _set(folder: Path) -> Path:
    (folder / "tests").mkdir(parents=True)
    (folder / "prompt.md").write_text("Answer.\n")
    (folder / "tests" / "test_leaver.py").write_text(LEAVER_TEST)
    host = f"HOST_FOLDER = {str(folder)!r}\n"
    (folder / "tests" / "test_checker.py").write_text(host + CHECKER_TEST)
    items = "".join(
        f"  - {{id: {name}, language: python, prompt_file: prompt.md,"
        f" test_file: tests/test_{name}.py, timeout_s: 30, forbidden_imports: [],"
        f" expected_files: [solution.py]{extra}}}\n"
        for name, extra in (
            ("leaver", ""),
            ("checker", ""),
            ("leaver_inproc", ", isolation: in-process"),
        )
    ).replace("test_leaver_inproc.py", "test_leaver.py")
    path = folder / "set.yaml"
    path.write_text(
        f"schema: coding-eval/v1\ndataset_id: leak\ndataset_version: '1'\nitems:\n{items}"
    )
    return path


def _sleepers() -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if MARK.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def test_a_case_leaves_nothing_for_the_next(tmp_path: Path) -> None:
    fs = load_fixtures(_set(tmp_path))
    leaver, checker, leaver_inproc = fs.cases
    fork_server.close()
    first = run_item(leaver, {"solution.py": LEAVER})
    servers = dict(fork_server._ZYGOTES)
    assert servers and all(z.alive() for z in servers.values()), "not forked from a zygote"
    assert _sleepers() == [], "a process of case N outlived it"
    for attacker in (leaver_inproc, leaver):  # the test's own process too, then again
        run_item(attacker, {"solution.py": LEAVER})
    after = run_item(checker, {"solution.py": CHECKER})
    assert after.passed, after.tail
    assert servers == fork_server._ZYGOTES, "a zygote was replaced"
    assert all(z.alive() for z in servers.values()), "a zygote was hurt"
    assert _sleepers() == []
    # It kills what it sees: plain pytest's run, or the witness's (a dispute, never a pass).
    assert not first.passed
    assert first.reasons in (["tests_failed"], ["witness:failed"], ["sandbox_error:unsupported"])


def test_the_zygote_is_a_fresh_start_after_close(tmp_path: Path) -> None:
    fs = load_fixtures(_set(tmp_path))
    checker = fs.cases[1]
    fork_server.close()
    assert run_item(checker, {"solution.py": CHECKER}).passed
    pid = fork_server._ZYGOTES["pytest"].process.pid
    fork_server.close()
    assert (
        not Path(f"/proc/{pid}").exists()
        or b"zombie" in Path(f"/proc/{pid}/status").read_bytes().lower()
    )
    assert run_item(checker, {"solution.py": CHECKER}).passed
    assert fork_server._ZYGOTES["pytest"].process.pid != pid


def test_pools_off_still_grades(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALPIN_POOL", "0")
    fs = load_fixtures(_set(tmp_path))
    assert run_item(fs.cases[1], {"solution.py": CHECKER}).passed


def test_a_check_leaves_no_fork_server_running(tmp_path: Path) -> None:
    import psutil

    from evalpin.run.set_check import check_set

    fork_server.close()
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    fs = load_fixtures(_set(tmp_path))
    check_set(fs, jobs=2)
    assert fork_server._ZYGOTES == {}
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _, alive = psutil.wait_procs(left, timeout=30)
    assert not alive
