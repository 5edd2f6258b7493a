"""The coding-item grader: the files a completion gives, what is checked before any of
its code runs, how pytest is invoked, and how its JUnit report becomes a grade (which
files a completion may write is `surface.py`).

Everything here is pure (no subprocess) and is part of the grader version, so the pytest
invocation, its config and the resource limits live here too: changing any of them moves
the version. `evalpin.run.sandbox` executes what this module describes.

A case that fails a static check (surface, syntax, forbidden import) is not run at all:
the model's code never executes and the reasons say why. Reasons come out in
`grade_order`, the order of core/reasons.py: outside_surface, missing_file, syntax_error,
forbidden_import, then tampering, then tests_failed/timeout, then sandbox_error.

Reason codes decided here: `outside_surface:PATH` and `missing_file:NAME` (by
`surface.py`), `syntax_error:FILE`, `forbidden_import:MODULE`, `tampering:KIND`
(in-process items, and a fail only the witness passed), `tests_failed` (a failing,
erroring or skipped test, an expected test that did not run, no test at all, a non-zero
pytest exit, or no readable report); `witness:KIND` is decided by witness.py.
`timeout` and `sandbox_error:KIND` are decided by the sandbox.

How the candidate runs (`isolation`): for `process` items, plain pytest with the
candidate in-process (the truth for honest code), then the witness: the same tests with
the candidate in a process of its own behind the wire (wire/). `in-process` items run
once, with the tamper guard (guard.py). The boot scripts below are grader modules too,
shipped into the sandbox.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator, Sequence

from evalpin.core import syntax
from evalpin.core.instrument.fixtures import CodingItem

# The report's side lives in junit.py; its names stay importable from here.
from evalpin.core.instrument.graders.junit import expected_tests as expected_tests
from evalpin.core.instrument.graders.junit import failed_tests as failed_tests
from evalpin.core.instrument.graders.junit import judge_in_process as judge_in_process
from evalpin.core.instrument.graders.junit import judge_report as judge_report
from evalpin.core.instrument.graders.junit import report_outcomes as report_outcomes
from evalpin.core.instrument.graders.surface import approved_files, surface_reasons
from evalpin.core.reasons import FORBIDDEN_IMPORT, SYNTAX_ERROR
from evalpin.core.reasons import in_order as grade_order
from evalpin.core.records import Completion

# -- files from a completion ----------------------------------------------------------

_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# A file name needs an extension that starts with a letter, so "1.5" or "python" is not one.
_NAME = r"[\w./\\-]*\w\.[A-Za-z]\w*"
_PATHLIKE = re.compile(rf"^{_NAME}$")
_INFO_KEY = re.compile(r"""\b(?:title|file|filename|path)=(?:"([^"]+)"|'([^']+)'|(\S+))""")
_NAME_LINE = re.compile(
    rf"""^\s*(?:\#+\s*|//\s*)?[*`]*\s*(?:(?:file|filename|path)\s*:\s*)?[*`]*
    (?P<name>{_NAME})[*`]*\s*:?\s*[*`]*\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
_FIRST_LINE = re.compile(rf"^\s*(?:\#|//)\s*(?:(?:file|filename)\s*:\s*)?(?P<name>{_NAME})\s*$")


def files_from_completion(
    completion: Completion, expected_files: Sequence[str] = ()
) -> dict[str, str]:
    """The completion's `files` map when it has one, else files from named fenced blocks.

    A fenced block (``` or ~~~) is taken as a file when it is named, first match wins:
    1. in its info string: ```` ```python title=solution.py ```` (also `file=`,
       `filename=`, `path=`, quoted or not), ```` ```solution.py ````,
       ```` ```python solution.py ```` or ```` ```python:solution.py ````;
    2. by the nearest non-blank line before the fence when that line is only a name,
       optionally decorated: `solution.py`, `# file: solution.py`, `**solution.py**`,
       `` `solution.py` ``, `### solution.py`, `File: solution.py`, `solution.py:`;
    3. by its own first line when that is only a comment naming it: `# solution.py`,
       `# file: solution.py` (the line is kept in the content).
    A name needs an extension. When a name repeats, the last block wins (models restate a
    file after correcting it). Unnamed blocks are ignored, with one exception: an answer
    holding no named block and exactly one unnamed block, for an item that expects
    exactly one file, is that file (the commonest shape of a model's answer). An unclosed
    block runs to the end of the text, as in CommonMark, so a truncated answer still
    yields its file.
    """
    if completion.files:
        return dict(completion.files)
    files: dict[str, str] = {}
    unnamed: list[str] = []
    for name, body in _blocks(completion.text.splitlines()):
        if name is None:
            unnamed.append(body)
            continue
        files.pop(name, None)
        files[name] = body
    if not files and len(unnamed) == 1 and len(expected_files) == 1:
        files[expected_files[0]] = unnamed[0]
    return files


def fenced_blocks(text: str) -> list[tuple[str | None, str]]:
    """Every fenced block of `text`, in order, with the name it is given (None: unnamed),
    by the rules of `files_from_completion`."""
    return list(_blocks(text.splitlines()))


def _blocks(lines: list[str]) -> Iterator[tuple[str | None, str]]:
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i])
        if not opened or (opened["fence"][0] == "`" and "`" in opened["info"]):
            i += 1
            continue
        fence = opened["fence"]
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = i + 1
        while end < len(lines) and not close.match(lines[end]):
            end += 1
        body = lines[i + 1 : end]
        name = _name_from_info(opened["info"]) or _name_before(lines, i) or _name_inside(body)
        yield name, "\n".join(body) + "\n"
        i = end + 1


def _name_from_info(info: str) -> str | None:
    keyed = _INFO_KEY.search(info)
    if keyed:
        return next(g for g in keyed.groups() if g)
    for token in info.split():
        candidate = token.split(":", 1)[1] if ":" in token else token
        if _PATHLIKE.match(candidate):
            return candidate
    return None


def _name_before(lines: list[str], fence_at: int) -> str | None:
    j = fence_at - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j < 0 or _FENCE_OPEN.match(lines[j]):
        return None
    named = _NAME_LINE.match(lines[j])
    return named["name"] if named else None


def _name_inside(body: list[str]) -> str | None:
    named = _FIRST_LINE.match(body[0]) if body else None
    return named["name"] if named else None


# -- static checks --------------------------------------------------------------------


def _compile_error(name: str, source: str) -> str | None:
    """Why `source` does not compile, or None. Compiled, never executed."""
    try:
        source.encode("utf-8")
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"{name}:{exc.lineno}:{exc.offset}: {exc.msg}"
    except (UnicodeEncodeError, ValueError, RecursionError, MemoryError) as exc:
        return f"{name}: {type(exc).__name__}: {exc}"
    return None


def syntax_reasons(files: dict[str, str]) -> list[str]:
    """`syntax_error:FILE` for every `.py` file that does not compile."""
    return [
        SYNTAX_ERROR(name)
        for name, source in files.items()
        if name.endswith(".py") and _compile_error(name, source)
    ]


_IMPORT_CALLS = frozenset({"__import__", "import_module"})


def _imported_modules(tree: ast.AST) -> Iterator[str]:
    """Absolute module names a module imports, as far as a static reading can tell."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            # `from os import path` imports the submodule `os.path`.
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called not in _IMPORT_CALLS:
                continue
            arg = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg == "name"), None)
            )
            name = arg.value if isinstance(arg, ast.Constant) else None
            if isinstance(name, str) and not name.startswith("."):  # "." = the model's own
                yield name


def import_reasons(files: dict[str, str], forbidden: list[str]) -> list[str]:
    """`forbidden_import:MODULE` for every forbidden module (or a submodule of it) that a
    `.py` file imports, in the order the item lists them.

    Advisory only: this reads `import`, `from ... import`, `__import__('m')` and
    `import_module('m')` (however `import_module` was reached) with literal names, so
    `__import__('o' + 's')`, `exec` or `getattr` defeat it. Containment is the sandbox's
    job; this check exists to fail honest-but-forbidden solutions early and clearly.
    """
    seen: set[str] = set()
    for name, source in files.items():
        if not name.endswith(".py"):
            continue
        try:
            tree = syntax.parse(source, name)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # reported by syntax_reasons
        seen.update(_imported_modules(tree))
    return [
        FORBIDDEN_IMPORT(module)
        for module in forbidden
        if any(m == module or m.startswith(module + ".") for m in seen)
    ]


def static_check(files: dict[str, str], item: CodingItem) -> tuple[list[str], str]:
    """All pre-run checks, in grade order, with a short note for the model's repair loop
    (where a file does not compile, the compiler's message)."""
    approved = approved_files(files, item)
    reasons = surface_reasons(files, item)
    reasons += syntax_reasons(approved)
    reasons += import_reasons(approved, item.forbidden_imports)
    if not reasons:
        return [], ""
    reasons = grade_order(reasons)
    errors = [e for n, s in approved.items() if n.endswith(".py") and (e := _compile_error(n, s))]
    return reasons, "\n".join(["static checks failed: " + " ".join(reasons), *errors])


# -- the pytest run -------------------------------------------------------------------

# evalpin's own pytest config, passed with `-c`: no file in the work directory is read as
# config. Collection prefixes are pytest's defaults, pinned so `expected_tests` and pytest
# agree; an empty parametrization is an error, not a quiet skip. An xfail is strict only
# where the test says so, as under plain pytest (`judge_report`).
PYTEST_INI = """\
[pytest]
python_classes = Test
python_functions = test
empty_parameter_set_mark = fail_at_collect
console_output_style = classic
junit_family = xunit2
junit_logging = no
"""
PYTEST_INI_NAME = "evalpin-pytest.ini"

# Set by evalpin, never inherited: no plugin installed in the caller's environment is
# loaded through its entry point (the variable works on every supported pytest; the
# `--disable-plugin-autoload` flag only from 8.4).
PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def pytest_argv(python: str, ini: str, workdir: str, report: str, test_name: str) -> list[str]:
    """`python -I -B -m pytest` with `pytest_args`; see there."""
    return [python, "-I", "-B", "-m", "pytest", *pytest_args(ini, workdir, report, test_name)]


def pytest_args(ini: str, workdir: str, report: str, test_name: str) -> list[str]:
    """The command that runs one item's tests; cwd is `workdir`, the test copy is in it.

    `-I` (isolated mode) keeps the cwd off `sys.path` at startup, so a model-written
    `pytest.py` or `sitecustomize.py` cannot shadow the real ones, and ignores PYTHON*
    variables. The test still imports the model's files because `--import-mode=prepend`
    puts the test file's folder (the work dir) first on `sys.path` when the test module
    is imported, after pytest itself is loaded. `-c` with evalpin's ini plus
    `--noconftest` means no config or conftest from the work dir is read;
    `-p no:cacheprovider` keeps pytest from writing or reading a cache.
    """
    return [
        "-q",
        "--tb=short",
        "-rfE",
        "--color=no",
        "-c",
        ini,
        "--noconftest",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        workdir,
        "--import-mode=prepend",
        "--junitxml",
        report,
        "--",
        test_name,
    ]


# How the sandboxed processes start (`python -I -B -c BOOT ...`). The runtime folder
# (argv[1]) holds the wire package as `evalpin_wire`, capture.py as `evalpin_capture`
# and, in-process, guard.py as `evalpin_guard`; it leaves sys.path once they are
# imported.
WORKER_BOOT = """\
import json, sys
sys.path.insert(0, sys.argv[1])
import evalpin_wire.worker
sys.path[0] = sys.argv[4]
evalpin_wire.worker.worker([int(x) for x in sys.argv[2].split(",")], json.loads(sys.argv[3]))
"""
# The witness's pytest process: argv[2] names its report's and notes' descriptors, which
# nothing it starts inherits; not dumpable (no process of its uid opens or traces it).
PYTEST_BOOT = """\
import ctypes, os, sys
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
for fd in sys.argv[2].split(","):
    os.set_inheritable(int(fd), False)
sys.path.insert(0, sys.argv[1])
import evalpin_wire.stubs
import evalpin_capture
del sys.path[0]
evalpin_wire.stubs.guard_imports()
evalpin_capture.install()
import pytest
sys.exit(pytest.main(sys.argv[3:]))
"""
# The truth run: pytest and nothing else, as `python -m pytest` (under -I, as above),
# but for the bound on captured output (the grader's own files are not the candidate's
# to fill: past the bound output is cut and said so, never an EFBIG fail).
PLAIN_PYTEST_BOOT = """\
import sys
sys.path.insert(0, sys.argv[1])
import evalpin_capture
del sys.path[0]
evalpin_capture.install()
import pytest
sys.exit(pytest.main(sys.argv[2:]))
"""
GUARDED_PYTEST_BOOT = """\
import sys
sys.path.insert(0, sys.argv[1])
import evalpin_guard
import evalpin_capture
del sys.path[0]
evalpin_capture.install()
guard = evalpin_guard.Guard(int(sys.argv[2]))
import pytest
sys.exit(pytest.main(sys.argv[3:], plugins=[guard]))
"""
STUB = """\
# evalpin stand-in: the candidate's module runs in a separate process; this forwards.
try:
    import evalpin_wire.stubs
except ImportError:  # run in a process of its own (a script, `python -m`): no wire there
    import os, sys
    if os.environ.get("EVALPIN_RUNTIME"):  # the program itself: run in the worker
        sys.path.insert(0, os.environ["EVALPIN_RUNTIME"])
        import evalpin_wire.relay
        del sys.path[0]
        evalpin_wire.relay.elsewhere({name!r}, __name__)
    _note = "importing a candidate module in a child process of the tests"
    sys.exit("[evalpin] unsupported under process isolation: " + _note)
evalpin_wire.stubs.stub({name!r}, globals(), {exports!r})
"""
# A candidate file the pytest process would import or load if it were copied there.
IMPORTABLE_SUFFIXES = (".py", ".pyw", ".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib", ".pth")


def module_name(path: str) -> str | None:
    """The module a candidate `.py` file is imported as (`pkg/__init__.py` -> `pkg`)."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


# Resource limits for the test process and its children.
ADDRESS_SPACE_BYTES = 2 * 1024**3
FILE_SIZE_BYTES = 64 * 1024**2
MAX_PROCESSES = 128
CPU_SLACK_S = 2


def rlimits(timeout_s: float) -> dict[str, int]:
    """`resource` limit names and values for an item; CPU time a little over its timeout
    so the wall-clock timeout, not SIGXCPU, is what normally stops a busy loop."""
    return {
        "RLIMIT_CPU": math.ceil(timeout_s) + CPU_SLACK_S,
        "RLIMIT_AS": ADDRESS_SPACE_BYTES,
        "RLIMIT_FSIZE": FILE_SIZE_BYTES,
        "RLIMIT_CORE": 0,
    }
