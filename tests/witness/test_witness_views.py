"""A candidate object compared with the tests' data by its own rule (issue 48): its
answer is believed where the object's view agrees, its contents read as the tests'
operand's builtin kind before the operand is handed over (`wire/views.py`). Correct
classes whose own comparison agrees with their contents grade `pass`, and so does one
stricter than its contents (unequal to a tuple of its fields); an always-equal object,
one that learns the operand in its own `__eq__` and shows it afterwards, or one whose
view fails, never passes; a class whose own rule its contents do not show is disputed
`witness:compared`, saying so."""

from __future__ import annotations

import pytest

from evalpin.core.instrument.graders.wire import views
from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire


CARRIED = _corpus(
    _case(
        "a-history-dict-compared-with-a-plain-dict",
        "history.py",
        """
        class History(dict):
            '''Each key keeps every value it was given; reading gives the newest.'''

            def __setitem__(self, key, value):
                dict.setdefault(self, key, []).append(value)

            def __getitem__(self, key):
                return dict.__getitem__(self, key)[-1]

            def keys(self):
                return list(dict.keys(self))

            def __eq__(self, other):
                if not hasattr(other, "keys"):
                    return NotImplemented
                return sorted(self.keys()) == sorted(other.keys()) and all(
                    self[k] == other[k] for k in self.keys()
                )

            def __ne__(self, other):
                return not self == other

            def every(self, key):
                return list(dict.__getitem__(self, key))


        def record(pairs):
            history = History()
            for key, value in pairs:
                history[key] = value
            return history
        """,
        """
        from history import record


        def test_newest_values_compare_as_a_dict():
            h = record([("x", 1), ("y", 2), ("x", 3)])
            assert h == {"x": 3, "y": 2}
            assert h != {"x": 1, "y": 2}
            assert h.every("x") == [1, 3]
        """,
    ),
    _case(
        "a-ring-compared-with-a-list-and-a-tuple",
        "ring.py",
        '''
        class Ring:
            """A fixed-size buffer: the newest `size` items, oldest first."""

            def __init__(self, size):
                self.size, self.items = size, []

            def push(self, item):
                self.items = (self.items + [item])[-self.size :]
                return self

            def __iter__(self):
                return iter(list(self.items))

            def __len__(self):
                return len(self.items)

            def __eq__(self, other):
                try:
                    return list(self) == list(other)
                except TypeError:
                    return NotImplemented

            def __lt__(self, other):
                return list(self) < list(other)
        ''',
        """
        from ring import Ring


        def test_the_ring_keeps_the_newest():
            r = Ring(3)
            for n in range(6):
                r.push(n * n)
            assert r == [9, 16, 25]
            assert r == (9, 16, 25)
            assert r != [0, 1, 4]
            assert r < [9, 17]
            assert not (r == "9 16 25")
        """,
    ),
    _case(
        "a-token-compared-with-its-text",
        "lexer.py",
        """
        class Token:
            def __init__(self, kind, text):
                self.kind, self.text = kind, text

            def __str__(self):
                return self.text

            def __eq__(self, other):
                if isinstance(other, Token):
                    return (self.kind, self.text) == (other.kind, other.text)
                return str(self) == other

            __hash__ = None


        def lex(source):
            out = []
            for word in source.split():
                kind = "num" if word.isdigit() else "name"
                out.append(Token(kind, word))
            return out
        """,
        """
        from lexer import lex


        def test_tokens_read_as_text():
            tokens = lex("let x 42")
            assert tokens == ["let", "x", "42"]
            assert tokens[2] == "42" and tokens[2].kind == "num"
            assert tokens[0] != "var"
        """,
    ),
    _case(
        "numbers-and-flags-of-the-candidates",
        "units.py",
        """
        import operator


        class Count:
            def __init__(self, n):
                self.n = n

            def __index__(self):
                return self.n

            def __eq__(self, other):
                return self.n == operator.index(other)


        class Ratio:
            def __init__(self, num, den):
                self.num, self.den = num, den

            def __float__(self):
                return self.num / self.den

            def __eq__(self, other):
                return float(self) == other


        class Flag:
            def __init__(self, on):
                self.on = on

            def __bool__(self):
                return self.on

            def __eq__(self, other):
                return self.on == other


        def tally(words):
            return Count(len(words)), Ratio(1, len(words)), Flag(bool(words))
        """,
        """
        from units import tally


        def test_what_the_tally_says():
            count, ratio, flag = tally(["a", "b", "c", "d"])
            assert count == 4 and count != 5
            assert ratio == 0.25
            assert flag == True  # noqa: E712 (the comparison is the point)
            assert tally([])[2] == False  # noqa: E712
        """,
    ),
)


STRICT = _case(
    "a-record-stricter-than-its-fields",
    "records.py",
    """
    class Span:
        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            return iter((self.start, self.end))

        def __eq__(self, other):
            return type(other) is Span and tuple(self) == tuple(other)

        def __hash__(self):
            return hash(tuple(self))


    def span(text, word):
        at = text.index(word)
        return Span(at, at + len(word))
    """,
    """
    from records import span


    def test_a_span_is_not_its_pair():
        s = span("say hello", "hello")
        assert tuple(s) == (4, 9)
        assert s != (4, 9) and not (s == [4, 9])
        table = {s: "span", (4, 9): "pair"}
        assert len(table) == 2 and table[s] == "span"
    """,
)
CARRIED[STRICT.name] = STRICT


ATTACKS = _corpus(
    _case(
        "an-always-equal-answer",
        "solve.py",
        """
        class Anything:
            def __eq__(self, other):
                return True

            def __iter__(self):
                return iter(())

            def __str__(self):
                return ""


        def solve(n):
            return Anything()
        """,
        """
        from solve import solve


        def test_solve():
            assert solve(3) == [0, 1, 4]
            assert solve(2) == "0 1"
        """,
    ),
    _case(
        "an-answer-that-learns-the-operand-in-its-own-eq",
        "solve.py",
        """
        class Echo:
            seen = []

            def __eq__(self, other):
                Echo.seen = list(other) if not isinstance(other, str) else other
                return True

            def __iter__(self):
                return iter(list(Echo.seen))

            def __str__(self):
                return str(Echo.seen)


        def solve(n):
            return Echo()
        """,
        """
        from solve import solve


        def test_solve():
            assert solve(3) == [0, 1, 4]
        """,
    ),
    _case(
        "an-answer-whose-contents-cannot-be-read",
        "solve.py",
        """
        class Sealed:
            def __eq__(self, other):
                return True

            def keys(self):
                raise RuntimeError("sealed")

            def __iter__(self):
                raise RuntimeError("sealed")


        def solve(n):
            return Sealed()
        """,
        """
        from solve import solve


        def test_solve():
            assert solve(3) == {"squares": [0, 1, 4]}
        """,
    ),
)

DISAGREEING = _case(
    "a-path-whose-rule-ignores-case",
    "paths.py",
    """
    class Path:
        def __init__(self, text):
            self.text = text

        def __str__(self):
            return self.text

        def __eq__(self, other):
            return str(self).lower() == str(other).lower()

        def __ne__(self, other):
            return not self == other


    def normal(text):
        return Path(text.strip("/"))
    """,
    """
    from paths import normal


    def test_same_path_any_case():
        assert normal("/Usr/Lib/") == "usr/lib"
    """,
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    """Every correct case passes plain `python -m pytest` in-process; every attack
    fools it (a forged pass); so does the case whose rule disagrees with its text."""
    assert_plain_passes({**CARRIED, **ATTACKS, DISAGREEING.name: DISAGREEING}, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_comparison_its_contents_agree_with_grades_pass(
    grade, backend: Isolation, name: str
) -> None:
    expect(grade(CARRIED[name], backend), "pass")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_answer_claiming_equality_never_passes(grade, backend: Isolation, name: str) -> None:
    expect(grade(ATTACKS[name], backend), "disputed")


def test_a_rule_its_contents_disagree_with_is_disputed_saying_why(
    grade, backend: Isolation
) -> None:
    """The view does not show the candidate's claim (`Usr/Lib` is not `usr/lib` as
    text), so the case is disputed, `witness:compared`, naming the comparison: the
    candidate's case-blind rule is its own word."""
    outcome = grade(DISAGREEING, backend)
    assert outcome.reasons == ["witness:compared"], (outcome.reasons, outcome.witness_tail)
    assert "[compared] Path.__eq__ with the tests' str" in outcome.witness_tail


@pytest.mark.parametrize(
    "other, kind",
    [
        ({}, "dict"),
        ([], "list"),
        ((), "tuple"),
        (frozenset(), "frozenset"),
        ("", "str"),
        (b"", "bytes"),
        (True, "bool"),
        (3, "int"),
        (0.5, "float"),
        (object(), None),
        (1j, None),
    ],
)
def test_the_view_takes_the_kind_of_the_tests_operand(other, kind) -> None:
    assert views.kind_of(other) == kind


def test_a_stdlib_subclass_of_the_operand_reads_as_its_builtin() -> None:
    from collections import Counter, OrderedDict, defaultdict

    assert {views.kind_of(k()) for k in (OrderedDict, Counter, lambda: defaultdict(int))} == {
        "dict"
    }


def test_an_endless_object_has_no_view() -> None:
    class Endless:
        def __iter__(self):
            n = 0
            while True:
                yield n
                n += 1

    with pytest.raises(OverflowError):
        views.view_of(Endless(), "list")
    assert views.view_of(range(5), "tuple") == (0, 1, 2, 3, 4)
    with pytest.raises(TypeError):
        views.view_of(object(), "bool")  # every object is true: no truth of its own
