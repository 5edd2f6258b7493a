"""The witness's notes: one line for each thing it could not confirm, tagged with why,
written by the judge into a file the grader reads after the run (never by the worker).
`unsupported`: an operation the wire cannot carry; `shadowed`: a star import of the
candidate's module would replace a name the test decides with (its builtins, its own
names). An untagged line (the stand-in run as a script) is `unsupported`."""

from __future__ import annotations

KINDS = ("shadowed", "unsupported")  # the first found, in this order, names the case's
# Lines that leave the case judged, and say why a test then failed: `compared`, a
# comparison of a candidate's object with the tests' data whose answer, the candidate's
# own word, the judge did not believe (the object model's inherent row); `inherent`,
# something the witness refuses by design, in that test (`inherent.py`).
ASIDES = ("compared", "inherent")
# an `inherent` aside's opening: the test it ended had set names of the candidate's
LEFT = "the refusal ended the test before its own cleanup; it had set "


def line(kind: str, what: str) -> str:
    if kind not in KINDS + ASIDES:
        raise ValueError(f"unknown note kind {kind!r}")
    return f"[{kind}] " + what.replace("\n", " ") + "\n"


def kind_of(text: bytes) -> str | None:
    """Why the witness could not confirm a case, from its notes; None when it noted
    nothing."""
    lines = [row for row in _rows(text) if not _aside(row)]
    if not lines:
        return None
    for kind in KINDS:
        if any(row.startswith(f"[{kind}] ") for row in lines):
            return kind
    return "unsupported"


def asides(text: bytes) -> list[str]:
    """The lines that say why a test may have failed without leaving the case unjudged."""
    return [row for row in _rows(text) if _aside(row)]


def _rows(text: bytes) -> list[str]:
    return [row for row in text.decode("utf-8", "replace").split("\n") if row.strip()]


def _aside(row: str) -> bool:
    return any(row.startswith(f"[{kind}] ") for kind in ASIDES)


def compared_in(text: bytes, failed: list[str]) -> bool:
    """Whether a failing test (as the report names it: no file, no parameters) made a
    comparison noted `compared`; a note made outside any test counts for any failure."""
    anywhere, tests = _noted(text, "compared")
    return anywhere or any(_bare(name) in tests for name in failed)


def inherent_in(text: bytes, failed: list[str]) -> bool:
    """Whether every failing test met something the witness refuses by design: then
    the case is the grader's limit; one failing test without such a note keeps it
    failed (the note never speaks for another failure), unless it failed after (in
    `failed`'s order, the run's) a failing test whose refusal left the candidate's
    modules as that test's own code had set them (`LEFT`): what it met is
    not what plain pytest's met."""
    anywhere, tests = _noted(text, "inherent")
    if anywhere:
        return bool(failed)
    _, left = _noted(text, "inherent", LEFT)
    ended = False
    for name in failed:
        if _bare(name) not in tests and not ended:
            return False
        ended = ended or _bare(name) in left
    return bool(failed)


def _bare(name: str) -> str:
    return name.split("[", 1)[0]


def _noted(text: bytes, kind: str, opening: str = "") -> tuple[bool, set[str]]:
    """Whether a `kind` aside (saying `opening` first) was made outside any test, and
    the tests it names."""
    tests = set()
    for row in _rows(text):
        if not row.startswith(f"[{kind}] {opening}"):
            continue
        _, marked, where = row.rstrip(")").rpartition(" (in ")
        if not marked or not where:
            return True, tests
        tests.add(_bare(where.split("::", 1)[-1]))
    return False, tests
