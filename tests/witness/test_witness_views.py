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


# The stdlib's sequence and mapping kinds that are no builtin's subclass (issue 48): the
# view is read as a list, dict or str and made as the operand's own kind here.
STDLIB_KINDS = _case(
    "a-playlist-compared-with-the-stdlibs-own-kinds",
    "playlist.py",
    """
    from collections.abc import Mapping, Sequence


    class Playlist(Sequence):
        '''Tracks in play order, no repeats; equal to any sequence of the same tracks
        in that order, and to the keys of a mapping holding the same tracks.'''

        def __init__(self, tracks):
            self._tracks = list(dict.fromkeys(tracks))

        def __getitem__(self, i):
            return self._tracks[i]

        def __len__(self):
            return len(self._tracks)

        def __eq__(self, other):
            if isinstance(other, Sequence) or hasattr(other, "__reversed__"):
                try:
                    return list(self) == list(other)
                except TypeError:
                    return NotImplemented
            return NotImplemented

        def __ne__(self, other):
            result = self.__eq__(other)
            return result if result is NotImplemented else not result


    class Tally(Mapping):
        '''Plays per track, read through its own mapping methods.'''

        def __init__(self, plays):
            self._plays = {}
            for track in plays:
                self._plays[track] = self._plays.get(track, 0) + 1

        def __getitem__(self, track):
            return self._plays[track]

        def __iter__(self):
            return iter(self._plays)

        def __len__(self):
            return len(self._plays)

        def __eq__(self, other):
            return dict(self.items()) == dict(other.items())


    class Title:
        def __init__(self, words):
            self.words = words

        def __str__(self):
            return " ".join(self.words).title()

        def __eq__(self, other):
            return str(self) == str(other)


    def queue(plays):
        return Playlist(plays), Tally(plays), Title(plays[:2])
    """,
    """
    from collections import UserDict, UserList, UserString, deque

    from playlist import queue


    def test_the_queue_against_the_stdlibs_kinds():
        playlist, tally, title = queue(["intro", "verse", "intro", "coda"])
        assert playlist == deque(["intro", "verse", "coda"])
        assert playlist != deque(["verse", "intro", "coda"])
        assert not (playlist == deque(["intro"]))
        assert playlist == UserList(["intro", "verse", "coda"])
        assert playlist == {"intro": 1, "verse": 2, "coda": 3}.keys()
        assert tally == UserDict({"intro": 2, "verse": 1, "coda": 1})
        assert title == UserString("Intro Verse")
    """,
)
CARRIED[STDLIB_KINDS.name] = STDLIB_KINDS


# A value-backed record (a named tuple) whose own rule raises or warns: the judge's
# rule on its fields decides, and the candidate's own comparison still runs, as in one
# process (its `TypeError`, its warning reach the test).
LOUD = _case(
    "a-record-whose-own-comparison-warns-and-refuses",
    "coords.py",
    """
    import warnings
    from collections import namedtuple


    class Point(namedtuple("Point", "x y")):
        def __eq__(self, other):
            if isinstance(other, (int, float)):
                raise TypeError("a point is no number")
            if type(other) is tuple:
                warnings.warn("compare points with points", DeprecationWarning)
            return tuple(self) == tuple(other)

        def __ne__(self, other):
            return not self == other

        __hash__ = tuple.__hash__


    class Meters(float):
        def __eq__(self, other):
            if isinstance(other, str):
                raise TypeError("compare meters with numbers")
            return float(self) == other

        __hash__ = float.__hash__


    def midpoint(a, b):
        return Point((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)


    def distance(a, b):
        return Meters(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5)
    """,
    """
    import pytest

    from coords import distance, midpoint


    def test_a_distance_against_the_tests_tools_and_text():
        d = distance((0, 0), (0.1, 0.2))
        assert d == pytest.approx(0.2236, abs=1e-4)  # never handed over: approx decides
        with pytest.raises(TypeError, match="with numbers"):
            d == "0.22"  # noqa: B015


    def test_a_point_warns_and_refuses_as_its_class_says():
        p = midpoint((0, 0), (4, 2))
        with pytest.warns(DeprecationWarning, match="compare points"):
            assert p == (2.0, 1.0)
        with pytest.raises(TypeError, match="no number"):
            p == 3  # noqa: B015 (the comparison's error is the point)
        assert p.x == 2.0
    """,
)
CARRIED[LOUD.name] = LOUD


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

# The same attacks against the stdlib's kinds: a view made as a deque, a `UserList` or
# a dict's key view shows what the object held before it saw the operand.
ATTACKS.update(
    _corpus(
        _case(
            "an-always-equal-answer-to-a-deque-and-a-key-view",
            "solve.py",
            """
            class Anything:
                def __eq__(self, other):
                    return True

                def __iter__(self):
                    return iter(["?"])


            def solve(n):
                return Anything()
            """,
            """
            from collections import UserList, deque

            from solve import solve


            def test_solve():
                assert solve(3) == deque([0, 1, 4])
                assert solve(2) == UserList([0, 1])
                assert solve(2) == {0: "a", 1: "b"}.keys()
            """,
        ),
        _case(
            "an-answer-that-learns-a-deque-in-its-own-eq",
            "solve.py",
            """
            class Echo:
                seen = []

                def __eq__(self, other):
                    Echo.seen = list(other)
                    return True

                def __iter__(self):
                    return iter(list(Echo.seen))


            def solve(n):
                return Echo()
            """,
            """
            from collections import deque

            from solve import solve


            def test_solve():
                assert solve(3) == deque([0, 1, 4])
            """,
        ),
    )
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


def test_the_stdlibs_own_kinds_read_as_a_builtin_and_are_made_as_themselves() -> None:
    """A `deque`, `UserList`, `UserDict`, `UserString` (and the tests' subclasses of
    them) read as the builtin kind their contents have; a dict's key and item views as
    a set, compared by the rule they share with it."""
    from collections import UserDict, UserList, UserString, deque

    class Lane(deque):
        pass

    cases = [
        (deque(), "list"),
        (Lane(), "list"),
        (UserList(), "list"),
        (UserDict(), "dict"),
        (UserString(""), "str"),
        ({}.keys(), "set"),
        ({}.items(), "set"),
        ({}.values(), None),  # a values view equals nothing but itself
    ]
    assert [views.kind_of(other) for other, _ in cases] == [kind for _, kind in cases]


def test_a_view_is_judged_by_the_operands_own_rule() -> None:
    """The view made as a deque equals a deque of the same items in order, never in
    another order; a set view equals a dict's keys by the keys' own rule."""
    from collections import deque

    class Peer:
        def __init__(self):
            self.noted = []

        def not_believed(self, *said):
            self.noted.append(said)

    peer = Peer()
    view = deque([1, 2])
    assert views.judge(peer, "Q", "__eq__", view, deque([1, 2]), True) is True
    assert views.judge(peer, "Q", "__eq__", view, deque([2, 1]), True) is NotImplemented
    assert views.judge(peer, "Q", "__eq__", {1, 2}, {2: 0, 1: 0}.keys(), True) is True
    assert views.judge(peer, "Q", "__lt__", view, deque([1, 3]), True) is True
    assert views.judge(peer, "Q", "__lt__", [1], ("a",), True) is NotImplemented  # no order
    assert [said[1] for said in peer.noted] == ["__eq__", "__lt__"]


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
