"""The witness's notes: one line for each thing it could not confirm, tagged with why,
written by the judge into a file the grader reads after the run (never by the worker).
`unsupported`: an operation the wire cannot carry; `shadowed`: a star import of the
candidate's module would replace a name the test decides with (its builtins, its own
names). An untagged line (the stand-in run as a script) is `unsupported`."""

from __future__ import annotations

KINDS = ("shadowed", "unsupported")  # the first found, in this order, names the case's


def line(kind: str, what: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown note kind {kind!r}")
    return f"[{kind}] " + what.replace("\n", " ") + "\n"


def kind_of(text: bytes) -> str | None:
    """Why the witness could not confirm a case, from its notes; None when it noted
    nothing."""
    lines = [row for row in text.decode("utf-8", "replace").split("\n") if row.strip()]
    if not lines:
        return None
    for kind in KINDS:
        if any(row.startswith(f"[{kind}] ") for row in lines):
            return kind
    return "unsupported"
