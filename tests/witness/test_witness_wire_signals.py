"""The wire's own signals never reach a test as an error of the candidate's (issue 48).
An array of objects a candidate's object (or a library's, a plot's line) holds and
hands back crosses by value, its items each by its own rule: it was kept in step, and
its encoder's by-reference signal once came back as the exception of the method that
returned it. What the wire cannot send back at all (a value nested deeper than it
carries, met on either side) is the wire's refusal: noted, the case disputed as
`witness:unsupported`, never a failure showing the wire's own exception class.
Each correct case passes plain `python -m pytest` in-process."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "an-object-array-its-holder-keeps",
        "ledger.py",
        """
        from fractions import Fraction

        import numpy as np


        class Ledger:
            def __init__(self):
                self.shares = np.array([Fraction(1, 3), Fraction(1, 6), None], dtype=object)

            def settled(self):
                return self.shares


        ROSTER = np.full((2, 3), None, dtype=object)
        ROSTER[0, 1] = ["ada", "lin"]
        ROSTER[1, 2] = ("bo", 7)


        def roster():
            return ROSTER
        """,
        """
        from fractions import Fraction

        import numpy as np

        from ledger import Ledger, roster


        def test_the_holders_array_read_twice():
            book = Ledger()
            shares = book.shares
            assert shares.dtype == object and shares.shape == (3,)
            assert shares[0] + shares[1] == Fraction(1, 2) and shares[2] is None
            assert list(book.settled()[:2]) == [Fraction(1, 3), Fraction(1, 6)]


        def test_a_grid_of_objects_keeps_its_shape_and_items():
            grid = roster()
            assert grid.shape == (2, 3) and grid[0, 0] is None
            assert grid[0, 1] == ["ada", "lin"] and grid[1, 2] == ("bo", 7)
            assert np.count_nonzero(grid == None) == 4  # noqa: E711 (numpy's elementwise)
        """,
    ),
    _case(
        "a-steps-line-of-moments-read-back",
        "levels.py",
        """
        from datetime import datetime, timedelta

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt


        def chart(start, readings):
            moments = [start + timedelta(hours=i) for i in range(len(readings))]
            fig, ax = plt.subplots()
            ax.step(moments, readings, where="post")
            return ax
        """,
        """
        from datetime import datetime, timedelta

        import numpy as np

        from levels import chart


        def test_the_lines_moments_are_the_candidates():
            ax = chart(datetime(2030, 3, 1, 6), [4, 9, 2, 5])
            (line,) = ax.get_lines()
            moments = line.get_xdata()
            assert moments[-1] - moments[0] == timedelta(hours=3)
            stamps = np.array(moments, dtype="datetime64[s]")
            assert (np.diff(stamps) == np.timedelta64(3600, "s")).all()
            assert list(line.get_ydata()) == [4, 9, 2, 5]
        """,
    ),
)

# An array of objects that holds itself, or holds a list holding it, crosses by
# reference (no value spells the cycle): one stand-in, its items the array again.
CARRIED.update(
    _corpus(
        _case(
            "an-object-array-that-holds-itself",
            "ring.py",
            """
            import numpy as np

            RING = np.empty(3, dtype=object)
            RING[0], RING[1], RING[2] = RING, "tail", np.array([1.5, 2.5])
            CHAIN = np.empty(2, dtype=object)
            CHAIN[0], CHAIN[1] = ["link", None], 2
            CHAIN[0][1] = CHAIN


            def ring():
                return RING


            def chain():
                return CHAIN
            """,
            """
            import numpy as np

            from ring import chain, ring


            def test_the_ring_holds_itself():
                loop = ring()
                assert isinstance(loop, np.ndarray) and loop[0] is loop
                assert loop[1] == "tail" and loop[2].sum() == 4.0


            def test_the_chain_holds_itself_through_a_list():
                links = chain()
                assert links[0][0] == "link" and links[0][1] is links and links[1] == 2
            """,
        )
    )
)

# What the wire cannot send back, whichever side meets it: the case is the grader's
# limit, named, never a failure with the wire's own exception in the test.
REFUSED = _corpus(
    _case(
        "a-tower-too-tall-to-send-back",
        "towers.py",
        """
        def tower(height):
            top = []
            for _ in range(height):
                top = [top]
            return top
        """,
        """
        from towers import tower


        def test_the_tower_is_as_tall_as_asked():
            top, height = tower(240), 0
            while top:
                top, height = top[0], height + 1
            assert height == 240
        """,
    ),
    _case(
        "a-tower-too-tall-for-the-tests-callback",
        "relay.py",
        """
        def relay(deliver, height):
            top = []
            for _ in range(height):
                top = [top]
            try:
                return deliver(top)
            except TypeError:
                return "undeliverable"
        """,
        """
        from relay import relay


        def test_the_callback_gets_the_whole_tower():
            seen = []
            assert relay(seen.append, 240) is None
            assert len(seen) == 1
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    assert_plain_passes({**CARRIED, **REFUSED}, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_an_object_array_crosses_by_value(grade, backend, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_cannot_cross_is_the_wires_named_refusal(grade, backend, name: str) -> None:
    outcome = grade(REFUSED[name], backend)
    assert (outcome.passed, outcome.reasons) == (False, ["witness:unsupported"]), (
        outcome.witness_tail
    )
    assert "[unsupported] a value nested deeper than the wire carries" in outcome.witness_tail
