"""Forging completions, for real: each is a `repair.py` whose `normalize_csv` is wrong
(it returns its input) plus an attack on the grade, the host or the run file. Under
`isolation: process` none may pass, on both namespace backends, and each must leave the
host as it was: plain pytest (which shares the candidate's process) fails it, or, where
the attack fooled plain pytest, the witness (process isolation) disputes it and names
the honest failure. Under `isolation: in-process` the attacks on pytest itself must be
caught as `tampering:KIND`. No mocks: every case is a sandboxed run."""

from __future__ import annotations

import os
import secrets
import socket
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import CodingItem
from evalpin.run.sandbox import Isolation, Outcome, run_item
from tests.capabilities import need_cgroup
from tests.harness import one_item
from tests.procs import surviving

# The attacks on the sandbox itself (host files, sockets, processes, memory) stay on both.
pytestmark = pytest.mark.wire  # the default backend, a parity share on the other: tests/lanes.py

TEST = textwrap.dedent(
    """\
    from repair import normalize_csv


    def test_normalizes():
        assert normalize_csv(" A , B\\nC,D ").splitlines() == ["a,b", "c,d"]


    def test_empty():
        assert normalize_csv("") == ""
    """
)
WRONG = "def normalize_csv(text):\n    return text\n"
RIGHT = textwrap.dedent(
    """\
    def normalize_csv(text):
        rows = [",".join(c.strip().lower() for c in line.split(",")) for line in text.splitlines()]
        return "\\n".join(rows)
    """
)
# The honest failure of WRONG, which must still be what the tail shows.
HONEST = "test_normalizes"

FORGE_REPORT = WRONG + textwrap.dedent(
    """
    import os, sys
    args = list(sys.argv)
    for pid in os.listdir("/proc"):
        try:
            args += open(f"/proc/{pid}/cmdline", "rb").read().decode().split("\\0")
        except Exception:
            pass
    path = args[args.index("--junitxml") + 1]
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="0" '
                'failures="0" skipped="0" tests="2"><testcase classname="test_repair" '
                'name="test_normalizes"/><testcase classname="test_repair" name="test_empty"/>'
                '</testsuite></testsuites>')
    os._exit(0)
    """
)
HOOKWRAPPER = WRONG + textwrap.dedent(
    """
    import gc, sys, pytest
    class Forger:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            report = outcome.get_result()
            if ONLY is None or report.nodeid.split("::")[-1] in ONLY:
                report.outcome, report.longrepr = "passed", None
    ONLY = None
    def _is_config(obj):
        return type(obj).__name__ == "Config" and hasattr(obj, "pluginmanager")
    # the heap first; a config made before the fork server froze its heap is not in
    # gc.get_objects(), so then the callers' frames (the collector holds it)
    found = next((obj for obj in gc.get_objects() if _is_config(obj)), None)
    frame = sys._getframe()
    while found is None and frame is not None:
        for value in list(frame.f_locals.values()):
            for obj in (value, getattr(value, "config", None)):
                if found is None and _is_config(obj):
                    found = obj
        frame = frame.f_back
    found.pluginmanager.register(Forger(), "forger")
    """
)
WRAP_REPORT = WRONG + textwrap.dedent(
    """
    from _pytest.reports import TestReport
    _made = TestReport.from_item_and_call.__func__
    def _forged(cls, item, call):
        report = _made(cls, item, call)
        report.outcome, report.longrepr = "passed", None
        return report
    TestReport.from_item_and_call = classmethod(_forged)
    """
)
ALWAYS_EQUAL = textwrap.dedent(
    """
    class Equal(str):
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__
    class Lines(str):
        def splitlines(self, *args):
            return [Equal("x"), Equal("y")]
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__
    def normalize_csv(text):
        return Lines(text)
    """
)
ALWAYS_EQUAL_OBJECT = textwrap.dedent(
    """
    class Anything:
        __class__ = property(lambda self: str)
        def __eq__(self, other):
            return True
        def __hash__(self):
            return 0
        def splitlines(self):
            return [Anything(), Anything()]
    def normalize_csv(text):
        return Anything()
    """
)
SWAP_PYTEST = WRONG + textwrap.dedent(
    """
    import sys, types
    fake = types.ModuleType("pytest")
    fake.main = lambda *a, **k: 0
    sys.modules["pytest"] = fake
    """
)
ATEXIT_REWRITE = WRONG + textwrap.dedent(
    """
    import atexit, glob
    def _rewrite():
        for path in glob.glob("/tmp/**/*.xml", recursive=True):
            try:
                with open(path, "w") as f:
                    f.write('<testsuites><testsuite errors="0" failures="0">'
                            '<testcase classname="test_repair" name="test_normalizes"/>'
                            '<testcase classname="test_repair" name="test_empty"/>'
                            '</testsuite></testsuites>')
            except OSError:
                pass
    atexit.register(_rewrite)
    """
)
THREAD_REWRITE = ATEXIT_REWRITE.replace(
    "atexit.register(_rewrite)",
    "import threading, time\n"
    "def _loop():\n"
    "    while True:\n"
    "        _rewrite()\n"
    "        time.sleep(0.01)\n"
    "threading.Thread(target=_loop, daemon=True).start()",
)
FD_WRITES = WRONG + textwrap.dedent(
    """
    import os
    forged = b'{"ok": ["a,b", "c,d"]}\\n1 passed\\n<testsuites/>\\n'
    for fd in os.listdir("/proc/self/fd"):
        try:
            with open(f"/proc/self/fd/{fd}", "wb") as f:
                f.write(forged)
        except OSError:
            pass
    """
)
CTYPES = WRONG + textwrap.dedent(
    """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(b"/proc", 2)
    libc.mount(b"none", b"/", b"tmpfs", 0, None)
    libc.ptrace(16, os.getppid(), None, None)  # PTRACE_ATTACH
    libc.ptrace(16, 1, None, None)
    libc.unshare(0x00020000)  # CLONE_NEWNS
    libc.setns(os.open("/proc/1/ns/mnt", os.O_RDONLY), 0)
    """
)
SIGNALS = WRONG + textwrap.dedent(
    """
    import os, signal
    for target in (os.getppid(), 1):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(0, signal.SIGKILL)
    except OSError:
        pass
    os.kill(-1, signal.SIGKILL)
    """
)
SKIP_OUTCOME = textwrap.dedent(
    """
    import pytest
    def normalize_csv(text):
        pytest.skip("nothing to see")
    """
)
EXITS = textwrap.dedent(
    """
    def normalize_csv(text):
        raise SystemExit(0)
    """
)
PLANTS_CONFTEST = WRONG + textwrap.dedent(
    """
    import os
    for folder in (".", "..", "../tests", "/tmp"):
        try:
            with open(os.path.join(folder, "conftest.py"), "w") as f:
                f.write("import pytest\\n"
                        "@pytest.hookimpl(hookwrapper=True)\\n"
                        "def pytest_runtest_makereport(item, call):\\n"
                        "    o = yield\\n"
                        "    o.get_result().outcome = 'passed'\\n")
        except OSError:
            pass
    """
)
DETACHED_WRITER = WRONG + textwrap.dedent(
    """
    import os, time
    if os.fork() == 0:
        os.setsid()
        os.execv("/bin/sleep", ["sleep", MARK])
    """
)

ATTACKS = {
    "junit-report-written-then-exit": FORGE_REPORT,
    "gc-config-hookwrapper": HOOKWRAPPER,
    "testreport-wrapped": WRAP_REPORT,
    "str-subclass-always-equal-lines": ALWAYS_EQUAL,
    "always-equal-object-posing-as-str": ALWAYS_EQUAL_OBJECT,
    "sys-modules-pytest-swapped": SWAP_PYTEST,
    "atexit-rewrites-reports": ATEXIT_REWRITE,
    "thread-rewrites-reports": THREAD_REWRITE,
    "writes-to-proc-self-fd": FD_WRITES,
    "ctypes-mount-ptrace-setns": CTYPES,
    "signals-to-parent-and-all": SIGNALS,
    "raises-pytest-skip": SKIP_OUTCOME,
    "raises-system-exit": EXITS,
    "plants-conftest": PLANTS_CONFTEST,
}
# The attacks that act on the pytest process: in-process, each must be seen as tampering
# (this kind at least; several checks may see one attack).
IN_PROCESS = {
    "junit-report-written-then-exit": "tampering:report",
    "gc-config-hookwrapper": "tampering:pytest",
    "testreport-wrapped": "tampering:pytest",
    "sys-modules-pytest-swapped": "tampering:pytest",
    "atexit-rewrites-reports": "tampering:pytest",
    "thread-rewrites-reports": "tampering:pytest",
}


@pytest.fixture
def item(tmp_path: Path) -> Callable[..., CodingItem]:
    def make(test: str = TEST, **extra: object) -> CodingItem:
        return one_item(
            tmp_path / f"set-{secrets.token_hex(3)}",
            "test_repair.py",
            test,
            "repair.py",
            item_id="normalize",
            dataset="forge",
            **{"timeout_s": 30, **extra},  # generous: a pass expected on a loaded machine
        )

    return make


@pytest.fixture
def grade(tmp_path: Path) -> Callable[..., Outcome]:
    parent = tmp_path / "work"
    parent.mkdir()

    def go(item: CodingItem, code: str, iso: Isolation, **kwargs: object) -> Outcome:
        outcome = run_item(
            item, {"repair.py": code}, workdir_parent=parent, isolation=iso, **kwargs
        )
        assert list(parent.iterdir()) == [], "the work directory was not removed"
        return outcome

    return go


# -- the honest baseline ---------------------------------------------------------------


@pytest.mark.parametrize("loader", ["import", "spec_from_file_location"])
def test_a_right_answer_passes_and_a_wrong_one_fails(item, grade, backend, loader) -> None:
    test = TEST
    if loader != "import":
        test = TEST.replace(
            "from repair import normalize_csv\n",
            "import importlib.util\nfrom pathlib import Path\n"
            'spec = importlib.util.spec_from_file_location("repair", Path("repair.py"))\n'
            "repair = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(repair)\n"
            "normalize_csv = repair.normalize_csv\n",
        )
    assert grade(item(test), RIGHT, backend).reasons == []
    wrong = grade(item(test), WRONG, backend)
    assert (wrong.passed, wrong.reasons) == (False, ["tests_failed"])
    assert HONEST in wrong.tail


def test_the_candidate_never_runs_in_the_witness_pytest_process(item, grade, backend) -> None:
    """Plain pytest imports the candidate (so this test fails there); the witness, whose
    pytest decides the pass, never does (so it passes there): both graded, as in check."""
    code = RIGHT + "import sys\nIN_PYTEST = '_pytest.main' in sys.modules\n"
    test = TEST + "\n\ndef test_where():\n    import repair\n    assert repair.IN_PYTEST is False\n"
    outcome = grade(item(test), code, backend, always_witness=True)
    assert outcome.reasons == ["tampering:witness", "tests_failed"], outcome.tail
    assert outcome.failed_tests == ["test_where"]


# -- every attack, on both backends ----------------------------------------------------


# The attacks that fool plain pytest (they share its process): the witness disputes each.
FOOLS_PLAIN_PYTEST = {
    "always-equal-object-posing-as-str",
    "gc-config-hookwrapper",
    "junit-report-written-then-exit",
    "str-subclass-always-equal-lines",
    "testreport-wrapped",
}


@pytest.mark.both_backends
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_forging_completion_never_passes(item, grade, backend, attack) -> None:
    outcome = grade(item(), ATTACKS[attack], backend)
    assert outcome.passed is False
    if attack in FOOLS_PLAIN_PYTEST:  # not judged, and the witness saw the honest failure
        # `compared`: the witness's failing test came after a comparison the candidate's
        # own rule would have answered (an always-equal object), which it never believes
        assert outcome.reasons in (["witness:failed"], ["witness:compared"]), outcome.witness_tail
        assert HONEST in outcome.witness_failed_tests
    else:  # plain pytest's own fail (an attack that stops its sandbox's init: a timeout)
        assert outcome.reasons in (["tests_failed"], ["timeout"]), outcome.tail


@pytest.mark.parametrize("attack", sorted(IN_PROCESS))
def test_an_attack_on_pytest_is_tampering_in_process(item, grade, backend, attack) -> None:
    outcome = grade(item(isolation="in-process"), ATTACKS[attack], backend)
    assert outcome.passed is False
    assert IN_PROCESS[attack] in outcome.reasons, outcome.tail
    assert all(r.startswith("tampering:") for r in outcome.reasons), outcome.reasons


@pytest.mark.both_backends
def test_reading_the_test_file_does_not_reveal_the_canaries(item, grade, backend) -> None:
    """The forger learns every test name from the files it can read, and forges only
    those: the canaries still fail it (and its hook registration is seen)."""
    code = HOOKWRAPPER.replace(
        "ONLY = None",
        "import glob, re\n"
        "ONLY = set()\n"
        "for path in glob.glob('/tmp/**/*.py', recursive=True):\n"
        "    try:\n"
        "        ONLY |= set(re.findall(r'def (test_\\w+)', open(path).read()))\n"
        "    except OSError:\n"
        "        pass\n"
        "ONLY.discard('test_empty')\n"
        "ONLY.discard('test_normalizes')\n"
        "ONLY |= {'test_normalizes'}",
    )
    outcome = grade(item(isolation="in-process"), code, backend)
    assert outcome.passed is False
    assert "tampering:pytest" in outcome.reasons
    assert "tampering:canary" not in outcome.reasons  # the canaries were not forged


def test_a_rewritten_test_file_is_tampering(item, grade, backend) -> None:
    code = WRONG + "open('test_repair.py', 'a').write('\\n# edited\\n')\n"
    outcome = grade(item(isolation="in-process"), code, backend)
    assert "tampering:test_file" in outcome.reasons


def test_an_honest_in_process_item_passes(item, grade, backend) -> None:
    outcome = grade(item(isolation="in-process"), RIGHT, backend)
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


# A candidate that reads the expected value out of its caller's frames: under plain
# pytest it passes (the test's locals are up the stack); across the wire the stack above
# the candidate is the worker's, and the test has nothing to give away.
EXPECTED_TEST = """\
from repair import normalize_csv


def test_normalizes():
    expected = "a,b"
    assert normalize_csv(" A , B ") == expected
"""
STEAL_EXPECTED = """\
import sys


def normalize_csv(text):
    frame = sys._getframe(1)
    while frame is not None:
        if "expected" in frame.f_locals:
            return frame.f_locals["expected"]
        frame = frame.f_back
    return text
"""


def test_reading_the_callers_frames_finds_no_expected_value(item, grade, backend) -> None:
    outcome = grade(item(EXPECTED_TEST), STEAL_EXPECTED, backend)
    assert (outcome.passed, outcome.reasons) == (False, ["witness:failed"]), outcome.tail


# pytest's own `tmp_path` registers an atexit cleanup the first time a test asks for it:
# that is pytest at work, not the candidate, and no reason to call the run tampered.
TMP_PATH_TEST = """\
from repair import normalize_csv


def test_writes_what_it_normalized(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text(normalize_csv("A , b"))
    assert out.read_text() == "a,b"
"""


def test_a_test_using_tmp_path_is_judged_in_process(item, grade, backend) -> None:
    right = grade(item(TMP_PATH_TEST, isolation="in-process"), RIGHT, backend)
    assert (right.passed, right.reasons) == (True, []), right.tail
    wrong = grade(item(TMP_PATH_TEST, isolation="in-process"), WRONG, backend)
    assert (wrong.passed, wrong.reasons) == (False, ["tests_failed"]), wrong.tail


CALLBACK_TEST = """\
from repair import apply


class Doubler:
    def __call__(self, x):
        return x * 2


def test_apply():
    assert apply(Doubler(), 3) == 7
"""
# The candidate is handed the test's object and tries to reach through it into pytest:
# if any reflection or write succeeded it answers 7 (the test's expectation, forged).
REFLECTION = textwrap.dedent(
    """
    def _reach(fn):
        # the stand-in's own slots, whatever the wire names them
        held = []
        for klass in type(fn).__mro__:
            for name in getattr(klass, "__slots__", ()):
                try:
                    held.append(object.__getattribute__(fn, name))
                except Exception:
                    pass
        peer = next(v for v in held if hasattr(v, "request"))
        return peer, next(v for v in held if type(v) is int)


    def apply(fn, x):
        peer, ident = _reach(fn)
        reached = []
        attempts = [
            ("getattr", {"name": "__globals__"}),
            ("getattr", {"name": "__class__"}),
            ("getattr", {"name": "__call__"}),
            ("setattr", {"name": "__call__", "value": 7}),
            ("delattr", {"name": "__call__"}),
            ("op", {"name": "setitem", "args": [0, 7]}),
            ("import", {"module": "pytest"}),
        ]
        for op, fields in attempts:
            try:
                peer.request(op, obj=ident, **fields)
                reached.append(op)
            except Exception:
                pass
        return 7 if reached else fn(x)
    """
)


@pytest.mark.parametrize("code", [REFLECTION], ids=["reflection-through-a-callback"])
def test_the_tests_objects_can_be_used_but_not_reached_through(item, grade, backend, code) -> None:
    outcome = grade(item(CALLBACK_TEST), code, backend, always_witness=True)
    assert outcome.reasons == ["tests_failed"], outcome.tail  # no peer in plain pytest
    assert "assert 6 == 7" in outcome.witness_tail  # none reached through the wire


# -- host data -------------------------------------------------------------------------


@pytest.mark.both_backends
def test_host_files_are_not_there_to_read(item, grade, backend, tmp_path: Path) -> None:
    home = tmp_path / "home-of-someone"
    home.mkdir()
    marker = "evalpin-host-secret-" + secrets.token_hex(6)
    (home / ".netrc").write_text(marker)
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        def normalize_csv(text):
            found = []
            for path in ({str(home / ".netrc")!r}, {str(fixtures)!r}, {__file__!r}):
                try:
                    found.append(Path(path).read_text())
                except OSError as exc:
                    found.append(type(exc).__name__)
            raise RuntimeError(repr(found))
        """
    )
    outcome = grade(item(), code, backend)
    assert outcome.reasons == ["tests_failed"]
    assert marker not in outcome.tail
    assert "FileNotFoundError" in outcome.tail


@pytest.mark.both_backends
def test_the_root_home_listing_shows_only_the_interpreter(item, grade, backend) -> None:
    code = (
        "import os\ndef normalize_csv(text):\n    raise RuntimeError(repr(os.listdir('/root')))\n"
    )
    outcome = grade(item(), code, backend)
    assert outcome.reasons == ["tests_failed"]
    interpreter = {part for p in (sys.prefix, sys.base_prefix) for part in Path(p).parts}
    hidden = [name for name in os.listdir("/root") if name not in interpreter]
    assert hidden, "nothing in /root to hide on this machine"
    assert [name for name in hidden if repr(name) in outcome.tail] == []


@pytest.mark.both_backends
def test_host_unix_sockets_are_unreachable(item, grade, backend, tmp_path: Path) -> None:
    path = tmp_path / "service.sock"
    abstract = "\0evalpin-" + secrets.token_hex(6)
    with socket.socket(socket.AF_UNIX) as by_path, socket.socket(socket.AF_UNIX) as by_name:
        by_path.bind(str(path))
        by_name.bind(abstract)
        for server in (by_path, by_name):
            server.listen()
            server.setblocking(False)
        code = RIGHT + textwrap.dedent(
            f"""
            import socket
            for address in ({str(path)!r}, {abstract!r}):
                with socket.socket(socket.AF_UNIX) as s:
                    try:
                        s.connect(address)
                    except OSError:
                        continue
                    raise SystemExit("reached the host service")
            """
        )
        outcome = grade(item(), code, backend)
        for server in (by_path, by_name):
            with pytest.raises(BlockingIOError):
                server.accept()
    assert (outcome.passed, outcome.reasons) == (True, []), outcome.tail


def test_a_secret_printed_by_model_code_is_scrubbed_from_the_tail(
    item, grade, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without namespaces (so the value is reachable at all, through a file the caller
    left readable) the second line still holds."""
    value = "sk-evalpin-" + secrets.token_hex(12)
    monkeypatch.setenv("EVALPIN_TEST_API_KEY", value)
    bare = Isolation("none", "off-unenforced", "test", pids_cgroup=False)
    code = f"def normalize_csv(text):\n    raise RuntimeError({value!r})\n"
    outcome = grade(item(), code, bare)
    assert value not in outcome.tail
    assert "[redacted]" in outcome.tail


# -- processes and memory --------------------------------------------------------------


@pytest.mark.both_backends
def test_a_forked_survivor_is_killed(item, grade, backend) -> None:
    mark = f"{900 + secrets.randbelow(99)}.{secrets.randbelow(10**6):06d}"
    try:
        outcome = grade(item(), DETACHED_WRITER.replace("MARK", repr(mark)), backend)
        assert outcome.reasons == ["tests_failed"]
        assert surviving(mark) == []
    finally:
        for pid in surviving(mark):
            os.kill(pid, 9)


@pytest.mark.both_backends
def test_a_memory_bomb_across_processes_trips_the_memory_cap(item, grade, backend) -> None:
    need_cgroup(backend.pids_cgroup)
    code = WRONG + textwrap.dedent(
        """
        import os, time
        for _ in range(12):  # 12 x 32 MiB against a 128 MiB cap, each under RLIMIT_AS
            if os.fork() == 0:
                block = b"x" * (32 * 1024**2)
                time.sleep(30)
                os._exit(0)
        os.wait()  # until the cap kills one (or this process): without it, a timeout
        """
    )
    outcome = grade(item(memory_mb=128, timeout_s=30), code, backend)
    assert (outcome.passed, outcome.reasons) == (False, ["sandbox_error:memory"]), outcome.tail
    assert "memory cap of 128 MiB" in outcome.tail
