"""No channel between two sandboxes (issues 49 and 50): kernel keys and what container
runtimes refuse are refused in every box; no inode two boxes alive at once can lock or
watch is shared (each box reads its own overlay, its own copies, its own /proc; the
grader holds every lock on the device nodes they share); nothing a case leaves is seen
by a later one; no process of evalpin's outside the box is in the candidate's process
group or session. Each on both backends, with evalpin run as root and as `nobody`.

Attack code runs inside evalpin's sandboxes only; the host is only read.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evalpin.run.sandbox import devlocks, execute
from evalpin.run.sandbox.box import scratch
from evalpin.run.sandbox.launcher import REFUSED_CALLS
from evalpin.run.sandbox.mounts import Spec
from tests.capabilities import need
from tests.harness import CORRECT, GRADER, TEST_FOUND, grade_set, make_set
from tests.unprivileged import Unprivileged

# Every refused call the candidate tries, by its number here (x86_64 or aarch64), with
# harmless arguments: a success (anything but EPERM) is a finding.
REFUSED_HUNT = CORRECT + textwrap.dedent(
    """
    import ctypes, errno, platform
    libc = ctypes.CDLL(None, use_errno=True)
    FOUND = []
    column = 0 if platform.machine() == "x86_64" else 1
    for name, numbers in CALLS.items():
        nr = numbers[column]
        if nr is None:
            continue
        if libc.syscall(nr, 0, 0, 0, 0, 0) >= 0 or ctypes.get_errno() != errno.EPERM:
            FOUND.append(f"{name}: errno {ctypes.get_errno()}")
    # A key, the ways a case would store one (user keyring, session, persistent one).
    for keyring in (-4, -3, -5):  # KEY_SPEC_USER, SESSION, USER_SESSION
        nr = (248, 217)[column]
        if libc.syscall(nr, b"user", b"evalpin-box-test", b"x", 1, keyring) > 0:
            FOUND.append(f"added a key to keyring {keyring}")
    """
).replace("CALLS", repr({n: (x, a) for n, (x, a, _) in REFUSED_CALLS.items()}))


def grade_as_nobody(venv: Unprivileged, set_file: Path, solution: str, kind: str) -> dict:
    """The item graded by evalpin run as `nobody` (test_attack_sandbox's GRADER)."""
    folder = set_file.parent
    (folder / "solution-under-test.py").write_text(solution)
    work = Path(tempfile.mkdtemp(dir=folder))
    os.chown(work, venv.uid, venv.uid)
    argv = ["-I", "-c", GRADER, str(set_file), kind, str(folder / "solution-under-test.py")]
    done = subprocess.run(
        venv.argv(*argv, str(work)), capture_output=True, text=True, timeout=300, cwd="/"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["kind"] == kind, result["why"]
    return result


# -- kernel keys and the calls a grade has no use for ----------------------------------


def test_keys_and_every_refused_call_are_refused_in_both_boxes(open_tmp, backend) -> None:
    outcome = grade_set(make_set(open_tmp, TEST_FOUND), REFUSED_HUNT, backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_keys_and_refused_calls_as_an_unprivileged_grader(open_tmp, backend, unprivileged):
    result = grade_as_nobody(
        unprivileged, make_set(open_tmp, TEST_FOUND), REFUSED_HUNT, backend.kind
    )
    assert (result["passed"], result["reasons"]) == (True, []), result["tail"]


# -- locks: two boxes alive at once ----------------------------------------------------

# Every inode both boxes have that a lock could be taken on: the device nodes, a stdlib
# module, the interpreter, an /etc file, a /proc/sys entry, a file of a folder bound
# read-only into both.
LOCK_TARGETS = [
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/etc/ld.so.cache",
    "/proc/sys/kernel/ostype",
    "/shared/data.txt",
    "STDLIB",
    "PYTHON",
]
# The sender takes every kind of lock on every target at `start + 1`, holds them until
# `start + 3.5`; the receiver looks before (`start + 0.4`) and while (`start + 2.2`). A box
# more than 0.3 s late for its moment says so and ends (exit 3): its look would prove
# nothing, so the pair is tried again with more time to start (`_apart`).
LOCKER = textwrap.dedent(
    """
    import fcntl, json, os, struct, sys, time
    role, start = sys.argv[1], float(sys.argv[2])
    targets = [t.replace("STDLIB", os.__file__).replace("PYTHON", os.path.realpath(sys.executable))
               for t in TARGETS]

    def at(t):
        late = time.monotonic() - (start + t)
        if late > 0.3:
            print(json.dumps({"late": late}), flush=True)
            sys.exit(3)
        time.sleep(max(-late, 0))

    def look():
        seen = {}
        for path in targets:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            except OSError as exc:
                seen[path] = "open " + exc.strerror
                continue
            state = []
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                state.append("flock free")
            except OSError:
                state.append("flock held")
            query = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 8, 0)
            for cmd in (fcntl.F_GETLK, fcntl.F_OFD_GETLK):
                got = struct.unpack("hhqqi", fcntl.fcntl(fd, cmd, query))
                state.append(f"{cmd}:{got[0]}:{got[2]}:{got[3]}")
            os.close(fd)
            seen[path] = state
        return seen

    def byte(at):
        return struct.pack("hhqqi", fcntl.F_RDLCK, 0, at, 1, 0)

    if role == "send":
        at(1.0)
        held = []
        for path in targets:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            held.append(fd)
            for lock in (
                lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB),
                lambda: fcntl.fcntl(fd, fcntl.F_SETLK, byte(0)),
                lambda: fcntl.fcntl(fd, fcntl.F_OFD_SETLK, byte(2)),
            ):
                try:
                    lock()
                except OSError:
                    pass
        at(3.5)
    else:
        at(0.4)
        before = look()
        at(2.2)
        during = look()
        print(json.dumps({"moved": {p: [before[p], during[p]] for p in targets
                                    if before[p] != during[p]}}), flush=True)
    """
).replace("TARGETS", repr(LOCK_TARGETS))


def _lock_specs(box, shared: Path, start: float) -> list[Spec]:
    folders = [box.folder("a"), box.folder("b")]
    env = {"PATH": os.defpath}
    return [
        Spec(
            [sys.executable, "-I", "-S", "-c", LOCKER, role, repr(start)],
            env,
            folder,
            rw=[folder],
            ro_at=[(shared, Path("/shared"))],
        )
        for role, folder in zip(("send", "look"), folders, strict=True)
    ]


def test_no_lock_crosses_between_two_boxes_alive_at_once(backend, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("the same file, bound into both\n")
    shared.chmod(0o755)

    def pair(lead: float) -> tuple[int, str]:
        with scratch(None, backend.pids_cgroup, 256) as box:
            run = execute(backend, box, _lock_specs(box, shared, time.monotonic() + lead), 60)
        return run.exit_code, run.output.decode(errors="replace")

    result = json.loads(_apart(pair).strip().splitlines()[-1])
    assert result["moved"] == {}, result


# Seconds the two boxes get to start before the schedule's zero: a loaded machine can
# start a box later than the first lead allows (a late box looks at nothing, see LOCKER).
LEADS = (1.5, 5.0, 15.0)


def _apart(pair: Callable[[float], tuple[int, str]]) -> str:
    """The output of the first try of `pair(lead)` whose two boxes kept their schedule;
    any other failure fails at once."""
    for lead in LEADS:
        code, said = pair(lead)
        if code == 0:
            return said
        assert '{"late": ' in said, said
    pytest.fail(f"the boxes missed their schedule even {LEADS[-1]} s ahead: {said}")


def test_no_box_can_lock_a_device_node_at_all() -> None:
    """What makes the device nodes' locks carry nothing: held by the grader (or another
    holder), always, so a box's every try is refused the same way."""
    import fcntl
    import struct

    devlocks.hold()
    for name in ("null", "zero", "full", "random", "urandom"):
        fd = os.open(f"/dev/{name}", os.O_RDONLY)
        try:
            with pytest.raises(OSError):
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            with pytest.raises(OSError):
                every = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0)
                fcntl.fcntl(fd, fcntl.F_OFD_SETLK, every)
        finally:
            os.close(fd)


# As nobody: the same two boxes, from a grader that is not root (user namespaces).
LOCK_GRADER = """
import json, os, sys, time
from pathlib import Path
from evalpin.run.sandbox import execute, probe_isolation
from evalpin.run.sandbox.box import scratch
from evalpin.run.sandbox.mounts import Spec
iso = probe_isolation((sys.argv[1],))
shared, locker = Path(sys.argv[2]), sys.argv[3]
with scratch(None, iso.pids_cgroup, 256) as box:
    start = time.monotonic() + float(sys.argv[4])
    specs = [Spec([sys.executable, "-I", "-S", "-c", locker, role, repr(start)],
                  {"PATH": os.defpath}, box.folder(role), rw=[box.folder(role)],
                  ro_at=[(shared, Path("/shared"))]) for role in ("send", "look")]
    run = execute(iso, box, specs, 60)
print(json.dumps({"kind": iso.kind, "why": iso.why, "exit": run.exit_code,
                  "output": run.output.decode(errors="replace")}))
"""


def test_no_lock_crosses_as_an_unprivileged_grader(backend, open_tmp, unprivileged) -> None:
    shared = open_tmp / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("the same file, bound into both\n")
    shared.chmod(0o755)

    def pair(lead: float) -> tuple[int, str]:
        argv = ["-I", "-c", LOCK_GRADER, backend.kind, str(shared), LOCKER, repr(lead)]
        done = subprocess.run(
            unprivileged.argv(*argv), capture_output=True, text=True, timeout=120, cwd="/"
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["kind"] == backend.kind, result["why"]
        return result["exit"], result["output"]

    assert json.loads(_apart(pair).strip().splitlines()[-1])["moved"] == {}


# -- the answers crossing between plain pytest and the witness, graded for real --------

# The test's expected value is read by plain pytest's copy of the candidate from the
# test file beside it and sent as lock bits on files both boxes have; the witness's
# worker (which cannot read the test) waits for them. A channel would pass the case.
SECRET_TEST = (
    "from solution import secret\n\n\ndef test_secret():\n    assert secret() == {value}\n"
)
LOCK_SENDER = textwrap.dedent(
    """
    import fcntl, os, re, struct, sys, time
    FILES = ["/evalpin/evalpin_capture.py", os.__file__, "/etc/ld.so.cache", "/dev/null"]
    MARK = 0b1011

    def bits(value):
        word = (MARK << 8) | value
        return [(word >> i) & 1 for i in range(12)]

    def secret():
        here = os.path.join(os.getcwd(), "test_solution.py")
        if os.path.exists(here):  # plain pytest: the test is beside us
            value = int(re.search(r"== (\\d+)", open(here).read()).group(1))
            held = []
            for path in FILES:
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                except OSError:
                    continue
                held.append(fd)
                for i, bit in enumerate(bits(value)):
                    if bit:
                        for offset, cmd in enumerate((fcntl.F_SETLK, fcntl.F_OFD_SETLK)):
                            lock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 16 * i + offset, 1, 0)
                            try:
                                fcntl.fcntl(fd, cmd, lock)
                            except OSError:
                                pass
            time.sleep(4)
            return value
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            for path in FILES:
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                except OSError:
                    continue
                word = 0
                for i in range(12):
                    for offset in (0, 1):
                        query = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 16 * i + offset, 1, 0)
                        got = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_OFD_GETLK, query))
                        if got[0] != fcntl.F_UNLCK and got[2] == 16 * i + offset:
                            word |= 1 << i
                os.close(fd)
                if word >> 8 == MARK:
                    return word & 0xFF
            time.sleep(0.05)
        return -1
    """
)


def test_answers_do_not_cross_from_plain_pytest_to_the_witness(open_tmp, backend) -> None:
    value = 1 + secrets.randbelow(254)
    set_file = make_set(open_tmp, SECRET_TEST.format(value=value))
    outcome = grade_set(set_file, LOCK_SENDER, backend)
    assert not outcome.passed, outcome.tail
    assert outcome.reasons == ["witness:failed"], (outcome.reasons, outcome.witness_tail)


# -- nothing a case leaves is seen by a later one --------------------------------------

LEAVER = CORRECT + textwrap.dedent(
    """
    import ctypes, os, socket, subprocess, sys
    libc = ctypes.CDLL(None, use_errno=True)
    FOUND = []
    # What an earlier case may have left, looked for first.
    if os.path.exists("/tmp/left-by-a-case") or os.path.exists("/dev/shm/left-by-a-case"):
        FOUND.append("a file an earlier case left")
    if min(libc.shmget(0x5EED, 0, 0), libc.msgget(0x5EED, 0), libc.semget(0x5EED, 0, 0)) >= 0:
        FOUND.append("a System V object an earlier case left")
    mq_open = getattr(libc, "mq_open", None)
    if mq_open is not None and mq_open(b"/evalpin-left", os.O_RDONLY) >= 0:
        FOUND.append("a message queue an earlier case left")
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect("\\0evalpin-left")
            FOUND.append("an abstract socket an earlier case left")
        except OSError:
            pass
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if b"evalpin-left-behind" in open(f"/proc/{pid}/cmdline", "rb").read():
                    FOUND.append("a process an earlier case left")
            except OSError:
                pass
    # Then leave all of them.
    open("/tmp/left-by-a-case", "w").write("x")
    open("/dev/shm/left-by-a-case", "w").write("x")
    libc.shmget(0x5EED, 4096, 0o1666)
    libc.msgget(0x5EED, 0o1666)
    libc.semget(0x5EED, 1, 0o1666)
    if mq_open is not None:
        mq_open(b"/evalpin-left", os.O_CREAT | os.O_RDWR, 0o666, None)
    LISTENER = socket.socket(socket.AF_UNIX)
    LISTENER.bind("\\0evalpin-left")
    LISTENER.listen()
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "evalpin-left-behind"],
                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    """
)


def _sysv() -> list[str]:
    """The host namespace's System V objects of the key the candidate uses."""
    found = []
    for kind in ("shm", "msg", "sem"):
        for line in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]:
            if line.split()[0] == str(0x5EED):
                found.append(f"{kind}: {line}")
    return found


def test_nothing_a_case_leaves_is_seen_by_the_next_or_outlives_it(open_tmp, backend, monkeypatch):
    from evalpin.run.sandbox import box as box_module

    uids: list[int | None] = []
    pick = box_module.sandbox_uid
    monkeypatch.setattr(box_module, "sandbox_uid", lambda: uids.append(pick()) or uids[-1])
    set_file = make_set(open_tmp, TEST_FOUND)
    # The detached process named for this test alone: the host's /proc also shows the
    # boxes of a test running beside this one (another pytest worker, another run).
    mark = f"evalpin-left-behind-{secrets.token_hex(6)}"
    code = LEAVER.replace("evalpin-left-behind", mark)
    for _ in range(2):  # the second case looks for what the first (both its boxes) left
        outcome = grade_set(set_file, code, backend)
        assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail
    assert _sysv() == []  # no System V object reached the host's namespace
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if mark.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                leftovers.append(pid)
        except OSError:
            continue
    assert leftovers == []
    # The boxes' uids hold no key once the kernel has collected their session keyrings
    # (a box's own, made by the launcher; the candidate can make none).
    ours = {uid for uid in uids if uid is not None}
    assert len(ours) == 4  # two cases, two runs each (plain pytest, the witness)
    for _ in range(120):
        if not ours & set(_key_users()):
            break
        time.sleep(0.5)
    assert not ours & set(_key_users())


def _key_users() -> list[int]:
    try:
        lines = Path("/proc/key-users").read_text().splitlines()
    except OSError:
        return []
    return [int(line.split(":")[0]) for line in lines]


def test_nothing_a_case_leaves_is_seen_as_an_unprivileged_grader(open_tmp, backend, unprivileged):
    set_file = make_set(open_tmp, TEST_FOUND)
    for _ in range(2):
        result = grade_as_nobody(unprivileged, set_file, LEAVER, backend.kind)
        assert (result["passed"], result["reasons"]) == (True, []), result["tail"]


# -- the candidate's process group and session are the box's own -----------------------

# Seen from inside its pid namespace, a session or group led by a process outside it has
# id 0: that process would be reached by kill(0, ...) or killpg.
GROUP_HUNT = CORRECT + textwrap.dedent(
    """
    import os, signal
    FOUND = []
    if os.getpgid(0) == 0:
        FOUND.append("in a process group led from outside the box")
    if os.getsid(0) == 0:
        FOUND.append("in a session led from outside the box")
    os.kill(0, signal.SIGCONT)  # the whole group: harmless, and only the box's own
    """
)


def test_no_process_outside_the_box_shares_the_candidates_group(open_tmp, backend) -> None:
    outcome = grade_set(make_set(open_tmp, TEST_FOUND), GROUP_HUNT, backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_no_process_outside_shares_the_group_as_an_unprivileged_grader(
    open_tmp, backend, unprivileged
):
    result = grade_as_nobody(unprivileged, make_set(open_tmp, TEST_FOUND), GROUP_HUNT, backend.kind)
    assert (result["passed"], result["reasons"]) == (True, []), result["tail"]


# A candidate that stops its whole process group once its tests passed: before, this
# stopped the sandbox's own wrapper (a non-root grader's), and the case became a timeout.
STOPPER = CORRECT + textwrap.dedent(
    """
    import atexit, os, signal
    atexit.register(lambda: os.kill(0, signal.SIGSTOP))
    FOUND = []
    """
)


def test_stopping_its_own_group_stops_nothing_of_evalpins(open_tmp, backend, unprivileged):
    # A pass is expected under unshare (30 s: a loaded machine); under bubblewrap the case
    # may stop itself, and 10 s ends that sooner.
    set_file = make_set(open_tmp, TEST_FOUND, timeout=30 if backend.kind == "unshare" else 10)
    result = grade_as_nobody(unprivileged, set_file, STOPPER, backend.kind)
    # Its own processes may stop (bubblewrap's pytest is not the namespace's init), so
    # a timeout is the candidate's own doing; but never a sandbox that cannot end.
    assert result["reasons"] in ([], ["timeout"]), result["tail"]
    if backend.kind == "unshare":  # pytest is pid 1 there: no signal of its own stops it
        assert (result["passed"], result["reasons"]) == (True, []), result["tail"]


# -- no host path of evalpin's own folders in a tail -----------------------------------

PATH_TELLER = CORRECT + textwrap.dedent(
    """
    import re
    lines = [line for line in open("/proc/self/mountinfo") if "evalpin" in line]
    roots = " ".join(line.split()[3] for line in lines)
    layers = " ".join(re.findall(r"lowerdir=([^,]+)", "".join(lines)))
    FOUND = [(roots + " " + layers)[:500]]
    """
)


def test_tails_name_no_host_folder_of_evalpins(open_tmp, backend) -> None:
    outcome = grade_set(make_set(open_tmp, TEST_FOUND), PATH_TELLER, backend)
    assert outcome.reasons == ["tests_failed"]
    assert "<evalpin>" in outcome.tail  # the mount table named some, and they were cut
    assert not re.search(r"evalpin-\d+-", outcome.tail), outcome.tail


@pytest.fixture(params=["unshare", "bwrap"])
def only_backend(
    request: pytest.FixtureRequest, tmp_path: Path, isolations
) -> tuple[dict[str, str], str]:
    """An environment whose PATH holds only this backend (and setpriv), which `run`
    probes and uses, and the backend's name."""
    if isolations[request.param].kind == "none":  # conftest's, probed once
        need(request.param, "the backend is unavailable here")
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in (request.param, "setpriv"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    return {**os.environ, "PATH": str(folder)}, request.param


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_answers_do_not_cross_in_a_real_run(open_tmp, only_backend, jobs) -> None:
    """The same attack through `evalpin run`, two seeds: at --jobs 1 the witness starts
    beside plain pytest; at --jobs 2 another seed's plain pytest runs beside it."""
    make_set(open_tmp, SECRET_TEST.format(value=1 + secrets.randbelow(254)))
    answer = {"case_id": "case", "files": {"solution.py": LOCK_SENDER}, "text": ""}
    (open_tmp / "replay.jsonl").write_text(json.dumps(answer) + "\n")
    args = ["run", "--fixtures", "set.yaml", "--slot", "x=replay:replay.jsonl", "--seeds", "1,2"]
    done = subprocess.run(
        [sys.executable, "-m", "evalpin", *args, "--jobs", jobs, "--out", "run.jsonl"],
        cwd=open_tmp,
        env=only_backend[0],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (open_tmp / "run.jsonl").read_text().splitlines()]
    assert lines[0]["env"]["sandbox"] == only_backend[1]
    cases = [line for line in lines if line["record"] == "case"]
    assert len(cases) == 2
    for case in cases:
        assert case["pass"] is False and case["reasons"] == ["witness:failed"], case
