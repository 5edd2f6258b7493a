"""Correct candidates that once broke the wire itself (issue 48): a protocol error or a
worker gone mid-test is the wire's bug, never the candidate's. Each case passes plain
`python -m pytest` in-process and must grade `pass` under `isolation: process`. Real
sandboxed runs through the real pipeline."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.test_true_grade import Case, _corpus, _d, grade, item, plain_failures
from tests.test_witness_idioms import verdict

__all__ = ["grade", "item"]  # the fixtures, shared with test_true_grade (`backend`: conftest)

pytestmark = pytest.mark.wire


def _case(name: str, module_file: str, module_src: str, test_src: str) -> Case:
    return Case(name, module_file, _d(module_src), _d(test_src))


CARRIED = _corpus(
    _case(
        "the-tests-class-handed-over-again",
        "registry.py",
        """
        KINDS = {}


        def register(cls, *names):
            for name in names:
                KINDS[name] = cls
            return cls


        def make(name, *args):
            return KINDS[name](*args)
        """,
        """
        import registry as m


        class Point:
            def __init__(self, x=0, y=0):
                self.x, self.y = x, y


        def test_registered_again_and_made():
            assert m.register(Point, "point") is Point
            assert m.register(Point, "P", "pt") is Point
            assert m.register(Point) is Point
            p = m.make("pt", 2, 3)
            assert isinstance(p, Point) and (p.x, p.y) == (2, 3)
        """,
    ),
    _case(
        "a-bound-callable-object-without-a-name",
        "binding.py",
        """
        import functools
        import types


        class Preset(functools.partial):
            def __get__(self, obj, owner=None):
                return self if obj is None else types.MethodType(self, obj)


        class Greeter:
            def __init__(self, who):
                self.who = who

            def greet(self, end="."):
                return f"hi {self.who}{end}"

            loud = Preset(greet, end="!")


        def greeting(who):
            return Greeter(who).loud
        """,
        """
        import binding as m


        def test_a_bound_preset_crosses_and_is_called():
            assert m.greeting("ana")() == "hi ana!"
            assert m.Greeter("bo").loud() == "hi bo!"
        """,
    ),
    _case(
        "lazy-objects-that-import-on-any-lookup",
        "moves.py",
        """
        import importlib


        class Moved:
            def __init__(self, name, module):
                self.name, self.module = name, module

            def __getattr__(self, attr):
                return getattr(importlib.import_module(self.module), attr)


        MOVED = [Moved("gone", "no_such_module_for_evalpin"), Moved("codec", "json")]
        """,
        """
        import moves as m


        def test_the_names_are_read_without_importing():
            assert [x.name for x in m.MOVED] == ["gone", "codec"]
            assert m.MOVED[1].dumps([1]) == "[1]"
        """,
    ),
    _case(
        "a-spy-on-os-getcwd-counts-the-candidates-calls-only",
        "where.py",
        """
        import os


        def describe(scrub):
            return {"cwd": "-" if scrub else os.getcwd(), "pid": "-"}
        """,
        """
        import os

        import where as m


        def test_scrubbed_never_asks(monkeypatch):
            calls = []
            real = os.getcwd

            def spy():
                calls.append(1)
                return real()

            monkeypatch.setattr(os, "getcwd", spy)
            assert m.describe(True)["cwd"] == "-"
            assert calls == []
            assert m.describe(False)["cwd"] == real()
            assert calls == [1]
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    failed = plain_failures(CARRIED, tmp_path)
    assert failed == {}, "\n\n".join(f"== {name}\n{out}" for name, out in failed.items())


@pytest.mark.parametrize("name", list(CARRIED))
def test_the_wire_carries_it(grade, backend: Isolation, name: str) -> None:
    outcome = grade(CARRIED[name], backend)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail)
