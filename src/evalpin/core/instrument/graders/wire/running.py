"""The worker's side of what the test runs of a candidate module as a whole: its doctests
(`doctest.testmod(m)`, `run_docstring_examples`) and the module as `__main__` (`runpy`,
`python -m`). Both run here: the examples and the module's code are the candidate's."""

from __future__ import annotations

_DOCTEST_OPTIONS = frozenset(
    {"name", "verbose", "report", "optionflags", "raise_on_error", "exclude_empty"}
)


def doctests(target, how: str, kwargs: dict):
    """The module's (or object's) doctests; the counts go back as
    `doctest.TestResults`."""
    import doctest

    options = {k: v for k, v in kwargs.items() if k in _DOCTEST_OPTIONS}
    if how == "testmod":
        return tuple(doctest.testmod(target, **options))
    doctest.run_docstring_examples(target, {}, **options)
    return None


def as_main(module) -> None:
    """The candidate's module run as `__main__`."""
    import runpy

    runpy.run_module(module.__name__, run_name="__main__", alter_sys=True)
