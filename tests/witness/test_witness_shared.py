"""The witness's environment is plain pytest's (issue 48): one filesystem for its two
processes (the work folder, the tests' temporary folders, /tmp, /dev/shm, the home
folder), environment variables and the working folder in step both ways, packages as
packages, and plain pytest's outcome rules. Correct candidates of each class grade
`pass` through the real pipeline on both namespace backends (and without namespaces);
attacks that use what is now shared end disputed or fail, never `pass`."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _d, anywhere, grade_files, verdict

__all__ = ["anywhere"]  # the fixture

# -- one filesystem -------------------------------------------------------------------

FILES = {
    "archive.py": _d(
        """
        import os
        import tempfile
        from pathlib import Path


        def save(folder, name, lines):
            path = Path(folder) / name
            path.write_text("\\n".join(lines) + "\\n")
            return path


        def count_lines(path):
            with open(path) as f:
                return sum(1 for _ in f)


        def scratch_copy(text):
            folder = tempfile.mkdtemp(prefix="archive-")
            path = os.path.join(folder, "copy.txt")
            with open(path, "w") as f:
                f.write(text)
            return path


        def here(name, text):
            Path(name).write_text(text)


        def link_latest(folder, target):
            latest = Path(folder) / "latest"
            if latest.is_symlink():
                latest.unlink()
            latest.symlink_to(target)
            return latest


        def shared_memory_note(text):
            Path("/dev/shm/archive-note").write_text(text)


        def home_cache(key, value):
            cache = Path.home() / ".cache" / "archive"
            cache.mkdir(parents=True, exist_ok=True)
            (cache / key).write_text(value)
            return cache / key


        def read_home(relative):
            return (Path.home() / relative).read_text()


        def open_file_writer(path):
            return open(path, "a")
        """
    ),
    "data/seed.txt": "alpha\nbeta\n",
}
FILE_TESTS = _d(
    """
    import os
    import tempfile
    from pathlib import Path

    import archive


    def test_the_test_reads_what_the_candidate_wrote(tmp_path):
        path = archive.save(tmp_path, "out.txt", ["a", "b", "c"])
        assert path == tmp_path / "out.txt"
        assert (tmp_path / "out.txt").read_text() == "a\\nb\\nc\\n"


    def test_the_candidate_reads_what_the_test_wrote(tmp_path_factory):
        folder = tmp_path_factory.mktemp("inputs")
        (folder / "in.txt").write_text("1\\n2\\n")
        assert archive.count_lines(folder / "in.txt") == 2
        assert archive.count_lines(str(folder / "in.txt")) == 2


    def test_a_folder_the_candidate_made_in_tmp():
        path = archive.scratch_copy("hello")
        assert path.startswith(tempfile.gettempdir())
        assert Path(path).read_text() == "hello"


    def test_relative_paths_in_the_working_folder(tmp_path, monkeypatch):
        archive.here("note.txt", "in the work folder")
        assert Path("note.txt").read_text() == "in the work folder"
        monkeypatch.chdir(tmp_path)
        archive.here("moved.txt", "there")
        assert (tmp_path / "moved.txt").read_text() == "there"


    def test_data_files_beside_the_candidate():
        assert Path("data/seed.txt").read_text().split() == ["alpha", "beta"]
        assert archive.count_lines("data/seed.txt") == 2


    def test_links_and_live_changes(tmp_path):
        (tmp_path / "v1").write_text("one")
        latest = archive.link_latest(tmp_path, tmp_path / "v1")
        assert latest.read_text() == "one"
        (tmp_path / "v1").write_text("changed by the test")
        assert archive.count_lines(latest) == 1
        writer = archive.open_file_writer(tmp_path / "log.txt")
        writer.write("line\\n")
        writer.flush()
        assert (tmp_path / "log.txt").read_text() == "line\\n"
        writer.close()


    def test_dev_shm_and_the_home_folder():
        archive.shared_memory_note("shm")
        assert Path("/dev/shm/archive-note").read_text() == "shm"
        cached = archive.home_cache("k", "v")
        assert cached.read_text() == "v"
        assert str(cached).startswith(os.path.expanduser("~"))
        (Path.home() / ".config").mkdir(exist_ok=True)
        (Path.home() / ".config" / "archive.ini").write_text("[x]\\n")
        assert archive.read_home(".config/archive.ini") == "[x]\\n"
    """
)


def test_one_filesystem_for_both_processes(tmp_path, anywhere) -> None:
    outcome = grade_files(tmp_path, anywhere, FILES, FILE_TESTS)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail or outcome.tail)


# -- process state in step ------------------------------------------------------------

CONFIG = _d(
    """
    import os


    def configure(mode):
        os.environ["SERVICE_MODE"] = mode
        os.environ.pop("SERVICE_DEBUG", None)
        return os.environ.get("SERVICE_REGION", "none")


    def enter(folder):
        os.chdir(folder)
        return os.getcwd()


    def where():
        return os.getcwd()


    def pytest_names():
        return sorted(k for k in os.environ if k.startswith(("PYTEST_", "EVALPIN_")))
    """
)
CONFIG_TESTS = _d(
    """
    import os

    import config


    def test_environment_both_ways(monkeypatch):
        monkeypatch.setenv("SERVICE_REGION", "eu")
        monkeypatch.setenv("SERVICE_DEBUG", "1")
        assert config.configure("fast") == "eu"
        assert os.environ["SERVICE_MODE"] == "fast"
        assert "SERVICE_DEBUG" not in os.environ
        monkeypatch.delenv("SERVICE_MODE")


    def test_working_folder_both_ways(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        assert config.where() == str(tmp_path)
        (tmp_path / "inner").mkdir()
        assert config.enter("inner") == str(tmp_path / "inner")
        assert os.getcwd() == str(tmp_path / "inner")


    def test_the_grader_keeps_its_own():
        assert "PYTEST_CURRENT_TEST" in os.environ
        assert not [n for n in config.pytest_names() if n.startswith("EVALPIN_")]
    """
)


def test_process_state_in_step(tmp_path, anywhere) -> None:
    outcome = grade_files(tmp_path, anywhere, {"config.py": CONFIG}, CONFIG_TESTS)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail or outcome.tail)


# -- packages -------------------------------------------------------------------------

PACKAGE = {
    "geo/__init__.py": _d(
        '''
        """Geometry, with a lazily loaded extra."""
        from .core import Point, distance
        from . import units

        __all__ = ["Point", "distance", "units", "fancy"]


        def __getattr__(name):
            if name == "fancy":
                import importlib

                return importlib.import_module(".fancy", __name__)
            raise AttributeError(name)


        def __dir__():
            return sorted([*globals(), "fancy"])
        '''
    ),
    "geo/core.py": _d(
        """
        import math
        from dataclasses import dataclass

        from .units import to_metres


        @dataclass
        class Point:
            x: float
            y: float


        def distance(a, b, unit="m"):
            return to_metres(math.hypot(a.x - b.x, a.y - b.y), unit)
        """
    ),
    "geo/units.py": 'FACTORS = {"m": 1, "km": 1000}\n\n\ndef to_metres(v, unit):\n'
    "    return v * FACTORS[unit]\n",
    "geo/fancy/__init__.py": "from .shapes import triangle\n",
    "geo/fancy/shapes.py": "def triangle():\n    return 3\n",
    "geo/readers/__init__.py": "",
    "geo/readers/csv_reader.py": 'KIND = "csv"\n',
    "geo/readers/json_reader.py": 'KIND = "json"\n',
    "geo/catalog.py": _d(
        """
        import importlib
        import pkgutil
        from importlib import resources

        from . import readers


        def reader_names():
            return sorted(m.name for m in pkgutil.iter_modules(readers.__path__))


        def kinds():
            return [
                importlib.import_module(f"{readers.__name__}.{name}").KIND
                for name in reader_names()
            ]


        def cities():
            text = resources.files(__package__).joinpath("data/cities.txt").read_text()
            return text.split()
        """
    ),
    "geo/data/cities.txt": "Oslo Lima\n",
}
PACKAGE_TESTS = _d(
    """
    import importlib
    import pkgutil
    from importlib import resources

    import geo
    import geo.units as units
    from geo import catalog, core
    from geo.core import Point


    def test_relative_imports_and_submodules():
        assert geo.distance(Point(0, 0), Point(3, 4), "km") == 5000
        assert core.distance(core.Point(0, 0), core.Point(0, 2)) == 2
        assert units.to_metres(2, "km") == 2000
        assert geo.core is core and geo.units is units


    def test_a_lazy_subpackage():
        assert geo.fancy.triangle() == 3
        assert "fancy" in dir(geo)


    def test_discovery_and_data_files():
        assert catalog.reader_names() == ["csv_reader", "json_reader"]
        assert catalog.kinds() == ["csv", "json"]
        assert "core" in {m.name for m in pkgutil.iter_modules(geo.__path__)}
        assert catalog.cities() == ["Oslo", "Lima"]
        data = resources.files("geo").joinpath("data/cities.txt").read_text()
        assert data.split() == ["Oslo", "Lima"]
        assert pkgutil.get_data("geo", "data/cities.txt") == b"Oslo Lima\\n"


    def test_a_submodule_the_test_imports_itself():
        assert importlib.import_module("geo.readers.json_reader").KIND == "json"
    """
)


def test_packages_as_packages(tmp_path, anywhere) -> None:
    outcome = grade_files(tmp_path, anywhere, PACKAGE, PACKAGE_TESTS)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail or outcome.tail)


# -- plain pytest's outcome rules -----------------------------------------------------

PARSER = _d(
    """
    def parse(text):
        return [int(p) for p in text.split(",") if p.strip()]
    """
)
OUTCOMES = {
    "an xfail that fails as expected, strict or not": (
        _d(
            """
            import pytest

            import parser


            def test_parses():
                assert parser.parse("1,2") == [1, 2]


            @pytest.mark.xfail(strict=True, reason="spaces are not numbers")
            def test_words_are_not_numbers():
                parser.parse("a,b")


            @pytest.mark.xfail(raises=ValueError)
            def test_known_limit():
                parser.parse("1.5")
            """
        ),
        "pass",
    ),
    "a non-strict xfail that passes": (
        _d(
            """
            import pytest

            import parser


            @pytest.mark.xfail(reason="maybe one day")
            def test_may_pass():
                assert parser.parse("3") == [3]
            """
        ),
        "pass",
    ),
    "a strict xfail that passes": (
        _d(
            """
            import pytest

            import parser


            def test_parses():
                assert parser.parse("1") == [1]


            @pytest.mark.xfail(strict=True)
            def test_must_fail():
                assert parser.parse("3") == [3]
            """
        ),
        "fail",
    ),
    "a test the file skips beside tests that pass": (
        _d(
            """
            import sys

            import pytest

            import parser


            def test_parses():
                assert parser.parse("4,5") == [4, 5]


            @pytest.mark.skipif(sys.platform == "linux", reason="not here")
            def test_elsewhere():
                assert False
            """
        ),
        "pass",
    ),
    "a file whose tests all skip measures nothing": (
        _d(
            """
            import pytest

            import parser


            @pytest.mark.skip(reason="later")
            def test_later():
                assert parser.parse("1") == [1]
            """
        ),
        "fail",
    ),
}


@pytest.mark.parametrize("name", list(OUTCOMES))
def test_plain_pytests_outcome_rules(tmp_path, backend: Isolation, name: str) -> None:
    test_src, expected = OUTCOMES[name]
    outcome = grade_files(tmp_path, backend, {"parser.py": PARSER}, test_src)
    assert verdict(outcome) == expected, (outcome.reasons, outcome.tail, outcome.witness_tail)


# A wrong parser that skips the tests it would fail: from inside pytest's process (plain
# pytest) the skip is a skip; under the witness its exception is an error of the call.
SKIPPING = _d(
    """
    def parse(text):
        if "," in text:
            import pytest

            pytest.skip("not today")
        return [int(text)]
    """
)


def test_a_skip_the_test_file_cannot_give_fails(tmp_path, backend: Isolation) -> None:
    test_src = _d(
        """
        import parser


        def test_one():
            assert parser.parse("1") == [1]


        def test_two():
            assert parser.parse("1,2") == [1, 2]
        """
    )
    outcome = grade_files(tmp_path, backend, {"parser.py": SKIPPING}, test_src)
    assert verdict(outcome) == "fail", (outcome.reasons, outcome.tail)


def test_a_candidates_skip_where_the_file_skips_too_is_never_a_pass(
    tmp_path, backend: Isolation
) -> None:
    test_src = _d(
        """
        import sys

        import pytest

        import parser


        def test_one():
            assert parser.parse("1") == [1]


        def test_two():
            assert parser.parse("1,2") == [1, 2]


        @pytest.mark.skipif(sys.platform == "linux", reason="not here")
        def test_elsewhere():
            pass
        """
    )
    outcome = grade_files(tmp_path, backend, {"parser.py": SKIPPING}, test_src)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.witness_tail)


# -- attacks through what is now shared ----------------------------------------------
#
# Wrong candidates (their `add` subtracts) that fool plain pytest through the folders
# or the environment both processes share; under the witness each must end disputed.

FORGING_MODULE = _d(
    """
    import sys
    import types

    FORMAT = "{}"
    for name in ("test_it",):
        if name in sys.modules:  # the test's own module: its `calc` made right
            sys.modules[name].calc = types.SimpleNamespace(add=lambda a, b: a + b)
    """
)
HONEST_FORMAT = 'FORMAT = "{}"\n'
LAZY_TEST = _d(
    """
    import calc


    def test_a_format():
        import report_fmt

        assert report_fmt.FORMAT.format(1) == "1"


    def test_b_adds():
        assert calc.add(2, 3) == 5
    """
)


def _wrong_calc(attack: str) -> str:
    return _d(
        f"""
        import os
        import py_compile
        import shutil
        import tempfile

        FORGED = {FORGING_MODULE!r}


        def add(a, b):
            return a - b


        def _attack():
            {attack}


        _attack()
        """
    )


ATTACKS = {
    # The candidate's other module, replaced before the test imports it.
    "a stand-in replaced": (
        "os.unlink('report_fmt.py')\n"
        "            with open('report_fmt.py', 'w') as f:\n"
        "                f.write(FORGED)"
    ),
    # A compiled form beside it that Python trusts without looking at the source.
    "an unchecked compiled module planted": (
        "src = os.path.join(tempfile.mkdtemp(), 'forged.py')\n"
        "            with open(src, 'w') as f:\n"
        "                f.write(FORGED)\n"
        "            tag = __import__('sys').implementation.cache_tag\n"
        "            os.makedirs('__pycache__', exist_ok=True)\n"
        "            py_compile.compile(src, cfile=f'__pycache__/report_fmt.{tag}.pyc',\n"
        "                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"
    ),
    # A package of the same name, which the import system prefers to the module.
    "a package planted over the module": (
        "os.makedirs('report_fmt', exist_ok=True)\n"
        "            with open('report_fmt/__init__.py', 'w') as f:\n"
        "                f.write(FORGED)"
    ),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_code_the_worker_writes_never_runs_in_the_judge(
    tmp_path, backend: Isolation, name: str
) -> None:
    files = {"calc.py": _wrong_calc(ATTACKS[name]), "report_fmt.py": HONEST_FORMAT}
    outcome = grade_files(tmp_path, backend, files, LAZY_TEST)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.tail, outcome.witness_tail)


# Reads the expected value from the name of the running test (its parameters).
PEEKING = _d(
    """
    import os
    import re


    def add(a, b):
        running = os.environ.get("PYTEST_CURRENT_TEST", "")
        found = re.search(r"\\[(\\d+)-(\\d+)-(\\d+)\\]", running)
        return int(found.group(3)) if found else a - b
    """
)
PARAMETRIZED = _d(
    """
    import pytest

    import calc


    @pytest.mark.parametrize("a,b,total", [(1, 2, 3), (10, 5, 15), (7, 8, 15)])
    def test_add(a, b, total):
        assert calc.add(a, b) == total
    """
)


def test_pytests_variables_never_reach_the_worker(tmp_path, backend: Isolation) -> None:
    outcome = grade_files(tmp_path, backend, {"calc.py": PEEKING}, PARAMETRIZED)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.tail, outcome.witness_tail)


# Always equal (plain pytest's assert believes it); and a `sitecustomize` in /tmp, put on
# PYTHONPATH, which a Python the test starts runs: it opens the judge's descriptors and
# its report's path and, in the background, rewrites the report as passing once pytest
# has written it.
FORGER = _d(
    '''
    import os

    REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"
    errors="0" failures="0" skipped="0" tests="2"><testcase classname="test_it"
    name="test_add"/><testcase classname="test_it" name="test_python_runs"/>
    </testsuite></testsuites>"""
    CHILD = f"""
    import glob, os, time
    REPORT = {REPORT!r}.encode()
    judge = os.getppid()
    held = []
    for path in glob.glob(f"/proc/{{judge}}/fd/*"):
        try:
            if "memfd" in os.readlink(path):
                held.append(os.open(path, os.O_RDWR))
        except OSError:
            pass
    try:
        argv = open(f"/proc/{{judge}}/cmdline").read().split(chr(0))
        path = argv[argv.index("--junitxml") + 1].replace("self", str(judge))
        held.append(os.open(path, os.O_RDWR | os.O_CREAT))
    except (OSError, ValueError):
        pass
    if held and os.fork() == 0:  # rewrites the report once pytest has written it
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.setsid()
        for _ in range(30000):
            for fd in held:
                data = os.pread(fd, 1 << 20, 0)
                if b"<testsuite" in data and data != REPORT:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, REPORT, 0)
            time.sleep(0.001)
        os._exit(0)
    """
    folder = "/tmp/forge-site"
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "sitecustomize.py"), "w") as f:
        f.write(CHILD)
    os.environ["PYTHONPATH"] = folder


    class Anything:
        def __eq__(self, other):
            return True


    def add(a, b):
        return Anything()
    '''
)
CHILD_TEST = _d(
    """
    import subprocess
    import sys

    import calc


    def test_add():
        assert calc.add(2, 2) == 4


    def test_python_runs():
        done = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True)
        assert done.stdout.split()[-1] == b"42"
    """
)


def test_a_program_the_test_starts_cannot_forge_the_report(tmp_path, backend: Isolation) -> None:
    outcome = grade_files(tmp_path, backend, {"calc.py": FORGER}, CHILD_TEST)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.tail, outcome.witness_tail)


# Reads the expected values out of the test file beside it, in the one work folder.
READS_THE_TEST = _d(
    """
    import re
    from pathlib import Path


    def add(a, b):
        text = "".join(p.read_text() for p in Path(".").glob("test_*.py"))
        found = re.search(rf"add\\({a}, {b}\\) == (\\d+)", text)
        return int(found.group(1)) if found else a - b
    """
)


def test_the_test_file_is_not_the_workers_to_read(tmp_path, backend: Isolation) -> None:
    test_src = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"
    outcome = grade_files(tmp_path, backend, {"calc.py": READS_THE_TEST}, test_src)
    assert verdict(outcome) == "disputed", (outcome.reasons, outcome.tail, outcome.witness_tail)


# -- the sandbox's own loopback, and a fixture named like a test ----------------------

NETWORKED = _d(
    """
    import socket


    def echo_once(data):
        with socket.create_server(("127.0.0.1", 0)) as server:
            with socket.create_connection(server.getsockname(), timeout=5) as client:
                conn, _ = server.accept()
                with conn:
                    client.sendall(data)
                    return conn.recv(1024)


    def fetch(port, request):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(request)
            return conn.recv(1024)
    """
)
NETWORK_TESTS = _d(
    """
    import socket
    import threading

    import pytest

    import net


    @pytest.fixture
    def test_server():
        server = socket.create_server(("127.0.0.1", 0))

        def answer():
            conn, _ = server.accept()
            with conn:
                conn.sendall(conn.recv(1024).upper())

        threading.Thread(target=answer, daemon=True).start()
        yield server.getsockname()[1]
        server.close()


    def test_loopback_inside_the_candidate():
        assert net.echo_once(b"ping") == b"ping"


    def test_the_candidate_reaches_the_tests_server(test_server):
        assert net.fetch(test_server, b"hello") == b"HELLO"
    """
)


def test_loopback_and_a_fixture_named_like_a_test(tmp_path, backend: Isolation) -> None:
    outcome = grade_files(tmp_path, backend, {"net.py": NETWORKED}, NETWORK_TESTS)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.tail, outcome.witness_tail)


# -- evalpin run by an unprivileged user ----------------------------------------------

# Grades each item of argv[2] (a JSON list of [files, test source]) on backend argv[1],
# under work folder argv[3]; prints the verdicts as JSON.
AS_USER = """
import json, sys
from pathlib import Path
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.reasons import status_of
from evalpin.run.sandbox import probe_isolation, run_item
iso = probe_isolation((sys.argv[1],))
verdicts = []
for n, (files, test) in enumerate(json.loads(Path(sys.argv[2]).read_text())):
    folder = Path(sys.argv[3], f"set-{n}")
    folder.mkdir()
    (folder / "prompt.md").write_text("x")
    (folder / "test_it.py").write_text(test)
    entry = {"id": "a", "language": "python", "prompt_file": "prompt.md",
             "test_file": "test_it.py", "timeout_s": 20, "expected_files": sorted(files)}
    doc = {"schema": "coding-eval/v1", "dataset_id": "t", "dataset_version": "1",
           "items": [entry]}
    (folder / "set.yaml").write_text(json.dumps(doc))
    item = load_fixtures(folder / "set.yaml").cases[0]
    out = run_item(item, files, isolation=iso, always_witness=True)
    verdicts.append("pass" if out.passed else status_of(out.reasons) or "fail")
print(json.dumps({"kind": iso.kind, "why": iso.why, "verdicts": verdicts}))
"""


def test_an_unprivileged_grader_shares_the_witnesss_folders_too(
    open_tmp, backend, unprivileged
) -> None:
    """As a user that is not root (its user namespace joined by pytest's sandbox): the
    corpus of files, process state, packages and loopback passes, a replaced stand-in
    is refused, and the forging program the test starts reaches nothing."""
    cases = [
        (FILES, FILE_TESTS),
        ({"config.py": CONFIG}, CONFIG_TESTS),
        (PACKAGE, PACKAGE_TESTS),
        (
            {
                "calc.py": _wrong_calc(ATTACKS["a stand-in replaced"]),
                "report_fmt.py": HONEST_FORMAT,
            },
            LAZY_TEST,
        ),
        ({"calc.py": FORGER}, CHILD_TEST),
        ({"net.py": NETWORKED}, NETWORK_TESTS),
    ]
    (open_tmp / "cases.json").write_text(json.dumps(cases))
    work = open_tmp / "work"
    work.mkdir()
    os.chown(work, unprivileged.uid, unprivileged.uid)
    argv = ["-I", "-c", AS_USER, backend.kind, str(open_tmp / "cases.json"), str(work)]
    done = subprocess.run(
        unprivileged.argv(*argv), capture_output=True, text=True, timeout=600, cwd="/"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["kind"] == backend.kind, result["why"]
    assert "user namespace" in result["why"]
    assert result["verdicts"] == ["pass", "pass", "pass", "disputed", "disputed", "pass"]
