"""Class lineages and the machinery of errors across the wire (issue 48): a tests' class
in a cooperative `super()` chain between the candidate's classes (a diamond through
both), a tests' class method reached through a tests' subclass, `dir()` of a candidate
class and of an object whose class lists its own names, a traceback the test hands the
candidate (a context manager's `__exit__`, `traceback.format_exception`), and the
exception the test is handling when it calls an error reporter (`sys.exc_info()`,
`traceback.format_exc()`), the test's own module handed over (its public names), a
mock autospecced from a candidate class, a tests' subclass overriding `__call__` that
calls the candidate's own through `super()`. Each correct case passes plain `python -m
pytest` in-process and must grade `pass` under `isolation: process`. A class the
candidate derives from a tests' class cannot be carried: disputed, `witness:unsupported`,
never a fail. Each attack fools plain pytest and must stay disputed: a traceback crosses
as names and line numbers only, never the test's locals or source, and a tests' module
the tests did not hand over answers nothing new."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures, shared with test_true_grade (`backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-diamond-through-the-tests-and-the-candidates-classes",
        "stages.py",
        """
        class Stage:
            def run(self, log):
                log.append("stage")
                return log

            @classmethod
            def label(cls):
                return "stage:" + cls.__name__


        class Trim(Stage):
            def run(self, log):
                log.append("trim")
                return super().run(log)


        class Upper(Stage):
            def run(self, log):
                log.append("upper")
                return super().run(log)


        def drive(stage):
            return stage.run([])
        """,
        """
        from stages import Stage, Trim, Upper, drive


        class Audit(Stage):
            def run(self, log):
                log.append("audit")
                return super().run(log)

            @classmethod
            def label(cls):
                return "audited " + super().label()


        class Full(Trim, Audit, Upper):
            pass


        class Fuller(Full):
            def run(self, log):
                log.append("fuller")
                return super().run(log)


        def test_the_chain_goes_through_every_class_once():
            order = ["trim", "audit", "upper", "stage"]
            assert Full().run([]) == order
            assert drive(Full()) == order
            assert drive(Fuller()) == ["fuller", *order]
            names = [c.__name__ for c in Full.__mro__][:5]
            assert names == ["Full", "Trim", "Audit", "Upper", "Stage"]


        def test_a_class_method_of_the_tests_class_through_a_subclass():
            assert Full.label() == "audited stage:Full"
            assert Fuller.label() == "audited stage:Fuller"
        """,
    ),
    _case(
        "a-tests-subclass-of-a-candidates-dict",
        "records.py",
        """
        class Record(dict):
            def __init__(self, **fields):
                super().__init__()
                for name, value in fields.items():
                    self[name] = value

            def __getattr__(self, name):
                try:
                    return self[name]
                except KeyError:
                    raise AttributeError(name) from None


        def total(record):
            return sum(record.values())
        """,
        """
        from records import Record, total


        class Doubled(Record):
            def __setitem__(self, name, value):
                super().__setitem__(name, value * 2)


        def test_the_tests_override_fills_the_candidates_dict():
            rec = Doubled(a=1, b=2)
            assert isinstance(rec, dict) and rec.a == 2
            assert dict(rec) == {"a": 2, "b": 4} and total(rec) == 6
            rec["c"] = 5
            assert rec.c == 10 and total(rec) == 16
        """,
    ),
    _case(
        "names-listed-by-the-candidates-class",
        "bag.py",
        """
        class Bag(dict):
            def __getattr__(self, name):
                try:
                    return self[name]
                except KeyError:
                    raise AttributeError(name) from None

            def __dir__(self):
                return sorted(self)

            def total(self):
                return sum(self.values())


        class Plain:
            colour = "red"

            def shade(self):
                return self.colour
        """,
        """
        from bag import Bag, Plain


        def test_dir_of_an_object_is_its_classes_answer():
            assert dir(Bag(pears=2, apples=1)) == ["apples", "pears"]
            assert Bag(a=3).a == 3


        def test_dir_of_the_class_has_the_classes_names_only():
            names = dir(Plain)
            assert "shade" in names and "colour" in names
            assert not [n for n in names if n.startswith("_evalpin")]
            assert "total" in dir(Bag) and "__slots__" not in dir(Bag)
        """,
    ),
    _case(
        "the-tests-module-handed-to-the-candidate",
        "patching.py",
        """
        import inspect


        def replace_in(module):
            if not inspect.ismodule(module):
                raise TypeError("a module, please")

            def decorate(fn):
                fn.original = getattr(module, fn.__name__, None)
                return fn

            return decorate


        def plugins(module):
            return sorted(n for n in dir(module) if n.startswith("plugin_"))
        """,
        """
        import sys

        from patching import replace_in


        def scale(x):
            return x * 3


        def test_the_original_is_the_tests_modules_own():
            @replace_in(sys.modules[__name__])
            def scale(x):
                return scale.original(x) + 1

            assert scale(2) == 7
        """,
    ),
    _case(
        "an-autospec-of-a-candidates-class",
        "meter.py",
        """
        class Sensor:
            def read(self, channel):
                raise RuntimeError("no hardware here")


        def average(sensor, channels):
            return sum(sensor.read(c) for c in channels) / len(channels)
        """,
        """
        from unittest import mock

        from meter import Sensor, average


        def test_an_autospecced_sensor():
            fake = mock.create_autospec(Sensor, instance=True)
            fake.read.side_effect = [1.0, 3.0]
            assert isinstance(fake, Sensor)
            assert average(fake, ["a", "b"]) == 2.0
            assert fake.read.call_args_list == [mock.call("a"), mock.call("b")]
        """,
    ),
    _case(
        "a-traceback-handed-to-the-candidate",
        "reporting.py",
        """
        import sys
        import traceback


        class Recorder:
            def __init__(self):
                self.records = []

            def __enter__(self):
                return self

            def __exit__(self, kind, error, tb):
                if kind is not None:
                    names = [f.name for f in traceback.extract_tb(tb)]
                    text = "".join(traceback.format_exception(kind, error, tb))
                    self.records.append((names, tb.tb_lineno, text))
                return True


        def describe_current():
            kind, error, tb = sys.exc_info()
            if kind is None:
                return None
            deepest = tb
            while deepest.tb_next is not None:
                deepest = deepest.tb_next
            return kind.__name__, str(error), deepest.tb_frame.f_code.co_name


        def formatted_current():
            return traceback.format_exc()
        """,
        """
        import sys

        from reporting import Recorder, describe_current, formatted_current


        def explode():
            raise KeyError("gone")


        def test_a_context_manager_sees_the_tests_traceback():
            rec = Recorder()
            with rec:
                explode()
            (names, line, text), = rec.records
            assert names[-1] == "explode" and "test_a_context_manager" in names[0]
            assert line > 0
            assert text.startswith("Traceback (most recent call last):")
            assert text.rstrip().endswith("KeyError: 'gone'")


        def test_an_error_reporter_sees_what_the_test_is_handling():
            assert describe_current() is None
            try:
                explode()
            except KeyError:
                assert describe_current() == ("KeyError", "'gone'", "explode")
                assert formatted_current().rstrip().endswith("KeyError: 'gone'")
                assert sys.exc_info()[0] is KeyError
            assert describe_current() is None
        """,
    ),
    _case(
        "a-tests-subclass-that-counts-calls-then-calls-the-candidates-own",
        "rules.py",
        """
        class Rule:
            '''A rule is called with a value; it answers the value it accepts.'''

            def __init__(self, wanted):
                self.wanted = wanted

            def __call__(self, value, *, strict=False):
                if value != self.wanted and (strict or str(value) != str(self.wanted)):
                    raise LookupError(value)
                return self.wanted


        def first_match(rules, value, **options):
            for rule in rules:
                try:
                    return rule(value, **options)
                except LookupError:
                    continue
            return None
        """,
        """
        from rules import Rule, first_match


        def test_a_counting_rule_reaches_the_candidates_call_through_super():
            seen = []

            class Counted(Rule):
                def __call__(self, value, **options):
                    seen.append((self.wanted, value))
                    return super().__call__(value, **options)

            rules = [Counted(n) for n in range(40)]
            assert first_match(rules, "3") == 3
            assert first_match(rules, "3", strict=True) is None
            assert len(seen) == 4 + 40
            assert Counted(5)(5) == 5 and seen[-1] == (5, 5)
        """,
    ),
)

# Correct candidates the wire cannot carry: disputed, `witness:unsupported`, naming it.
UNCARRIED = _corpus(
    _case(
        "a-wrapper-class-the-candidate-derives-from-the-tests-class",
        "spy.py",
        """
        def watched(obj, seen):
            class Watched(type(obj)):
                def __getattribute__(self, name):
                    seen.append(name)
                    return object.__getattribute__(obj, name)

            return object.__new__(Watched)
        """,
        """
        from spy import watched


        class Point:
            def __init__(self, x):
                self.x = x


        def test_reads_are_seen():
            seen = []
            p = watched(Point(3), seen)
            assert p.x == 3 and seen == ["x"]
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        "the-tests-module-found-through-a-handed-function",
        "oracle.py",
        """
        import sys


        def answer(callback):
            return getattr(sys.modules[callback.__module__], "EXPECTED", 0)
        """,
        """
        from oracle import answer

        EXPECTED = 1234


        def test_answer():
            assert answer(lambda: None) == EXPECTED
        """,
    ),
    _case(
        "the-expected-value-read-from-the-handled-traceback",
        "oracle.py",
        """
        import sys


        def answer():
            tb = sys.exc_info()[2]
            while tb is not None:
                if "expected" in tb.tb_frame.f_locals:
                    return tb.tb_frame.f_locals["expected"]
                tb = tb.tb_next
            return 0
        """,
        """
        from oracle import answer


        def test_answer():
            expected = 42
            try:
                raise ValueError("ask")
            except ValueError:
                assert answer() == expected
        """,
    ),
    _case(
        "the-expected-value-read-from-the-tests-source-line",
        "oracle.py",
        """
        import linecache
        import re


        class Probe:
            def __enter__(self):
                return self

            def __exit__(self, kind, error, tb):
                line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
                found = re.findall(r"\\d+", line)
                self.value = int(found[0]) if found else 0
                return True
        """,
        """
        from oracle import Probe


        def test_probe():
            with Probe() as p:
                raise ValueError(7)  # 7
            assert p.value == 7
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """Every correct case passes plain `python -m pytest` in-process; every attack
    fools it (a forged pass)."""
    assert_plain_passes({**CARRIED, **UNCARRIED, **ATTACKS}, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_lineages_and_tracebacks_are_carried(grade, backend: Isolation, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(UNCARRIED))
def test_what_cannot_be_carried_is_named(grade, backend: Isolation, name: str) -> None:
    outcome = grade(UNCARRIED[name], backend)
    assert outcome.reasons == ["witness:unsupported"], (outcome.reasons, outcome.witness_tail)
    assert "a class the candidate derives from the tests' class" in outcome.witness_tail


@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_tests_values_never_reach_the_candidate(grade, backend: Isolation, name: str) -> None:
    expect(grade(ATTACKS[name], backend), "disputed")
