"""A dispute's class, read from what the witness said, in the issue's own words:
filesystem, env/cwd, packages, classes, identity, values/types, library values, test
tools, protocol error, sandbox environment, xfail/outcome rules, other.

The witness's tail is its last 800 characters, so the signs are read in order of how
directly they name the cause: first what it says it could not carry (`[evalpin] the
witness could not carry: handing a X to the candidate`: X's kind decides), then the
error lines (`E   ...`), then the whole tail and the failed tests' names. The first rule
that matches wins."""

from __future__ import annotations

import re

# What the witness could not hand over, by the kind it names.
CARRIED: list[tuple[str, str]] = [
    ("packages", r"StubModule|module\b|submodule|import \*"),
    ("other", r"child process"),
    ("classes", r"RemoteClass|classmethod|staticmethod|property"),
    ("test tools", r"mock\.|Mock|sentinel|_pytest\.|MonkeyPatch|contextvars"),
    ("identity", r"builtins\.object\b|weakref|WeakValue|WeakKey"),
    ("library values", r"pandas|polars|numpy|matplotlib|pyarrow|scipy|sklearn"),
    ("filesystem", r"file|_io\.|codecs\.|Path\b|os\.DirEntry|tempfile"),
    (
        "values/types",
        r"builtin_function_or_method|method-wrapper|functools\.|itertools\."
        r"|datetime|decimal|re\.|types\.|_thread\.|threading|socket|sqlite3|frame|code\b",
    ),
]

# What the witness's error lines, then its whole tail, say.
RULES: list[tuple[str, str]] = [
    (
        "sandbox environment",
        r"witness:sandbox|witness:memory|MemoryError|\.cache/|MPLCONFIGDIR|fontconfig",
    ),
    (
        "packages",
        r"malformed 'mod' value|StubModule|ModuleNotFoundError|No module named"
        r"|__path__|pkgutil|Empty parameter set|module '[\w.]+' has no attribute"
        r"|cannot import name|relative import",
    ),
    (
        "protocol error",
        r"ProtocolError|RemoteGone|unknown value tag|unknown shared|nested deeper",
    ),
    ("xfail/outcome rules", r"\bxfail|XPASS|xpassed"),
    (
        "test tools",
        r"monkeypatch|[Mm]ock|patch\b|sentinel|capsys|capfd|caplog|contextvars"
        r"|pytest\.warns|Emitted warnings|DID NOT WARN|recwarn",
    ),
    ("env/cwd", r"os\.environ|getcwd|chdir|environ\["),
    (
        "filesystem",
        r"FileNotFoundError|No such file|NotADirectoryError|IsADirectoryError"
        r"|does not exist|no such table",
    ),
    (
        "values/types",
        r"takes \d+ positional argument|'<function |<class 'function'>"
        r"|not a subtype of|argcount",
    ),
    (
        "classes",
        r"_tests_subclass_instance|'NoneType' object has no attribute 'peer'"
        r"|attribute access not allowed|may not change that object of the tests"
        r"|cannot collect test class"
        r"|__set_name__|__init_subclass__|metaclass"
        r"|__class_getitem__|property|descriptor|abstract|__slots__|super\(|__mro__"
        r"|subclass|classmethod|staticmethod|dataclass|__orig_class__",
    ),
    (
        "library values",
        r"is not an instance of <class '(matplotlib|pandas|numpy|polars|scipy)"
        r"|module 'matplotlib' has no attribute",
    ),
    ("values/types", r"is not an instance of"),
    ("identity", r"weakref|WeakValue|WeakKey|deepcopy|[Pp]ickl|\bis not\b|assert .+ is \w|memo"),
    ("library values", r"pandas|polars|numpy|matplotlib|pyarrow|scipy|sklearn|Timestamp\("),
    (
        "values/types",
        r"cannot be interpreted as an integer|__index__|type\(.*\) is|isinstance"
        r"|bytes|UnicodeDecode|\\xff|TypeError|hashable|assert .* == ",
    ),
    ("sandbox environment", r"witness:timeout"),
]

_CARRY = re.compile(r"the witness could not carry: (.+)")
_ERROR = re.compile(r"(?m)^E +(.+)$")
_COLLECT = re.compile(r"(?m)^(Empty parameter set.*|ERROR .+|FAILED .+)$")


def classify(case: dict) -> str:
    """The class of a non-pass case (graded fails are named by plain pytest's tail)."""
    if not case.get("status"):
        return _graded_fail(case)
    tail = case.get("witness_tail") or ""
    reasons = " ".join(case.get("reasons") or [])
    carried = _CARRY.search(tail)
    if carried:
        for name, pattern in CARRIED:
            if re.search(pattern, carried.group(1)):
                return name
    errors = "\n".join(_ERROR.findall(tail))
    for text in (
        errors,
        tail + "\n" + reasons + "\n" + " ".join(case.get("witness_failed_tests") or []),
    ):
        for name, pattern in RULES:
            if re.search(pattern, text):
                return name
    return "other"


def _graded_fail(case: dict) -> str:
    """A plain-pytest fail of a project plain pytest passes outside evalpin: its sandbox
    differs (no loopback, a timeout), or the grade's outcome rules differ from pytest's
    (a skip the test marks, a fixture named like a test counted as a test not run)."""
    tail = case.get("tail") or ""
    if re.search(r"Network is unreachable|Cannot assign requested|killed after", tail):
        return "sandbox environment"
    summary = tail.strip().splitlines()[-1:] or [""]
    if not re.search(r"\d+ (failed|errors?)\b", summary[0]):
        return "xfail/outcome rules"
    return "graded fail"


def first_line(case: dict) -> str:
    """What the witness could not carry, else its first error line, else the first
    failed test (plain pytest's tail and tests for a graded fail)."""
    tail = case.get("witness_tail") or case.get("tail") or ""
    for pattern in (_CARRY, _ERROR, _COLLECT):
        found = pattern.search(tail)
        if found:
            return found.group(1).strip()[:200]
    failed = case.get("witness_failed_tests") or case.get("failed_tests") or []
    return failed[0] if failed else tail.strip().splitlines()[-1][:200] if tail.strip() else ""
