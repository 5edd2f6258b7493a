"""numpy's values under the witness (issue 42): a candidate returning numpy scalars and
small arrays, taking the test's arrays and filling them in place, is graded as plain
pytest grades it, on both namespace backends; what crosses by reference (an array of
objects, a subclass) is never a fail. Real sandboxed runs through the real pipeline."""

from __future__ import annotations

import pytest

from tests.harness import Case, _corpus, _d, grade, item, verdict

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)
pytestmark = pytest.mark.wire  # the default backend, a parity share on the other: tests/lanes.py

pytest.importorskip("numpy")

CASES = _corpus(
    Case(
        "numpy-scalars-compared-with-numbers",
        "stats_np.py",
        _d(
            """
            import numpy as np


            def count_even(values):
                return np.sum(np.asarray(values) % 2 == 0)


            def mean(values):
                return np.mean(values)


            def any_negative(values):
                return np.any(np.asarray(values) < 0)


            def widest(values):
                return np.max(np.abs(np.asarray(values, dtype=np.int32)))


            def day(text):
                return np.datetime64(text, "D")
            """
        ),
        _d(
            """
            import math

            import numpy as np
            import pytest

            from stats_np import any_negative, count_even, day, mean, widest


            def test_scalars_meet_python_numbers():
                assert count_even([1, 2, 4, 7]) == 2
                assert mean([1, 2, 3, 4]) == pytest.approx(2.5)
                assert math.isclose(mean([0.1, 0.2]), 0.15)
                assert any_negative([1, -1])
                assert not any_negative([1, 2])
                assert widest([-9, 3]) == 9
                assert isinstance(widest([1]), np.int32)
                assert int(count_even([2])) + 1 == 2
                assert [1, 2, 3][count_even([2, 4])] == 3


            def test_dates():
                assert day("2024-02-29") + np.timedelta64(1, "D") == np.datetime64("2024-03-01")
            """
        ),
    ),
    Case(
        "numpy-arrays-returned-and-filled",
        "grid_np.py",
        _d(
            """
            import numpy as np


            def identity(n):
                return np.eye(n, dtype=int)


            def normalise(row):
                row = np.asarray(row, dtype=float)
                return row / row.sum()


            def fill_diagonal(grid, value):
                np.fill_diagonal(grid, value)


            def frozen(values):
                out = np.array(values)
                out.flags.writeable = False
                return out
            """
        ),
        _d(
            """
            import numpy as np

            from grid_np import fill_diagonal, frozen, identity, normalise


            def test_arrays():
                got = identity(3)
                assert got.shape == (3, 3)
                assert np.array_equal(got, np.eye(3, dtype=int))
                assert got.dtype == np.dtype(int)
                assert (got.T == got).all()
                np.testing.assert_allclose(normalise([1, 1, 2]), [0.25, 0.25, 0.5])
                assert normalise([2, 2]).tolist() == [0.5, 0.5]


            def test_filled_in_place():
                grid = np.zeros((3, 3))
                fill_diagonal(grid, 7)
                assert grid.trace() == 21


            def test_read_only_stays_read_only():
                assert not frozen([1, 2]).flags.writeable
            """
        ),
    ),
    Case(
        "numpy-objects-cross-by-reference",
        "bag_np.py",
        _d(
            """
            import numpy as np


            def bag(*items):
                out = np.empty(len(items), dtype=object)
                out[:] = items
                return out
            """
        ),
        _d(
            """
            from bag_np import bag


            def test_object_array():
                got = bag("a", 1)
                assert len(got) == 2
                assert got[0] == "a"
            """
        ),
    ),
)


@pytest.mark.parametrize("name", [n for n in CASES if "by-reference" not in n])
def test_numpy_values_cross_by_value(grade, backend, name: str) -> None:
    outcome = grade(CASES[name], backend)
    assert verdict(outcome) == "pass", (outcome.reasons, outcome.witness_tail or outcome.tail)


def test_an_array_of_objects_is_never_a_fail(grade, backend) -> None:
    outcome = grade(CASES["numpy-objects-cross-by-reference"], backend)
    assert verdict(outcome) in ("pass", "disputed"), (outcome.reasons, outcome.tail)
