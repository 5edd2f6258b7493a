"""Iterators and streams across the witness (issue 48, the conformance corpus's
library residue: an iterator-heavy library's own tests, 600 of them, ran past the
witness's timeout one round trip per item, and a stream the candidate closed killed its
worker). A candidate iterator a consumer drains (`list`, `tuple`, `sorted`, `str.join`)
comes over in batches; everything that is not a drain (a `for` loop, `next()`, `any()`,
`zip()`) still pulls one item at a time, so the candidate's code runs when it would in
one process. Each correct case passes plain `python -m pytest` in-process and must grade
`pass` under `isolation: process`; each attack fools plain pytest and must never pass."""

from __future__ import annotations

import pytest

from evalpin.core.instrument.graders.wire.shares import fingerprint
from evalpin.run.sandbox import Isolation
from tests.test_true_grade import Case, _corpus, _d, assert_plain_passes, grade, item
from tests.test_witness_idioms import expect

__all__ = ["grade", "item"]  # the fixtures, shared with test_true_grade (`backend`: conftest)

pytestmark = pytest.mark.wire


def _case(name: str, module_file: str, module_src: str, test_src: str) -> Case:
    return Case(name, module_file, _d(module_src), _d(test_src))


CARRIED = _corpus(
    _case(
        "drained-iterators-keep-order-errors-and-laziness",
        "streams.py",
        """
        produced = []


        def squares(n):
            for i in range(n):
                produced.append(i)
                yield i * i


        def scaled(source, factor):
            for x in source:
                yield x * factor


        def halting(items):
            for x in items:
                if x is None:
                    raise ValueError("a hole in the data")
                yield x


        class Ticker:
            \"\"\"An iterator that raises at its third step and then carries on.\"\"\"

            def __init__(self):
                self.step = 0

            def __iter__(self):
                return self

            def __next__(self):
                self.step += 1
                if self.step == 3:
                    raise KeyError(self.step)
                if self.step > 5:
                    raise StopIteration
                return self.step


        class Shelf:
            \"\"\"An iterable (not an iterator): each pass is a new generator.\"\"\"

            def __init__(self, *books):
                self.books = list(books)

            def __iter__(self):
                return (b.title() for b in self.books)


        def sliding(seq, width):
            window = []
            for x in seq:
                window.append(x)
                if len(window) > width:
                    del window[0]
                yield window
        """,
        """
        import pytest

        import streams as m


        def test_drains_in_every_consumer():
            assert list(m.squares(50)) == [i * i for i in range(50)]
            assert tuple(m.squares(3)) == (0, 1, 4)
            assert sorted(m.scaled([3, 1, 2], -1)) == [-3, -2, -1]
            assert "-".join(m.scaled("ab", 2)) == "aa-bb"
            assert list(m.squares(0)) == []
            assert list(m.Shelf("dune", "emma")) == ["Dune", "Emma"]


        def test_an_error_mid_drain_comes_at_its_place():
            with pytest.raises(ValueError, match="hole"):
                list(m.halting([1, 2, None, 4]))
            ticker = m.Ticker()
            with pytest.raises(KeyError):
                list(ticker)
            assert list(ticker) == [4, 5]
            assert ticker.step == 6


        def test_what_is_not_a_drain_stays_lazy():
            m.produced.clear()
            gen = m.squares(10**6)
            assert next(gen) == 0
            assert any(x > 3 for x in gen)
            assert m.produced == [0, 1, 2]
            assert any(m.squares(10**6))
            assert m.produced[-2:] == [0, 1]
            source = [1, 2]
            seen = []
            for x in m.scaled(source, 10):
                seen.append(x)
                if x == 10:
                    source.append(3)
            assert seen == [10, 20, 30]
            assert list(zip(m.squares(10**6), "ab")) == [(0, "a"), (1, "b")]


        def test_a_yielded_buffer_is_one_object():
            got = list(m.sliding([1, 2, 3, 4], 2))
            assert got == [[3, 4]] * 4
            assert got[0] is got[3]
        """,
    ),
    _case(
        "a-stream-the-candidate-closes",
        "lines.py",
        """
        def first_words(stream):
            with stream as f:
                for line in f:
                    yield line.split()[0]


        def drain(stream):
            text = stream.read()
            stream.close()
            return text
        """,
        """
        import io

        import lines


        def test_closed_after_a_drain():
            s = io.StringIO("one fish\\ntwo fish\\n")
            assert list(lines.first_words(s)) == ["one", "two"]
            assert s.closed


        def test_closed_by_a_call():
            b = io.BytesIO(b"\\xff\\x00")
            assert lines.drain(b) == b"\\xff\\x00"
            assert b.closed
        """,
    ),
)


ATTACKS = _corpus(
    _case(
        "always-equal-items-in-a-drained-batch",
        "rows.py",
        """
        class Row:
            def __eq__(self, other):
                return True

            def __hash__(self):
                return 0


        def rows(n):
            for _ in range(n):
                yield Row()
        """,
        """
        from rows import rows


        def test_rows():
            assert list(rows(40)) == list(range(40))
            assert sorted(rows(2), key=id) == [1, 2]
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """Every correct case passes plain `python -m pytest` in-process; every attack
    fools it (a forged pass)."""
    assert_plain_passes({**CARRIED, **ATTACKS}, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_carried_case_grades_pass(grade, backend: Isolation, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_never_passes(grade, backend: Isolation, name: str) -> None:
    expect(grade(ATTACKS[name], backend), "disputed")


@pytest.mark.parametrize(
    "before, change",
    [
        ([(1, "a"), (2, "b")], lambda c: c.__setitem__(1, (2, "c"))),
        ([1, 2, 3], lambda c: c.append(4)),
        ([[1], [2]], lambda c: c[0].append(9)),
        ([(1, [2])], lambda c: c[0][1].append(3)),
        ({"a": 1, "b": (2, 3)}, lambda c: c.__setitem__("b", (2, 4))),
        ({"a": [1]}, lambda c: c["a"].append(2)),
        ({1, 2}, lambda c: c.add(3)),
    ],
)
def test_a_kept_containers_picture_sees_every_change(before, change) -> None:
    """A container kept in step is sent again when its picture changes: the fast picture
    of plain contents (flat tuples of them too) misses no change, nested ones included."""
    picture = fingerprint(before)
    assert fingerprint(before) == picture
    change(before)
    assert fingerprint(before) != picture
