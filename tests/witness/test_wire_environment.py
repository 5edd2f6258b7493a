"""More of what a test sets up for the code under test, under `isolation: process`: log
capture, warnings, stdlib patches (monkeypatch and mock.patch), coroutines, callables of
operator/functools, pytest's legacy `tmpdir`, a container attribute changed in place; and
what the wire cannot carry, which is the grader's limit (`witness:unsupported`: disputed),
never the candidate's fail. Real sandboxed runs on both backends, like test_true_grade."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import Case, _corpus, _d, expect, grade, item, plain_pytest

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)
pytestmark = pytest.mark.wire  # the default backend, a parity share on the other: tests/lanes.py

CORRECT = _corpus(
    Case(
        "caplog-sees-the-candidates-records",
        "worker_log.py",
        _d(
            """
            import logging

            log = logging.getLogger("worker_log")


            def work(n):
                log.info("working on %d", n)
                if n < 0:
                    log.warning("negative input")
                return abs(n)
            """
        ),
        _d(
            """
            import logging

            import worker_log as m


            def test_records(caplog):
                caplog.set_level(logging.INFO)
                assert m.work(-3) == 3
                assert [r.levelname for r in caplog.records] == ["INFO", "WARNING"]
                assert "working on -3" in caplog.text
                assert caplog.records[0].name == "worker_log"


            def test_level_filters(caplog):
                caplog.set_level(logging.WARNING)
                m.work(2)
                assert caplog.records == []
            """
        ),
    ),
    Case(
        "pytest-warns-sees-the-candidates-warning",
        "legacy.py",
        _d(
            """
            import warnings


            class LegacyWarning(DeprecationWarning):
                pass


            def old_api():
                warnings.warn("old_api is deprecated", DeprecationWarning, stacklevel=2)
                return 1


            def older_api():
                warnings.warn("older", LegacyWarning)
                return 2
            """
        ),
        _d(
            """
            import pytest

            import legacy as m


            def test_warns():
                with pytest.warns(DeprecationWarning, match="deprecated"):
                    assert m.old_api() == 1


            def test_own_category():
                with pytest.warns(m.LegacyWarning):
                    assert m.older_api() == 2
            """
        ),
    ),
    Case(
        "stdlib-patches-hold-in-the-candidate",
        "slow.py",
        _d(
            """
            import random
            import sys
            import time


            def wait_and_say():
                time.sleep(60)
                return "done"


            def roll():
                return random.randint(1, 6)


            def flags():
                return sys.argv[1:]


            def stamp():
                return time.time()
            """
        ),
        _d(
            """
            import sys
            import time
            from unittest import mock

            import slow as m


            def test_monkeypatched_sleep(monkeypatch):
                monkeypatch.setattr(time, "sleep", lambda seconds: None)
                assert m.wait_and_say() == "done"


            def test_mock_patch_context():
                with mock.patch("random.randint", return_value=4):
                    assert m.roll() == 4
                assert 1 <= m.roll() <= 6


            @mock.patch("time.time", return_value=12.5)
            def test_mock_patch_decorator(fake):
                assert m.stamp() == 12.5


            def test_argv_and_dotted_form(monkeypatch):
                monkeypatch.setattr(sys, "argv", ["prog", "--fast"])
                monkeypatch.setattr("time.time", lambda: 5.0)
                assert m.flags() == ["--fast"] and m.stamp() == 5.0


            def test_undone_after_each_test():
                assert m.stamp() > 1_000_000 and m.flags() != ["--fast"]
            """
        ),
    ),
    Case(
        "asyncio-run-on-the-candidates-coroutines",
        "fetcher.py",
        _d(
            """
            import asyncio


            async def fetch(x):
                await asyncio.sleep(0.001)
                return x * 2


            async def fetch_all(xs):
                return await asyncio.gather(*(fetch(x) for x in xs))
            """
        ),
        _d(
            """
            import asyncio

            import fetcher as m


            def test_run():
                assert asyncio.run(m.fetch_all([1, 2, 3])) == [2, 4, 6]


            def test_await_inside_the_tests_coroutine():
                async def main():
                    return await m.fetch(5)

                assert asyncio.run(main()) == 10
            """
        ),
    ),
    Case(
        "operator-and-functools-callables",
        "ordering.py",
        _d(
            """
            def order(rows, key):
                return sorted(rows, key=key)
            """
        ),
        _d(
            """
            import functools
            import operator

            import ordering as m


            def test_itemgetter():
                rows = [(1, "b"), (2, "a")]
                assert m.order(rows, operator.itemgetter(1)) == [(2, "a"), (1, "b")]


            def test_cmp_to_key():
                key = functools.cmp_to_key(lambda a, b: b - a)
                assert m.order([1, 3, 2], key) == [3, 2, 1]
            """
        ),
    ),
    Case(
        "legacy-tmpdir-and-a-tests-class",
        "files_legacy.py",
        _d(
            """
            def read(folder):
                with open(str(folder) + "/data.txt") as f:
                    return f.read()


            def now_of(clock):
                return clock.now() + clock.offset
            """
        ),
        _d(
            """
            import files_legacy as m


            def test_tmpdir(tmpdir):
                tmpdir.join("data.txt").write("legacy")
                assert m.read(tmpdir) == "legacy"


            class FixedClock:
                offset = 2

                @classmethod
                def now(cls):
                    return 40


            def test_a_class_handed_over():
                assert m.now_of(FixedClock) == 42
            """
        ),
    ),
    Case(
        "container-attribute-changed-in-place",
        "inventory.py",
        _d(
            """
            class Inventory:
                def __init__(self):
                    self.items = []
                    self.counts = {}

                def add(self, name):
                    self.items.append(name)
                    self.counts[name] = self.counts.get(name, 0) + 1

                def total(self):
                    return len(self.items)
            """
        ),
        _d(
            """
            import inventory as m


            def test_the_test_changes_the_candidates_list():
                inv = m.Inventory()
                inv.items.append("seed")
                inv.add("apple")
                assert inv.items == ["seed", "apple"] and inv.total() == 2


            def test_a_held_list_follows_the_candidate():
                inv = m.Inventory()
                items, counts = inv.items, inv.counts
                inv.add("pear")
                assert items == ["pear"] and counts == {"pear": 1}
                counts["plum"] = 3
                assert inv.counts["plum"] == 3
            """
        ),
    ),
)

# The tests hand over something the wire does not carry (a frame of their own): not
# the candidate's fail.
UNSUPPORTED = Case(
    "a-frame-handed-over",
    "announce.py",
    _d(
        """
        def announce(frame, text):
            return f"{frame.f_code.co_name}: {text}"
        """
    ),
    _d(
        """
        import sys

        import announce as m


        def test_announce():
            assert m.announce(sys._getframe(), "hello") == "test_announce: hello"
        """
    ),
)


def test_the_cases_pass_in_plain_pytest(tmp_path) -> None:
    for name, run in plain_pytest({**CORRECT, UNSUPPORTED.name: UNSUPPORTED}, tmp_path).items():
        assert run.returncode == 0 and " skipped" not in run.stdout, f"{name}:\n{run.stdout}"


@pytest.mark.parametrize("name", list(CORRECT))
def test_the_tests_environment_reaches_the_candidate(grade, backend: Isolation, name) -> None:
    outcome = grade(CORRECT[name], backend)
    assert outcome.reasons == [], outcome.tail
    assert outcome.passed


def test_what_the_wire_cannot_carry_is_the_graders_limit(grade, backend: Isolation) -> None:
    outcome = grade(UNSUPPORTED, backend)
    assert (outcome.passed, outcome.reasons) == (False, ["witness:unsupported"])  # disputed
    assert "unsupported under process isolation: handing a builtins.frame" in outcome.witness_tail


SET_ORDER = Case(
    "names-joined-from-a-set-as-the-test-joins-them",
    "tags.py",
    _d(
        """
        def tags(text):
            return ", ".join({word.strip("#") for word in text.split() if word[0] == "#"})


        def shown(words):
            return repr(set(words))
        """
    ),
    _d(
        """
        from tags import shown, tags

        NAMES = ["ash", "birch", "cedar", "elm", "fir", "hazel", "larch", "oak", "yew"]


        def test_joined_in_the_order_of_a_set():
            text = " ".join("#" + n for n in NAMES) + " and more"
            assert tags(text) == ", ".join(set(NAMES))


        def test_a_sets_repr():
            assert shown(NAMES) == repr(set(NAMES))
        """
    ),
)


def test_both_sides_order_a_set_of_strings_alike(grade, backend: Isolation) -> None:
    """A set of strings iterates in its hash order, which in one process is the same on
    both sides of a call: every sandbox of a grader starts with the grader's one seed,
    forked from the fork server or started by the launcher (bwrap, a grader that is not
    root, `EVALPIN_POOL=0`), so the case passes on every path."""
    expect(grade(SET_ORDER, backend), "pass")
