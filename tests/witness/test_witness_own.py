"""A candidate's list, dict or set subclass as an object of its own (issue 48, the
object model's table: wire/own.py): its instance attributes are the worker's object's
(one set over a builtin method's name reads back as set, by the test or by the
candidate's own code), its `__dict__` never shows the wire's reference, its pickling
hooks are its class's. Correct candidates grade `pass`; instance attributes that claim
comparisons or truth never make a wrong answer pass. Real sandboxed runs."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-record-dicts-own-attributes-over-builtin-method-names",
        "records.py",
        """
        class Record(dict):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.items_seen = 0

            def note(self, label):
                self.copy = label  # its own attribute over dict.copy, as written
                self.items_seen += 1

            def __getstate__(self):
                return {"data": dict(self), "seen": self.items_seen}

            def __setstate__(self, state):
                self.update(state["data"])
                self.items_seen = state["seen"]


        class Trail(list):
            pass


        def make():
            return Record(a=1)
        """,
        """
        import records


        def test_attributes_are_the_objects_own():
            r = records.make()
            assert callable(r.values) and list(r.values()) == [1]
            r.values = "shadowed"
            assert r.values == "shadowed"
            assert r == {"a": 1} and "values" not in r
            assert vars(r) == {"items_seen": 0, "values": "shadowed"}
            assert r.__dict__ == {"items_seen": 0, "values": "shadowed"}
            del r.values
            assert list(r.values()) == [1]


        def test_the_candidates_own_code_shadows_too():
            r = records.make()
            assert r.copy() == {"a": 1}
            r.note("kept")
            assert r.copy == "kept" and r.items_seen == 1


        def test_pickling_hooks_are_the_classes():
            r = records.make()
            assert r.__getstate__() == {"data": {"a": 1}, "seen": 0}
            fresh = records.Record()
            fresh.__setstate__({"data": {"b": 2}, "seen": 5})
            assert fresh == {"b": 2} and fresh.items_seen == 5


        def test_a_list_subclass_too():
            t = records.Trail([3, 1])
            t.sort = "not a method"
            assert t.sort == "not a method" and vars(t) == {"sort": "not a method"}
            t.append(2)
            assert sorted(t) == [1, 2, 3]
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        "instance-attributes-claiming-equality-and-truth",
        "forged.py",
        """
        class Answer(dict):
            def __init__(self):
                super().__init__(wrong=True)
                self.__eq__ = lambda other: True
                self.__bool__ = lambda: True
                self.__len__ = lambda: 1
                self.keys = lambda: ["right"]
                self.items = lambda: [("right", 1)]


        def solve():
            return Answer()
        """,
        """
        import forged


        def test_solves():
            assert forged.solve() == {"right": 1}
        """,
    ),
)


def test_the_cases_behave_so_in_plain_pytest(tmp_path) -> None:
    """The correct case passes plain pytest in-process (the attack does not: plain
    pytest alone decides a fail, and the witness must agree, not forge a pass)."""
    assert_plain_passes(CARRIED, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_container_subclass_is_an_object_of_its_own(grade, backend: Isolation, name) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_instance_attributes_never_decide_a_comparison(grade, backend: Isolation, name) -> None:
    expect(grade(ATTACKS[name], backend), "fail")
