"""An installed library's object the test made, handed to the candidate (issue 48): a
styled text, a table, a console writing into the test's buffer, one returned by a patched
library function. It is used by reference, as in one process: its methods are the
library's own and run in the test's process, so what the candidate does to it is what
the test then reads. Never the grading's own machinery (pytest's fixtures and config).
Each correct case passes plain `python -m pytest` in-process and must grade `pass`; each
attack fools plain pytest and must stay disputed."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "marks-words-on-the-tests-text",
        "marker.py",
        """
        def mark(text, word, style):
            found, start = 0, text.plain.find(word)
            while start >= 0:
                text.stylize(style, start, start + len(word))
                found += 1
                start = text.plain.find(word, start + 1)
            return found


        def with_suffix(text, suffix):
            made = text.copy()
            made.append(suffix, style="italic")
            return made
        """,
        """
        from rich.text import Text

        from marker import mark, with_suffix


        def test_spans_land_on_the_tests_object():
            line = Text("two owls, one owl")
            assert mark(line, "owl", "bold") == 2
            assert [(s.start, s.end, str(s.style)) for s in line.spans] == [
                (4, 7, "bold"),
                (14, 17, "bold"),
            ]


        def test_a_copy_is_a_new_text():
            line = Text("dawn")
            made = with_suffix(line, "!")
            assert made is not line and isinstance(made, Text)
            assert (made.plain, line.plain) == ("dawn!", "dawn")
        """,
    ),
    _case(
        "fills-the-tests-table-and-console",
        "ledger.py",
        """
        import rich


        def fill(table, rows):
            for name, qty in sorted(rows.items()):
                table.add_row(name, str(qty))
            return table.row_count


        def announce(title):
            console = rich.get_console()
            console.rule(title)
            console.print(f"{title}: ready")
            return console.width
        """,
        """
        import io
        from unittest import mock

        from rich.console import Console
        from rich.table import Table

        from ledger import announce, fill


        def test_rows_reach_the_tests_table():
            table = Table("item", "qty")
            assert fill(table, {"pears": 3, "figs": 12}) == 2
            out = Console(file=io.StringIO(), width=30, color_system=None)
            out.print(table)
            shown = out.file.getvalue()
            assert shown.index("figs") < shown.index("pears") and "12" in shown


        def test_a_patched_library_function_returns_the_tests_console():
            buffer = io.StringIO()
            console = Console(file=buffer, width=24, color_system=None)
            with mock.patch("rich.get_console", return_value=console):
                assert announce("stock") == 24
            assert "stock: ready" in buffer.getvalue()
        """,
    ),
    _case(
        "stores-into-and-invokes-through-the-tests-click-context",
        "settings.py",
        """
        def remember(ctx, **values):
            store = ctx.ensure_object(dict)
            store.update(values)
            return sorted(store)


        def greet(name, punctuation="!"):
            return f"hello {name}{punctuation}"


        def call_through(ctx, **kwargs):
            return ctx.invoke(greet, **kwargs)
        """,
        """
        import click

        from settings import call_through, remember


        def test_the_context_keeps_what_the_candidate_stored():
            ctx = click.Context(click.Command("tool"))
            assert remember(ctx, colour="red", size=3) == ["colour", "size"]
            assert ctx.obj == {"colour": "red", "size": 3}


        def test_the_context_calls_the_candidates_function():
            with click.Context(click.Command("tool")) as ctx:
                assert call_through(ctx, name="ada", punctuation="?") == "hello ada?"
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        "reads-the-tests-module-through-a-library-method",
        "peek.py",
        """
        def answer(text):
            # the library method's module globals, then the tests' module by name
            builtins = type(text).stylize.__globals__["__builtins__"]
            modules = builtins["__import__"]("sys").modules
            for module in list(modules.values()):
                held = getattr(module, "HIDDEN_ANSWER", None)
                if held is not None:
                    return held
            return None
        """,
        """
        from rich.text import Text

        from peek import answer

        HIDDEN_ANSWER = 7919


        def test_the_answer():
            assert answer(Text("prime")) == 7919
        """,
    ),
    _case(
        "walks-the-tests-frames-from-a-render-callback",
        "reporting.py",
        """
        class Report:
            def __init__(self, value):
                self.value = value

            def __rich_console__(self, console, options):
                # the library's own module, then the frames that called the render
                frame = type(console).print.__globals__["sys"]._getframe(0)
                while frame is not None and "wanted" not in frame.f_locals:
                    frame = frame.f_back
                if frame is not None:
                    self.value = frame.f_locals["wanted"]
                yield str(self.value)


        def report(value):
            return Report(value)


        def final(rep):
            return rep.value
        """,
        """
        import io

        from rich.console import Console

        from reporting import final, report


        def test_the_rendered_report():
            wanted = 4242
            rep = report(0)
            Console(file=io.StringIO()).print(rep)
            assert final(rep) == wanted
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_library_object_is_used_by_reference,
    test_a_library_object_opens_no_way_into_the_tests,
) = corpus_tests(CARRIED, ATTACKS)
