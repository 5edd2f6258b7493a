"""What the witness refuses by design is named where it happens (issue 48: the object
model's inherent rows; wire/inherent.py): a candidate's object made an instance of a
tests' class, a private name or a module of the tests' read by the candidate, a tests'
traceback whose source lines the candidate reads, a frame past its caller (the test's).
A correct candidate meeting one ends `witness:unsupported` (disputed, the grader's
limit), its tail naming it; when another test fails for a reason no note covers, the
case still says `witness:failed`. Real sandboxed runs."""

from __future__ import annotations

import pytest

from evalpin.core.instrument.graders.wire import notes
from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, grade, item, verdict

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

_HELPERS = """
import json
import sys
import traceback


class Deferred:
    \"\"\"Becomes what its factory makes, on first use.\"\"\"

    def __init__(self, factory):
        self.__dict__["_factory"] = factory

    def __getattr__(self, name):
        made = self._factory()
        object.__setattr__(self, "__class__", made.__class__)
        object.__setattr__(self, "__dict__", made.__dict__)
        return getattr(self, name)


def label(obj):
    return f"{obj._kind}:{obj.name}"


def dump(settings, value):
    return settings.codec.dumps(value)


def where(tb):
    return traceback.extract_tb(tb)[-1].line


def asked_by():
    \"\"\"The function that called the function calling this one (a log helper's).\"\"\"
    return sys._getframe(2).f_code.co_name
"""

REFUSED = _corpus(
    _case(
        "an-object-becoming-an-instance-of-the-tests-class",
        "lazy.py",
        _HELPERS,
        """
        import lazy


        class Point:
            def __init__(self):
                self.x = 3


        def test_becomes_the_tests_class():
            p = lazy.Deferred(Point)
            assert p.x == 3 and isinstance(p, Point)
        """,
    ),
    _case(
        "a-private-name-and-a-module-of-the-tests",
        "lazy.py",
        _HELPERS,
        """
        import json

        import lazy


        class Item:
            _kind = "item"
            name = "bolt"


        class Settings:
            codec = json


        def test_private_name():
            assert lazy.label(Item()) == "item:bolt"


        def test_module():
            assert lazy.dump(Settings(), [1]) == "[1]"
        """,
    ),
    _case(
        "the-source-line-of-a-tests-traceback",
        "lazy.py",
        _HELPERS,
        """
        import sys

        import lazy


        def test_line():
            try:
                raise ValueError("here")
            except ValueError:
                tb = sys.exc_info()[2]
            assert "raise ValueError" in lazy.where(tb)
        """,
    ),
    _case(
        "a-frame-of-the-tests-past-the-caller",
        "lazy.py",
        _HELPERS,
        """
        import lazy


        def report():
            return lazy.asked_by()


        def test_who_asked():
            assert report() == "test_who_asked"
        """,
    ),
)

# A registry of an installed library the candidate fills at import (its own process's
# copy of the library), used by the test's own call of that library on its object.
REFUSED["a-yaml-representer-the-candidate-registered"] = _case(
    "a-yaml-representer-the-candidate-registered",
    "points.py",
    """
    import yaml


    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y


    def _as_yaml(dumper, point):
        return dumper.represent_sequence("!point", [point.x, point.y])


    def _from_yaml(loader, node):
        return Point(*loader.construct_sequence(node))


    for _dumper in (yaml.SafeDumper, yaml.Dumper):
        yaml.add_representer(Point, _as_yaml, Dumper=_dumper)
    yaml.add_constructor("!points.Point", _from_yaml, Loader=yaml.SafeLoader)
    """,
    """
    import yaml

    from points import Point


    def test_a_point_dumps_by_its_tag():
        assert yaml.safe_dump(Point(1, 2)).startswith("!point")


    def test_the_full_dumper_too():
        assert yaml.dump([Point(3, 4)], default_flow_style=True) == "[!point [3, 4]]\\n"


    def test_a_point_loads_by_its_tag():
        assert yaml.safe_load("!points.Point [5, 6]").y == 6
    """,
)

# A refusal ends its test before the test puts back what it set on the candidate's
# module, so the next test meets the setting plain pytest's never met: named too.
REFUSED["a-refusal-ends-a-test-before-it-puts-a-setting-back"] = _case(
    "a-refusal-ends-a-test-before-it-puts-a-setting-back",
    "fields.py",
    """
    SEPARATOR = ", "


    def render(obj, names):
        return SEPARATOR.join(f"{name}={getattr(obj, name)}" for name in names)
    """,
    """
    import fields


    class Badge:
        _code = 7
        label = "gold"


    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y


    def test_render_with_a_separator_of_its_own():
        fields.SEPARATOR = " | "
        assert fields.render(Badge(), ["label", "_code"]) == "label=gold | _code=7"
        fields.SEPARATOR = ", "


    def test_render_with_the_default_separator():
        assert fields.render(Point(1, 2), ["x", "y"]) == "x=1, y=2"
    """,
)

# One test meets a refusal, another fails for a reason no note covers: the candidate
# answers differently inside the witness's worker (plain pytest passes it).
ANOTHER_FAILURE = _corpus(
    _case(
        "a-refusal-beside-a-failure-of-its-own",
        "lazy.py",
        _HELPERS
        + """

def double(x):
    if any(name.startswith("evalpin_wire") for name in sys.modules):
        return x * 3
    return x * 2
""",
        """
        import lazy


        class Item:
            _kind = "item"
            name = "bolt"


        def test_private_name():
            assert lazy.label(Item()) == "item:bolt"


        def test_double():
            assert lazy.double(2) == 4
        """,
    ),
)


def test_the_cases_pass_plain_pytest(tmp_path) -> None:
    assert_plain_passes({**REFUSED, **ANOTHER_FAILURE, **CLAIMED}, tmp_path)


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refusal_by_design_is_named(grade, backend: Isolation, name: str) -> None:
    outcome = grade(REFUSED[name], backend)
    assert verdict(outcome) == "disputed"
    assert outcome.reasons == ["witness:unsupported"], outcome.witness_tail
    assert "the witness could not carry: [" in outcome.witness_tail  # it says which


# A forger's worker reaching past its caller on purpose, so that its failing test is
# noted: the note names the dispute, it never makes a pass.
CLAIMED = _corpus(
    _case(
        "a-frame-read-on-purpose-beside-a-wrong-answer",
        "lazy.py",
        _HELPERS
        + """

def double(x):
    if any(name.startswith("evalpin_wire") for name in sys.modules):
        sys._getframe(3)
        return x * 3
    return x * 2
""",
        """
        import lazy


        def test_double():
            assert lazy.double(2) == 4
        """,
    ),
)


@pytest.mark.parametrize("name", list(CLAIMED))
def test_a_claimed_refusal_never_passes(grade, backend: Isolation, name: str) -> None:
    assert verdict(grade(CLAIMED[name], backend)) == "disputed"


@pytest.mark.parametrize("name", list(ANOTHER_FAILURE))
def test_another_failure_still_says_failed(grade, backend: Isolation, name: str) -> None:
    outcome = grade(ANOTHER_FAILURE[name], backend)
    assert verdict(outcome) == "disputed"
    assert outcome.reasons == ["witness:failed"], outcome.witness_tail


def _said(*rows: str) -> bytes:
    return "".join(notes.line("inherent", row) for row in rows).encode()


def test_a_failure_after_a_refusal_that_left_a_setting_is_its_consequence() -> None:
    private = "a private name (in test_x.py::T::test_a)"
    said = _said(private, f"{notes.LEFT}m.SEP (in test_x.py::T::test_a)")
    assert notes.inherent_in(said, ["T::test_a", "test_b", "test_c[2]"])
    assert not notes.inherent_in(said, ["test_0", "T::test_a", "test_b"])  # one before it
    assert not notes.inherent_in(said, ["test_b"])  # the refused test itself passed
    assert not notes.inherent_in(_said(private), ["T::test_a", "test_b"])  # it set nothing


def test_every_failing_test_must_be_noted() -> None:
    said = _said("a module (in test_x.py::T::test_a)", "a private name (in test_x.py::test_b)")
    assert notes.inherent_in(said, ["T::test_a", "test_b[1]"])
    assert not notes.inherent_in(said, ["T::test_a", "test_c"])
    assert not notes.inherent_in(said, [])
    assert notes.inherent_in(_said("met at collection"), ["test_c"])  # outside any test
    assert not notes.compared_in(said, ["T::test_a"])  # the asides keep their kinds
