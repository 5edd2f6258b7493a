"""Objects of installed libraries' classes across the witness (issue 48, item 7): a
candidate returns an object whose class the standard library or an installed package
defines and the wire does not carry by value (a connection and its cursor, an argument
parser, a sequence matcher, a numpy array of objects, a pandas frame with a categorical
column, a matplotlib figure and its axes); it stays in the worker, and the test checks
it with `isinstance`, `assertIsInstance`, `issubclass(x.__class__, ...)` and reads it
through its methods; a test's patch of an installed library's function the candidate
calls (`mock.patch("yaml.safe_load")`, `@patch("matplotlib.pyplot.show")`) reaches the
candidate's calls, as a stdlib one does. Each correct case passes plain `python -m
pytest` in-process and must grade `pass` under `isolation: process`. A candidate's own
subclass of an installed class is not presented as that class (disputed, never a
fail)."""

from __future__ import annotations

import importlib.util

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

STDLIB = _corpus(
    _case(
        "a-database-connection-and-its-cursor",
        "ledger.py",
        """
        import sqlite3


        def open_ledger(rows):
            conn = sqlite3.connect(":memory:")
            conn.execute("create table entry (who text, amount integer)")
            conn.executemany("insert into entry values (?, ?)", rows)
            return conn


        def totals(conn):
            return conn.execute(
                "select who, sum(amount) from entry group by who order by who"
            )
        """,
        """
        import sqlite3
        import unittest

        from ledger import open_ledger, totals


        class TestLedger(unittest.TestCase):
            def test_a_connection(self):
                conn = open_ledger([("ann", 3), ("bob", 2), ("ann", 4)])
                self.assertIsInstance(conn, sqlite3.Connection)
                cursor = totals(conn)
                self.assertTrue(isinstance(cursor, sqlite3.Cursor))
                self.assertEqual(cursor.fetchall(), [("ann", 7), ("bob", 2)])
                self.assertIs(conn.__class__, sqlite3.Connection)
                conn.close()
        """,
    ),
    _case(
        "a-parser-and-a-matcher-of-the-stdlib",
        "tools.py",
        """
        import argparse
        import difflib


        def make_parser():
            parser = argparse.ArgumentParser(prog="tally")
            parser.add_argument("--count", type=int, default=1)
            parser.add_argument("names", nargs="*")
            return parser


        def matcher(a, b):
            return difflib.SequenceMatcher(None, a, b)
        """,
        """
        import argparse
        import difflib

        import tools


        def test_the_parser():
            parser = tools.make_parser()
            assert isinstance(parser, argparse.ArgumentParser)
            assert issubclass(parser.__class__, argparse._ActionsContainer)
            got = parser.parse_args(["--count", "3", "a", "b"])
            assert got.count == 3 and got.names == ["a", "b"]


        def test_the_matcher():
            m = tools.matcher("abcd", "abed")
            assert isinstance(m, difflib.SequenceMatcher)
            assert m.ratio() == 0.75
            assert type(m).__name__ == "SequenceMatcher"
        """,
    ),
)

NUMPY_PANDAS = _corpus(
    _case(
        "a-numpy-array-of-objects",
        "boxes.py",
        """
        import numpy as np


        def labelled(n):
            out = np.empty(n, dtype=object)
            for i in range(n):
                out[i] = ("item", i)
            return out
        """,
        """
        import numpy as np

        from boxes import labelled


        def test_an_array_of_objects():
            got = labelled(3)
            assert isinstance(got, np.ndarray)
            assert got.dtype.kind == "O" and got.shape == (3,)
            assert got[2] == ("item", 2)
            assert len(got) == 3
        """,
    ),
    _case(
        "a-frame-with-a-categorical-column",
        "grades.py",
        """
        import pandas as pd


        def graded(scores):
            frame = pd.DataFrame({"score": scores})
            frame["band"] = pd.Categorical(
                ["high" if s >= 50 else "low" for s in scores], categories=["low", "high"]
            )
            return frame
        """,
        """
        import unittest

        import pandas as pd

        from grades import graded


        class TestGraded(unittest.TestCase):
            def test_a_frame(self):
                frame = graded([10, 70, 55])
                self.assertIsInstance(frame, pd.DataFrame)
                self.assertEqual(frame.shape, (3, 2))
                self.assertEqual(list(frame.columns), ["score", "band"])
                self.assertEqual(frame["band"].tolist(), ["low", "high", "high"])
        """,
    ),
)

# A frame's records hold pandas' own `Timestamp` and `Timedelta`: by value, as the frame.
NUMPY_PANDAS["records-of-timestamps-and-durations"] = _case(
    "records-of-timestamps-and-durations",
    "visits.py",
    """
    import pandas as pd


    def visits(rows):
        frame = pd.DataFrame(rows, columns=["who", "start", "end"])
        frame["start"] = pd.to_datetime(frame["start"])
        frame["end"] = pd.to_datetime(frame["end"]).dt.tz_localize("Europe/Berlin")
        frame["took"] = frame["end"].dt.tz_localize(None) - frame["start"]
        return frame.to_dict("records")
    """,
    """
    from datetime import datetime, timedelta, timezone

    import pandas as pd

    from visits import visits


    def test_records():
        got = visits([("ann", "2024-01-02 03:04:05", "2024-01-02 03:05:35")])
        assert got[0]["start"] == datetime(2024, 1, 2, 3, 4, 5)
        assert isinstance(got[0]["start"], pd.Timestamp)
        assert got[0]["took"] == timedelta(seconds=90)
        assert got[0]["end"] == datetime(2024, 1, 2, 2, 5, 35, tzinfo=timezone.utc)
        assert str(got[0]["end"].tz) == "Europe/Berlin"
    """,
)

MATPLOTLIB = _corpus(
    _case(
        "a-figure-and-its-axes",
        "charts.py",
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt


        def bars(counts, show=False):
            fig, ax = plt.subplots()
            ax.bar(list(counts), list(counts.values()))
            ax.set_title("Counts")
            ax.set_ylabel("Number")
            if show:
                plt.show()
            return fig, ax
        """,
        """
        import unittest
        from unittest.mock import patch

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.axes import Axes
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle

        from charts import bars


        class TestBars(unittest.TestCase):
            def test_the_plot(self):
                fig, ax = bars({"a": 3, "b": 1, "c": 2})
                self.assertIsInstance(ax, Axes)
                self.assertIsInstance(ax, plt.Axes)
                self.assertIsInstance(fig, Figure)
                self.assertTrue(issubclass(ax.__class__, matplotlib.artist.Artist))
                self.assertEqual(ax.get_title(), "Counts")
                self.assertEqual(ax.get_ylabel(), "Number")
                heights = [p.get_height() for p in ax.patches]
                self.assertEqual(heights, [3, 1, 2])
                self.assertTrue(all(isinstance(p, Rectangle) for p in ax.patches))

            @patch("matplotlib.pyplot.show")
            def test_shown(self, shown):
                bars({"a": 1}, show=True)
                shown.assert_called_once()
        """,
    ),
)

# A test's patches of an installed library's module follow into the worker, as those of
# the stdlib's do: the candidate's own calls reach the test's double, and its undo.
PATCHED = _corpus(
    _case(
        "a-library-function-the-test-patches",
        "settings.py",
        """
        import yaml


        def load_settings(text):
            loaded = yaml.safe_load(text)
            return {**{"debug": False}, **loaded}
        """,
        """
        from unittest import mock

        import yaml

        import settings


        def test_with_a_double():
            with mock.patch("yaml.safe_load", return_value={"debug": True}) as fake:
                assert settings.load_settings("debug: no") == {"debug": True}
            fake.assert_called_once_with("debug: no")
            assert settings.load_settings("level: 3") == {"debug": False, "level": 3}


        def test_with_monkeypatch(monkeypatch):
            seen = []
            monkeypatch.setattr(yaml, "safe_load", lambda text: seen.append(text) or {})
            assert settings.load_settings("a: 1") == {"debug": False}
            assert seen == ["a: 1"]
        """,
    ),
)

# The test imports only the package; the submodule the object's class lives in is there
# because the candidate's code imported it (one process's modules).
MATPLOTLIB["the-axes-submodule-the-candidate-imported"] = _case(
    "the-axes-submodule-the-candidate-imported",
    "lines.py",
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt


    def line(xs):
        fig = plt.figure()
        ax = fig.add_subplot()
        ax.plot(xs)
        return ax
    """,
    """
    import matplotlib

    from lines import line


    def test_line():
        ax = line([1, 3, 2])
        assert isinstance(ax, matplotlib.axes._axes.Axes)
        assert len(ax.get_lines()) == 1
    """,
)

_HAVE = {name: importlib.util.find_spec(name) is not None for name in ("numpy", "matplotlib")}
CARRIED = {
    **STDLIB,
    **PATCHED,
    **(NUMPY_PANDAS if _HAVE["numpy"] and importlib.util.find_spec("pandas") else {}),
    **(MATPLOTLIB if _HAVE["matplotlib"] else {}),
}

# A candidate's own subclass of an installed class: its own class, never the library's.
SUBCLASS = _case(
    "a-candidates-subclass-of-an-installed-class",
    "parsers.py",
    """
    import argparse


    class QuietParser(argparse.ArgumentParser):
        def error(self, message):
            raise ValueError(message)


    def make():
        return QuietParser(prog="quiet")
    """,
    """
    import argparse

    import parsers


    def test_a_parser_subclass():
        got = parsers.make()
        assert isinstance(got, argparse.ArgumentParser)
    """,
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    assert_plain_passes({**CARRIED, SUBCLASS.name: SUBCLASS}, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_an_installed_class_is_presented(grade, backend: Isolation, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")


def test_a_candidates_subclass_of_an_installed_class_is_its_own(grade, backend) -> None:
    outcome = grade(SUBCLASS, backend)
    expect(outcome, "disputed")
    assert "is not an instance of" in outcome.witness_tail or "assert" in outcome.witness_tail
