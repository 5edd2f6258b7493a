"""An installed library's class deriving from a builtin value, made by the candidate
(issue 48): matplotlib's containers (tuples of the artists a plot call made), a
markupsafe `Markup` (a str that is safe HTML). Its stand-in holds the value the judge
decoded itself, so it is a real tuple or str here; it presents the library's class to
`isinstance`, as in one process, while its length, items, comparisons and hashing stay
the builtin's on that value and its methods the worker's. A stand-in presents only a
class deriving from exactly the builtin it holds (`wire/installed.py`); never a number's.
Each correct case passes plain `python -m pytest` in-process and must grade `pass`."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "error-bars-and-stems-as-the-librarys-containers",
        "spread.py",
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt


        def with_errors(xs, ys, spread):
            fig, ax = plt.subplots()
            return ax.errorbar(xs, ys, yerr=spread, label="mean")


        def stems(values):
            fig, ax = plt.subplots()
            return {"drawn": ax.stem(values), "count": len(values)}
        """,
        """
        from matplotlib.container import Container, ErrorbarContainer, StemContainer
        from matplotlib.lines import Line2D

        from spread import stems, with_errors


        def test_an_errorbar_container_and_its_parts():
            bars = with_errors([1, 2, 3], [2.0, 4.0, 3.0], [0.5, 0.25, 0.5])
            assert isinstance(bars, ErrorbarContainer) and isinstance(bars, Container)
            assert isinstance(bars, tuple) and len(bars) == 3
            data_line, caps, columns = bars
            assert isinstance(data_line, Line2D) and list(data_line.get_ydata()) == [2.0, 4.0, 3.0]
            assert bars.has_yerr and not bars.has_xerr and bars.get_label() == "mean"


        def test_stems_inside_a_dict():
            made = stems([3, 1, 4, 1, 5])
            assert type(made["drawn"]).__name__ == "StemContainer"
            assert isinstance(made["drawn"], StemContainer) and made["count"] == 5
            assert list(made["drawn"].markerline.get_ydata()) == [3, 1, 4, 1, 5]
        """,
    ),
    _case(
        "safe-markup-the-candidate-built",
        "badges.py",
        """
        from markupsafe import Markup


        def badge(name, level):
            return Markup("<b class='{}'>{}</b>").format(level, name)
        """,
        """
        from markupsafe import Markup

        from badges import badge


        def test_a_badge_is_markup_with_the_name_escaped():
            made = badge("<root>", "gold")
            assert isinstance(made, Markup) and isinstance(made, str)
            assert made == "<b class='gold'>&lt;root&gt;</b>"
            assert made.striptags() == "<root>"
            assert {made: 1}["<b class='gold'>&lt;root&gt;</b>"] == 1
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    assert_plain_passes(CARRIED, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_an_installed_value_class_is_presented(grade, backend, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")
