"""Hold under attack (issue 40): a hostile candidate, on both sandbox backends, graded by
evalpin running as root (as CI does) and, where the test can drop to it, as an
unprivileged user. Every attack is real model code in a real sandbox.

Nothing here changes the host: a kernel setting is only ever opened for writing and
closed again (a sysctl is changed by a write, never by an open), a mount or a new user
namespace is tried only in a mount namespace other than the test's own, and every file
the candidate writes is bounded so that a regression cannot fill the host's disk.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import CodingItem
from evalpin.core.instrument.graders.coding import MAX_PROCESSES
from evalpin.run.sandbox import Outcome, probe_isolation, run_item
from evalpin.run.sandbox.box import SANDBOX_UIDS, remove_tree, scratch
from evalpin.run.sandbox.execute import MAX_OPEN_FILES
from tests.capabilities import lacking, need, need_root
from tests.harness import BARE, CORRECT, GRADER, TEST_ADD, TEST_FOUND, one_item

# Host settings a process that is root somewhere (and only root) may write; each one's
# real effect is described where it matters (core_pattern: a program the kernel runs as
# root on every crash).
HOST_SETTINGS = [
    "/proc/sys/vm/swappiness",
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/modprobe",
    "/proc/sys/fs/file-max",
    "/proc/sys/kernel/sysrq",
    "/proc/sysrq-trigger",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/fs/cgroup/cgroup.procs",
]
# The candidate looks for every way it could touch the host as root; FOUND names each.
ROOT_HUNT = CORRECT + textwrap.dedent(
    """
    import ctypes, os
    FOUND = []
    try:
        os.setuid(0)  # root of its user namespace, if it has one; host root never
    except OSError:
        pass
    uid = os.geteuid()
    for line in open("/proc/self/uid_map") if ROOT_GRADER else ():
        # Its uid as the parent namespace sees it: with a root grader that is the host
        # (bubblewrap run by a user nests two user namespaces: the parent is its own).
        inside, outside, count = (int(x) for x in line.split())
        if inside <= uid < inside + count and outside + uid - inside == 0:
            FOUND.append("runs as host root")
    if os.stat("/proc/self/ns/mnt").st_ino == HOST_MOUNT_NS:
        FOUND.append("in the host's mount namespace")
    for path in HOST_SETTINGS:
        try:
            fd = os.open(path, os.O_WRONLY)  # an open changes no setting; nothing is written
        except OSError:
            continue
        os.close(fd)
        FOUND.append("writable: " + path)
    for line in open("/proc/self/mountinfo"):
        fields = line.split()
        if fields[4] in ("/proc/sys", "/sys") and "ro" not in fields[5].split(","):
            FOUND.append("mounted read-write: " + fields[4])
    if not any(l.split()[4] == "/proc/sys" for l in open("/proc/self/mountinfo")):
        FOUND.append("/proc/sys not covered")
    pid = os.fork()
    if pid == 0:  # a child tries, and ends at once whatever it got
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            os._exit(0)
        except OSError:
            os._exit(1)
    if os.waitpid(pid, 0)[1] == 0:
        FOUND.append("real-time priority")
    try:
        os.nice(-1)
        FOUND.append("raised its priority")
    except OSError:
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    if os.stat("/proc/self/ns/mnt").st_ino != HOST_MOUNT_NS:
        if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
            FOUND.append("mounted a tmpfs")
        pid = os.fork()
        if pid == 0:  # a child tries: the test's own process stays as it is
            os._exit(0 if libc.unshare(0x10000000) == 0 else 1)  # CLONE_NEWUSER
        if os.waitpid(pid, 0)[1] == 0:
            FOUND.append("made a user namespace")
    """
).replace("HOST_SETTINGS", repr(HOST_SETTINGS))


def hunt_code(root_grader: bool = True) -> str:
    code = ROOT_HUNT.replace("HOST_MOUNT_NS", str(os.stat("/proc/self/ns/mnt").st_ino))
    return code.replace("ROOT_GRADER", str(root_grader))


@pytest.fixture
def make_item(open_tmp: Path) -> Callable[..., CodingItem]:
    """A one-item coding set in a folder of its own (readable by anyone: the set may be
    graded by an unprivileged user)."""

    def make(test_source: str, *, isolation: str = "process", timeout: float = 30) -> CodingItem:
        folder = Path(tempfile.mkdtemp(dir=open_tmp))
        folder.chmod(0o755)
        return one_item(
            folder,
            "test_solution.py",
            test_source,
            "solution.py",
            item_id="case",
            dataset="attack-tests",
            timeout_s=timeout,
            isolation=isolation,
        )

    return make


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Callable[..., Outcome]]:
    """run_item under a per-test work folder; afterwards nothing may be left there."""
    parent = tmp_path / "workdirs"
    parent.mkdir()

    def go(item: CodingItem, solution: str, **kwargs: object) -> Outcome:
        outcome = run_item(item, {"solution.py": solution}, workdir_parent=parent, **kwargs)
        assert list(parent.iterdir()) == [], "the scratch folder was not removed"
        return outcome

    yield go


# -- 1. model code is never host root --------------------------------------------------


@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_root_graders_sandbox_holds_no_host_root(make_item, run, backend, isolation) -> None:
    need_root()  # the unprivileged grader's half is the next test
    outcome = run(make_item(TEST_FOUND, isolation=isolation), hunt_code(), isolation=backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_the_sandbox_runs_as_a_uid_of_its_own(make_item, run, backend) -> None:
    """A root grader's sandbox is a host uid no account has, a new one for each case."""
    need_root()
    code = (
        CORRECT + "import os\nFOUND = [f'ids={os.getresuid()}{os.getresgid()}{os.getgroups()}']\n"
    )
    seen = set()
    for _ in range(2):
        outcome = run(make_item(TEST_FOUND), code, isolation=backend)
        ids = re.search(r"ids=\((\d+), (\d+), (\d+)\)\((\d+), (\d+), (\d+)\)\[\]", outcome.tail)
        assert ids, outcome.tail
        assert len(set(ids.groups())) == 1 and int(ids[1]) in SANDBOX_UIDS
        seen.add(ids[1])
    assert len(seen) == 2


def test_an_unprivileged_graders_sandbox_holds_no_host_root(
    make_item, open_tmp, backend, unprivileged
) -> None:
    """The same hunt, evalpin itself run by a user who is not root (`nobody` when the
    suite is root): its user namespace maps to that user, and nothing in the box is
    writable that the host's root alone may write."""
    item = make_item(TEST_FOUND)
    folder = item.test_file.parent
    (folder / "hunt.py").write_text(hunt_code(root_grader=False))  # nobody's uid, by design
    work = Path(tempfile.mkdtemp(dir=open_tmp))
    os.chown(work, unprivileged.uid, unprivileged.uid)
    argv = ["-I", "-c", GRADER, str(folder / "set.yaml"), backend.kind, str(folder / "hunt.py")]
    command = unprivileged.argv(*argv, str(work))
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["kind"] == backend.kind, result["why"]
    assert (result["passed"], result["reasons"]) == (True, []), result["tail"]
    assert list(work.iterdir()) == []


# The grader keeps a secret in its session keyring (in a keyring of its own process,
# joined here: the test's own is not touched); the candidate looks for it.
KEYRING_GRADER = """
import ctypes, json, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
keyctl, add_key = (250, 248) if platform.machine() == "x86_64" else (219, 217)
if libc.syscall(keyctl, 1, b"evalpin-test-session") < 0:
    print(json.dumps({"skip": "no kernel keyrings here"}))
    sys.exit(0)
secret = b"s3cret-in-the-graders-keyring"
assert libc.syscall(add_key, b"user", b"evalpin-test-key", secret, len(secret), -3) > 0
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import probe_isolation, run_item
item = load_fixtures(sys.argv[1]).cases[0]
outcome = run_item(item, {"solution.py": sys.argv[3]}, isolation=probe_isolation((sys.argv[2],)))
print(json.dumps({"passed": outcome.passed, "reasons": outcome.reasons, "tail": outcome.tail}))
"""
KEY_HUNT = CORRECT + textwrap.dedent(
    """
    import ctypes, platform
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl = 250 if platform.machine() == "x86_64" else 219
    FOUND = []
    key = libc.syscall(keyctl, 10, -3, b"user", b"evalpin-test-key", 0)  # SEARCH session
    if key > 0:
        buf = ctypes.create_string_buffer(256)
        size = libc.syscall(keyctl, 11, key, buf, 256)  # READ
        FOUND.append(f"read the grader's key: {buf.raw[:max(size, 0)]!r}")
    """
)


@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_the_graders_keyring_is_out_of_reach(make_item, backend, isolation) -> None:
    item = make_item(TEST_FOUND, isolation=isolation)
    argv = [sys.executable, "-c", KEYRING_GRADER, str(item.test_file.parent / "set.yaml")]
    done = subprocess.run(
        [*argv, backend.kind, KEY_HUNT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    if "skip" in result:
        lacking("keyrings", result["skip"])
    assert (result["passed"], result["reasons"]) == (True, []), result["tail"]


# -- 2. cleanup never fails on what the candidate made ---------------------------------

LITTER = CORRECT + textwrap.dedent(
    """
    import os, socket
    top = os.getcwd()
    os.mkdir("deep")
    os.chdir("deep")
    for _ in range(2500):          # deeper than the recursion limit (1,000), and
                                   # "d/" x 2,500 is longer than PATH_MAX (4,096)
        os.mkdir("d")
        os.chdir("d")
    open("leaf", "w").close()
    os.chmod(".", 0)               # its innermost folder unreadable
    os.chdir(top)
    os.mkdir("locked")
    open("locked/inside", "w").close()
    os.chmod("locked", 0)
    open("odd \\n name \\udcff", "w").close()
    os.mkfifo("fifo")
    socket.socket(socket.AF_UNIX).bind("sock")  # relative: a long work path may not fit
    os.symlink(OUTSIDE, "escape")      # a link out of the box: never followed
    os.symlink("/", "root")
    for i in range(2000):
        open(f"many-{i}", "w").close()
    """
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the box that a link from it points at: it must survive."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep").write_text("not the candidate's")
    return folder


@pytest.mark.parametrize("where", ["unshare", "bwrap", "none"])
def test_what_the_candidate_leaves_is_removed_and_the_case_graded(
    make_item, run, outside: Path, where: str
) -> None:
    iso = BARE if where == "none" else probe_isolation((where,))
    if iso.kind != where:
        need(where, iso.why)
    code = LITTER.replace("OUTSIDE", repr(str(outside)))
    outcome = run(make_item(TEST_ADD, isolation="in-process"), code, isolation=iso)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail
    assert (outside / "keep").read_text() == "not the candidate's"


def test_remove_tree_takes_any_depth_mode_and_kind_and_follows_no_link(tmp_path: Path) -> None:
    top = tmp_path / "box"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(2500):  # past the recursion limit and PATH_MAX, as LITTER
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.mkfifo("fifo", dir_fd=fd)
        os.symlink(str(outside), "out", dir_fd=fd)
        os.fchmod(fd, 0)
    finally:
        os.close(fd)
    (top / "link-to-outside").symlink_to(outside)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(top / "sock"))
    (top / "shut").mkdir(mode=0)
    wide = top / "wide"
    wide.mkdir()
    for i in range(3000):
        (wide / f"{i}\udcff").mkdir()
    remove_tree(top)
    assert not top.exists()
    assert (outside / "keep").read_text() == "x"
    remove_tree(top)  # gone already: nothing to do, nothing raised
    link = tmp_path / "link"
    link.symlink_to(outside)
    remove_tree(link)  # a link where the folder was: the link goes, never its target
    assert not link.exists() and (outside / "keep").exists()


def test_killed_graders_scratch_is_removed_and_live_ones_kept(tmp_path: Path) -> None:
    """The next grader removes the scratch of one that was SIGKILLed; it never touches
    a live grader's, nor folders it did not make."""
    parent = tmp_path / "work"
    parent.mkdir()
    code = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from evalpin.run.sandbox.box import scratch
        with scratch(Path({str(parent)!r}), False, 64, namespaces=False) as box:
            os.chdir(box.folder("candidate"))
            for _ in range(3000):  # what a candidate left, as deep as recursion is not
                os.mkdir("d")
                os.chdir("d")
            os.chdir("/")
            print(box.root, flush=True)
            sys.stdin.read()
        """
    )
    killed = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    live = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        dead_root = Path(killed.stdout.readline().strip())
        live_root = Path(live.stdout.readline().strip())
        assert dead_root.parent == live_root.parent == parent
        killed.kill()
        killed.wait()
        old_style = parent / "evalpin-abc123xy"  # an older evalpin's: no owner in the name
        old_style.mkdir()
        unlocked = parent / f"evalpin-{live.pid}-unlocked"  # a live pid: never touched
        unlocked.mkdir()
        from evalpin.run.sandbox import box as box_module

        box_module._reap_dead_scratch.cache_clear()
        with scratch(parent, False, 64, namespaces=False):
            pass
        assert not dead_root.exists()
        assert live_root.exists() and old_style.exists() and unlocked.exists()
    finally:
        for proc in (killed, live):
            proc.kill()
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()
        remove_tree(parent)  # the live one's, now killed too: deeper than pytest removes


# -- 3. a disk cap per case --------------------------------------------------------------

# Writes up to 400 MiB (bounded: a regression must not fill the host's disk) in 8 MiB
# files, into its own folder or /tmp, until the first refusal.
FILL = CORRECT + textwrap.dedent(
    """
    import os
    written = 0
    try:
        for i in range(50):
            with open(os.path.join(WHERE, f"fill-{i}"), "wb") as f:
                f.write(b"x" * (8 * 1024 * 1024))
            written += 8
    except OSError:
        pass
    """
)


@pytest.mark.parametrize("where", ["os.getcwd()", "'/tmp'"], ids=["work-folder", "tmp"])
@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_a_case_that_fills_its_disk_cap_is_a_disk_error(
    make_item, run, backend, where: str, isolation: str
) -> None:
    test = "import solution\n\ndef test_wrote_it_all():\n    assert solution.written == 400\n"
    outcome = run(
        make_item(test, isolation=isolation), FILL.replace("WHERE", where), isolation=backend
    )
    assert outcome.reasons == ["sandbox_error:disk"], outcome.tail
    assert "disk cap reached" in outcome.tail
    assert outcome.passed is False


def test_a_candidate_that_hits_the_cap_and_cleans_up_is_graded_as_usual(
    make_item, run, backend
) -> None:
    code = FILL.replace("WHERE", "os.getcwd()") + textwrap.dedent(
        """
        for name in os.listdir("."):
            if name.startswith("fill-"):
                os.unlink(name)
        """
    )
    test = "import solution\n\ndef test_stopped():\n    assert 100 < solution.written < 400\n"
    outcome = run(make_item(test), code, isolation=backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


# -- 4. open files per case ------------------------------------------------------------


def test_open_files_are_capped_per_process(make_item, run, backend) -> None:
    code = CORRECT + textwrap.dedent(
        """
        import os, resource
        FOUND = []
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard > CAP:
            FOUND.append(f"hard limit {hard}")
        held = []
        try:
            for _ in range(5000):
                held.append(os.open("/dev/null", os.O_RDONLY))
        except OSError:
            pass
        if len(held) >= CAP:
            FOUND.append(f"opened {len(held)}")
        for fd in held:  # plain pytest runs in this process: leave it its own files
            os.close(fd)
        """
    ).replace("CAP", str(MAX_OPEN_FILES))
    outcome = run(make_item(TEST_FOUND), code, isolation=backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_the_whole_tree_stays_far_below_the_hosts_file_table() -> None:
    file_max = int(Path("/proc/sys/fs/file-max").read_text())
    assert file_max > MAX_PROCESSES * MAX_OPEN_FILES * 10


def test_a_root_graders_fork_bomb_is_capped_without_a_cgroup(make_item, run, backend) -> None:
    """Without a pids cgroup the per-uid process limit is the cap, and it holds for a
    root grader too: the sandbox's uid is not root, so it is not exempt."""
    need_root()  # a user's own limit always held
    code = CORRECT + textwrap.dedent(
        """
        import os, time
        FORKED = 0
        try:
            while FORKED < 600:  # bounded, in case the cap is missing
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                FORKED += 1
        except OSError:
            pass
        """
    )
    test = "import solution\n\ndef test_count():\n    assert solution.FORKED < 0, solution.FORKED\n"
    bare = dataclasses.replace(backend, pids_cgroup=False)
    outcome = run(make_item(test), code, isolation=bare)
    forked = int(re.search(r"AssertionError: (\d+)", outcome.tail)[1])
    assert 0 < forked < MAX_PROCESSES


# -- 5. pytest's own files are not the candidate's to fill -----------------------------

LOUD_TEST = textwrap.dedent(
    """
    from solution import add

    def test_loud():
        print("y" * (70 * 1024 * 1024))  # past the candidate's 64 MiB file-size cap
        assert add(2, 3) == 5
    """
)


@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_a_test_printing_past_64_mib_passes(make_item, run, backend, isolation) -> None:
    outcome = run(make_item(LOUD_TEST, isolation=isolation), CORRECT, isolation=backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail[-400:]


def test_a_loud_failing_test_fails_for_its_own_reason_and_says_where_output_was_cut(
    make_item, run, backend
) -> None:
    outcome = run(make_item(LOUD_TEST), CORRECT.replace("a + b", "a - b"), isolation=backend)
    assert outcome.reasons == ["tests_failed"], outcome.tail[-400:]
    assert outcome.failed_tests == ["test_loud"]
    assert "[evalpin] output past 16 MiB cut here" in outcome.tail
    assert "test_loud - assert -1 == 5" in outcome.tail  # its own reason, not EFBIG


def test_the_candidate_printing_past_64_mib_in_process_passes(make_item, run, backend) -> None:
    code = CORRECT.replace("return", "print('z' * (70 * 1024 * 1024))\n    return")
    outcome = run(make_item(TEST_ADD, isolation="in-process"), code, isolation=backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail[-400:]


# -- the backends' own wiring ------------------------------------------------------------

# Runs the launcher in a mount namespace the test made, telling it that namespace is
# the grader's: it must refuse before its first mount. (Were the check gone, the mounts
# would land in the test's namespace, never the host's.)
IN_A_TEST_NAMESPACE = """
import json, os, sys
config = json.loads(sys.argv[2])
config["host_mount_ns"] = os.stat("/proc/self/ns/mnt").st_ino
os.execv(sys.executable, [sys.executable, "-I", "-S", "-c", sys.argv[1], json.dumps(config)])
"""


def test_the_launcher_never_mounts_in_the_graders_mount_namespace(tmp_path: Path) -> None:
    from evalpin.run.sandbox.launcher import LAUNCHER
    from evalpin.run.sandbox.mounts import Spec, plan

    need_root()
    if shutil.which("unshare") is None:
        need("unshare", "for a mount namespace of the test's own")
    newroot = tmp_path / "root"
    newroot.mkdir()
    spec = Spec([sys.executable], {}, tmp_path, rw=[tmp_path])
    ready_r, ready_w = os.pipe()
    config = {
        "inline": None,
        "limits": {},
        "newroot": str(newroot),
        "plan": plan(spec),
        "host_mount_ns": 0,
        "hand_back": [],
        "hand_back_fd": None,
        "drop": True,
        "uid": None,
        "privileged": True,
        "cwd": str(tmp_path),
        "ready_fd": ready_w,
    }
    argv = ["unshare", "--mount", "--propagation", "private", sys.executable, "-I", "-S"]
    argv += ["-c", IN_A_TEST_NAMESPACE, LAUNCHER, json.dumps(config), "/bin/true"]
    done = subprocess.run(argv, capture_output=True, text=True, pass_fds=(ready_w,), timeout=30)
    os.close(ready_w)
    with os.fdopen(ready_r, "rb") as ready:
        assert ready.read() == b""
    assert done.returncode == 70
    assert "mounts failed: in the grader's own mount namespace" in done.stderr
    assert list(newroot.iterdir()) == []
