"""What the witness cannot carry by design, noted where it happens and for the test it
happens in (issue 48; the object model's inherent rows): should that test fail, and
every failing test be noted so, the case is `witness:unsupported`, the refusal named;
a test that fails with no such note still says `witness:failed`, so a note never turns
another failure into the grader's limit. One exception, noted as such: a refusal ends
its test before the test's own cleanup, so what that test's own code had set on the
candidate's modules (`settings.STRICT = False`, put back at its end) stays set for the
tests after it, which plain pytest's never met; the refusal's note then names those
names (`notes.LEFT`), and a test failing after it is its consequence (`notes.inherent_in`).
Notes are the judge's alone: this process's notes file is set only where a judge is
made (`at`), never in the worker."""

from __future__ import annotations

import os
import re

from . import notes

_NOTES: list[str] = []  # the judge's notes file, once one is made in this process
_SEEN: set = set()  # (kind, what, test) noted, the first 50
_QUIET: list[bool] = [False]  # while the judge tries what may cross unasked
_SET: dict[str, set[str]] = {}  # test -> "module.name" the test's own code set there
# what undoes its changes at teardown, whatever ended the test
_UNDOING = frozenset({"_pytest.monkeypatch", "unittest.mock"})


def at(path: str) -> str:
    """Make `path` the notes file of this process's judge; return it."""
    _NOTES[:] = [path] if path else []
    return path


def current_test() -> str:
    """The running test as pytest names it (its own variable), no stage."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]


def scoped(kind: str, what: str) -> None:
    """Note `what` (of `kind`, an aside of `notes`) once for the running test."""
    test = current_test()
    key = (kind, what, test)
    if not _NOTES or _QUIET[0] or key in _SEEN or len(_SEEN) >= 50:
        return
    _SEEN.add(key)
    with open(_NOTES[0], "a", encoding="utf-8") as f:
        f.write(notes.line(kind, f"{what} (in {test})"))


def note(what: str) -> None:
    """A refusal by design (`inherent`), in the running test (with what the test's own
    code had set on the candidate's modules by then: `notes.LEFT`)."""
    scoped("inherent", what)
    left = _SET.get(current_test())
    if left:
        scoped("inherent", notes.LEFT + ", ".join(sorted(left)))


def set_by_test(module: str, name: str, setter) -> None:
    """The running test set (or deleted) `module.name` of the candidate's, from the
    code of `setter` (a frame): its own, unless monkeypatch's or mock's."""
    test = current_test()
    if not test or setter.f_globals.get("__name__") in _UNDOING:
        return
    names = _SET.setdefault(test, set())
    if len(names) < 20:
        names.add(f"{module}.{name}")


class quiet:
    """No note while the judge tries what may cross unasked (`tracebacks.handled`)."""

    def __enter__(self) -> None:
        _QUIET[0] = True

    def __exit__(self, *exc) -> None:
        _QUIET[0] = False


# CPython's refusal to make an object an instance of a class of another layout (or kind)
_ASSIGNED = re.compile(r"__class__ assignment: '([^']*)' ")


def met(exc: BaseException, handed) -> BaseException:
    """`exc`, the worker's error, noted when it is the interpreter refusing to make a
    candidate's object an instance of one of the tests' classes (`handed`: the tests'
    objects the worker holds), as a lazy proxy does (`self.__class__ = obj.__class__`):
    an object of the worker's cannot become the tests', whose instances live in the
    test's process."""
    text = exc.args[0] if type(exc) is TypeError and len(exc.args) == 1 else None
    found = _ASSIGNED.match(text) if type(text) is str else None
    named = lambda c: (c if isinstance(c, type) else type(c)).__name__ == found[1]  # noqa: E731
    if found and any(named(c) for c in list(handed)):
        note(f"the candidate's object made an instance of the tests' class {found[1]!r}")
    return exc
