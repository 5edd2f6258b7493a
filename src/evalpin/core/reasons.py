"""Every reason code, in one registry: its prefix, kind, order, and what it means.

A reason code is a stable string, `prefix` or `prefix:detail`, recorded in run files and
grepped, diffed and counted by scripts. Everything that makes, orders, colours or counts
codes reads this table: graders and slots build codes through the constructors below
(which refuse a prefix or a closed detail that is not registered), the coding grader
records reasons in `order`, the detail pane colours by `kind`, the publish card counts
`static` codes, and the docs' reason page is `markdown_table()` (a test keeps them equal).
Adding a code is one `_code(...)` line here plus a test that emits it.

`order` decides the order reasons are recorded in, so this module is part of the grader
version (core/instrument/pins.py hashes it with the grader modules).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalpin.core.records import DISPUTED, ERROR

# How a code is shown and counted. `unknown` is never registered: it is what `kind_of`
# says of a code that is not in the table (another tool's, or a newer evalpin's).
KINDS = ("tool", "text", "static", "integrity", "test", "witness", "infra", "score")
UNKNOWN = "unknown"


@dataclass(frozen=True, eq=False)
class ReasonCode:
    """One registered code; call it (with its detail, if it takes one) to make the string."""

    prefix: str
    kind: str
    order: int
    static: bool
    detail: str | None
    meaning: str
    # The closed set of details (name -> meaning), or None when any detail is allowed.
    details: dict[str, str] | None = None
    # The status a case recording the code has when it means the case was not judged:
    # "error" (it could not be), "disputed" (plain pytest passed it, the witness did
    # not); and the details that are the candidate's own failure all the same.
    status: str | None = None
    fail_details: frozenset[str] = frozenset()

    def __call__(self, detail: str | None = None) -> str:
        if self.detail is None:
            if detail is not None:
                raise ValueError(f"reason {self.prefix} takes no detail")
            return self.prefix
        if detail is None:
            raise ValueError(f"reason {self.prefix} needs a {self.detail}")
        if self.details is not None and detail not in self.details:
            raise ValueError(f"unknown {self.prefix} kind {detail!r}")
        return f"{self.prefix}:{detail}"

    @property
    def form(self) -> str:
        """The code as documented: `missing_tool:NAME`, `tests_failed`."""
        return self.prefix if self.detail is None else f"{self.prefix}:{self.detail}"


REGISTRY: dict[str, ReasonCode] = {}


def _code(
    prefix: str,
    kind: str,
    meaning: str,
    detail: str | None = None,
    *,
    order: int,
    static: bool = False,
    details: dict[str, str] | None = None,
    status: str | None = None,
    fail_details: tuple[str, ...] = (),
) -> ReasonCode:
    if kind not in KINDS or prefix in REGISTRY or status not in (None, ERROR, DISPUTED):
        raise ValueError(f"bad registration {prefix!r} ({kind})")
    code = ReasonCode(
        prefix, kind, order, static, detail, meaning, details, status, frozenset(fail_details)
    )
    REGISTRY[prefix] = code
    return code


# -- golden (tool-using) cases: recorded in this order by graders/tools.py --------------

MISSING_TOOL = _code("missing_tool", "tool", "a required tool was not called", "NAME", order=0)
FORBIDDEN_TOOL = _code("forbidden_tool", "tool", "a forbidden tool was called", "NAME", order=1)
MISSING_TEXT = _code(
    "missing_text", "text", "required text absent (case-insensitive)", "NEEDLE", order=2
)
FORBIDDEN_TEXT = _code(
    "forbidden_text", "text", "forbidden text present (case-insensitive)", "NEEDLE", order=3
)

# -- coding items: static checks first, then the test run, then the sandbox -------------

OUTSIDE_SURFACE = _code(
    "outside_surface",
    "static",
    "a file outside the item's expected_files",
    "PATH",
    order=10,
    static=True,
)
MISSING_FILE = _code(
    "missing_file", "static", "an expected file was not provided", "NAME", order=11, static=True
)
SYNTAX_ERROR = _code(
    "syntax_error", "static", "a Python file does not compile", "FILE", order=12, static=True
)
FORBIDDEN_IMPORT = _code(
    "forbidden_import",
    "static",
    "a forbidden module is imported (import, from, __import__, importlib)",
    "MODULE",
    order=13,
    static=True,
)
TAMPERING = _code(
    "tampering",
    "integrity",
    "the candidate interfered with how it is graded",
    "KIND",
    order=14,
    details={
        "report": "the test report was forged or altered",
        "pytest": "pytest itself was patched or replaced",
        "canary": "a canary planted for the grade was touched",
        "test_file": "the test file was modified",
        "witness": "plain pytest failed what the witness passed: the candidate behaves "
        "otherwise when the tests import it (seen where both run, as in `evalpin check`)",
    },
)
TESTS_FAILED = _code(
    "tests_failed",
    "test",
    "a test failed or errored, or the report is missing or unreadable",
    order=15,
)
TIMEOUT = _code("timeout", "test", "killed after the item's timeout_s", order=15)
# Plain pytest passed the case; the witness, the same tests under process isolation (the
# candidate in a sandbox of its own, pytest on stand-ins), did not. Not the candidate's
# failure and not a pass: a disputed case.
WITNESS = _code(
    "witness",
    "witness",
    "plain pytest passed the tests, the witness (process isolation) did not",
    "KIND",
    order=16,
    details={
        "unsupported": "the tests did something the wire cannot carry to the candidate "
        "(named in the witness's tail)",
        "failed": "a test failed or errored under the witness (named in `witness_failed_tests`)",
        "timeout": "the witness ran past its own timeout (a multiple of the item's)",
        "memory": "the witness's two processes reached the item's memory cap",
        "sandbox": "the witness's sandbox could not start or get ready",
        "shadowed": "a star import of the candidate's module would replace a builtin the "
        "test uses or a name it has (`all`, `len`, its own `approx`) with the candidate's: "
        "the candidate would decide the asserts (a name the test imports by name is its own)",
        "compared": "a failing test had compared a candidate's object with the test's own "
        "data, which the candidate's class answers by its own rule (`version == (1, 0)`, "
        '`uri == "http://..."`): that answer is the candidate\'s word, which the witness '
        "never believes (named in the witness's tail)",
    },
    status=DISPUTED,
)
SANDBOX_ERROR = _code(
    "sandbox_error",
    "infra",
    "the sandbox could not run the tests",
    "KIND",
    order=17,
    details={
        "unsupported_language": "the item's language is not python",
        "test_file": "the item's test file could not be read",
        "workdir": "the scratch work directory could not be made",
        "start": "the sandboxed process could not start",
        "setup": "the sandbox started but did not get ready",
        "memory": "the memory limit was reached",
        "disk": "a folder the tests write in (the work folder, /tmp, /dev/shm) was full: "
        "the disk cap per case was reached",
        "unsupported": "recorded by evalpin before 0.4, which graded under process "
        "isolation alone: the tests did something it cannot carry (now `witness:unsupported`)",
        "worker_lost": "every Dask worker that tried to grade it died (retries exhausted)",
    },
    status=ERROR,
    # The candidate's code used too much of a cap the item's instrument sets (memory,
    # disk): its own failure, as a test that fills a real disk fails.
    fail_details=("memory", "disk"),
)

# -- the model slot and the tool loop ---------------------------------------------------

NO_COMPLETION = _code(
    "no_completion", "infra", "the slot has no completion for this case", order=20, status=ERROR
)
PROVIDER_ERROR = _code(
    "provider_error",
    "infra",
    "the provider gave no usable completion",
    "KIND",
    order=21,
    # Closed on purpose: records are grepped and diffed on these strings, so a new kind
    # is a contract change (CHANGELOG.md), not a free-form message.
    details={
        "timeout": "no answer in time: client timeout, HTTP 408, or a command past timeout_s",
        "connection": "the endpoint could not be reached or dropped the connection",
        "rate_limited": "HTTP 429 on every attempt",
        "server_error": "HTTP 5xx on every attempt",
        "auth": "HTTP 401/403: the key was refused (never retried)",
        "bad_request": "any other HTTP 4xx, or a tool schema that cannot be sent",
        "bad_response": "the response body is not JSON or not shaped like a chat completion",
        "empty_choices": "a chat completion with no choices",
        "oversized": "the response is larger than evalpin accepts",
        "command_failed": "a command slot's program could not start or exited non-zero",
        "bad_output": "a command slot's stdout is not one JSON completion",
    },
    status=ERROR,
)
TOOL_LOOP_EXHAUSTED = _code(
    "tool_loop_exhausted", "infra", "the model kept calling tools past the loop cap", order=22
)

# -- other tools' logs ------------------------------------------------------------------

SCORE = _code(
    "score", "score", "another tool's score that is neither pass nor fail", "VALUE", order=30
)
LOG_ERROR = _code(
    "log_error",
    "infra",
    "another tool's sample that could not be judged: an error case, not a fail",
    "KIND",
    order=31,
    details={
        "error": "the tool recorded an error for the sample (its message kept)",
        "cancelled": "the sample was cancelled before it was scored",
        "unscored": "the sample has no value for the chosen scorer or metric",
    },
    status=ERROR,
)
ASSERT = _code(
    "assert",
    "score",
    "a promptfoo assertion of this type failed (threshold: the assertions passed one by "
    "one, the test's weighted score fell short of its threshold)",
    "TYPE",
    order=32,
)


def lookup(code: str) -> ReasonCode | None:
    """The registered code `code` is an instance of, or None.

    A closed detail must be one of its registered kinds, and a code that takes a detail
    must have its colon: `provider_error:whatever` and bare `missing_tool` are not
    registered. An open detail may be empty (a file named "" is still outside the surface).
    """
    prefix, colon, detail = code.partition(":")
    entry = REGISTRY.get(prefix)
    if entry is None or (entry.detail is None) == bool(colon):
        return None
    if entry.details is not None and detail not in entry.details:
        return None
    return entry


def code_status(code: str) -> str | None:
    """The status a recorded code gives its case: "error" (no completion came, the
    sandbox could not run the tests, another tool's sample errored), "disputed" (plain
    pytest passed, the witness did not), or None (a pass or a fail decides)."""
    entry = lookup(code)
    if entry is None or code.partition(":")[2] in entry.fail_details:
        return None
    return entry.status


def is_error(code: str) -> bool:
    """Whether a recorded code means its case could not be judged at all: an error case
    (status "error"), never a pass or a fail."""
    return code_status(code) == ERROR


def is_disputed(code: str) -> bool:
    """Whether a recorded code is the witness's: a disputed case, never a pass or a fail."""
    return code_status(code) == DISPUTED


def status_of(codes: list[str]) -> str | None:
    """A case's status from its reasons: "error" when any says it could not be judged,
    else "disputed" when the witness did not pass it, else None (its `pass` decides).
    The one place that decides what an error and a dispute are."""
    statuses = set(map(code_status, codes))
    return ERROR if ERROR in statuses else DISPUTED if DISPUTED in statuses else None


def kind_of(code: str) -> str:
    """How a recorded code is shown: its registered kind, or `unknown`."""
    entry = lookup(code)
    return UNKNOWN if entry is None else entry.kind


def is_static(code: str) -> bool:
    """True for the static-check violations the publish card counts."""
    entry = lookup(code)
    return entry is not None and entry.static


def in_order(codes: list[str]) -> list[str]:
    """Deduplicated and sorted by their prefix's order (stable within an order; unknown
    prefixes last), so two runs that failed for the same reasons record the same list."""
    last = max(c.order for c in REGISTRY.values()) + 1

    def rank(code: str) -> int:
        entry = REGISTRY.get(code.partition(":")[0])
        return last if entry is None else entry.order

    return sorted(dict.fromkeys(codes), key=rank)


def markdown_table() -> str:
    """The reason-code table of the docs (reference/reasons), in registry order."""
    rows = ["| code | kind | static check | meaning |", "|---|---|---|---|"]
    for c in sorted(REGISTRY.values(), key=lambda c: c.order):
        meaning = c.meaning
        if c.details:
            meaning += "; KIND: " + ", ".join(f"`{k}`" for k in c.details)
        if c.status is not None:
            meaning += f" (a{'n' if c.status == ERROR else ''} {c.status} case, not a fail" + (
                f"; except {', '.join(f'`{d}`' for d in sorted(c.fail_details))})"
                if c.fail_details
                else ")"
            )
        rows.append(f"| `{c.form}` | {c.kind} | {'yes' if c.static else ''} | {meaning} |")
    return "\n".join(rows) + "\n"
