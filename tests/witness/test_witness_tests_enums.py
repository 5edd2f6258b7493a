"""The tests' own enums handed to the candidate (issue 48, `wire/tests_enums.py`): the
worker makes a real enum of the stdlib's classes with the tests' names and values, so
the candidate's `issubclass(kind, Enum)`, iteration over members, `kind(1)`,
`kind["NAME"]`, `isinstance(m, str)` of a `str` mixin, flags combined, and the tests'
own methods, properties and special methods (an order, its text) on a member behave as
in one process; each member comes home
as the test's own (`is` holds). Each correct case passes plain `python -m pytest`
in-process and must grade `pass` under `isolation: process`; each attack fools plain
pytest (it rewrites the tests' enum in place) and must stay disputed: the worker's enum
is its own, never the test's."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-settings-reader-given-the-tests-enums",
        "settings.py",
        """
        import enum


        def options(kind):
            '''The names a setting of this kind accepts, for the help text.'''
            if not (isinstance(kind, type) and issubclass(kind, enum.Enum)):
                raise TypeError(f"{kind!r} is not an enum")
            return ", ".join(f"{m.name.lower()}={m.value!r}" for m in kind)


        def read(kind, text):
            try:
                return kind[text.strip().upper()]
            except KeyError:
                pass
            try:
                return kind(int(text))
            except ValueError as error:
                raise ValueError(f"{text!r}: expected one of {options(kind)}") from error


        def strongest(members):
            return max(members, key=lambda m: m.rank)


        def shown(member):
            return f"{type(member).__name__}:{member.short()}"
        """,
        """
        import enum

        import pytest

        from settings import options, read, shown, strongest


        class Speed(enum.Enum):
            SLOW = 1
            FAST = 2
            TURBO = 3
            DEFAULT = 1  # an alias of SLOW

            @property
            def rank(self):
                return -self.value if self.name == "TURBO" else self.value

            def short(self):
                return self.name[0]


        class Unit(enum.IntEnum):
            KB = 1024
            MB = 1024 * 1024


        def test_the_candidate_reads_the_tests_enum():
            assert options(Speed) == "slow=1, fast=2, turbo=3"
            assert read(Speed, " fast ") is Speed.FAST
            assert read(Speed, "1") is Speed.SLOW is Speed.DEFAULT
            with pytest.raises(ValueError, match="expected one of slow=1, fast=2"):
                read(Speed, "7")
            assert strongest([Speed.TURBO, Speed.FAST, Speed.SLOW]) is Speed.FAST
            assert shown(Speed.TURBO) == "Speed:T"
            assert read(Unit, "mb") is Unit.MB and read(Unit, "mb") * 2 == 2 * 1024 * 1024
            with pytest.raises(TypeError):
                options(int)
        """,
    ),
    _case(
        "flags-text-enums-and-tuple-values-of-the-tests",
        "perms.py",
        """
        import enum


        def grant(kind, letters):
            granted = kind(0)
            for letter in letters:
                granted |= kind[letter]
            return granted


        def is_text_member(value):
            return isinstance(value, str) and isinstance(value, enum.Enum)


        def heaviest(kind):
            return max(kind, key=lambda m: m.value[0] * m.value[1])
        """,
        """
        import enum

        from perms import grant, heaviest, is_text_member


        class Perm(enum.Flag):
            R = 4
            W = 2
            X = 1


        class Mode(str, enum.Enum):
            READ = "r"
            APPEND = "a"


        class Box(enum.Enum):
            SMALL = (1, 2)
            LARGE = (3, 4)


        def test_flags_text_and_tuples():
            assert grant(Perm, "RX") == Perm.R | Perm.X
            assert grant(Perm, "") == Perm(0)
            assert is_text_member(Mode.APPEND) and not is_text_member("a")
            assert heaviest(Box) is Box.LARGE
        """,
    ),
    _case(
        "an-ordered-tests-enum-with-its-own-text",
        "triage.py",
        """
        def worst_first(levels):
            return sorted(set(levels), reverse=True)


        def banner(levels):
            return " > ".join(str(level) for level in worst_first(levels))
        """,
        """
        import enum
        import functools

        from triage import banner, worst_first


        @functools.total_ordering
        class Severity(enum.Enum):
            LOW = 1
            HIGH = 2
            CRITICAL = 3

            def __lt__(self, other):
                if type(other) is not Severity:
                    return NotImplemented
                return self.value < other.value

            def __str__(self):
                return self.name.lower()


        def test_the_candidate_sorts_and_shows_the_tests_enum():
            seen = [Severity.LOW, Severity.CRITICAL, Severity.LOW, Severity.HIGH]
            assert worst_first(seen) == [Severity.CRITICAL, Severity.HIGH, Severity.LOW]
            assert banner(seen) == "critical > high > low"
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        "a-candidate-that-adds-a-value-to-the-tests-enum",
        "settings.py",
        """
        def read(kind, text):
            kind._value2member_map_.setdefault(int(text), kind.FAST)
            return kind(int(text))
        """,
        """
        import enum

        from settings import read


        class Speed(enum.Enum):
            SLOW = 1
            FAST = 2


        def test_read():
            assert read(Speed, "9") is Speed.FAST
            assert Speed(9) is Speed.FAST
        """,
    ),
    _case(
        "a-candidate-that-makes-the-tests-members-equal-anything",
        "settings.py",
        """
        def read(kind, text):
            type.__setattr__(kind, "__eq__", lambda self, other: True)
            type.__setattr__(kind, "__hash__", lambda self: 0)
            return kind.SLOW
        """,
        """
        import enum

        from settings import read


        class Speed(enum.Enum):
            SLOW = 1
            FAST = 2


        def test_read():
            assert read(Speed, "fast") == Speed.FAST
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_the_tests_enums_are_enums_to_the_candidate,
    test_a_candidate_never_changes_the_tests_enum,
) = corpus_tests(CARRIED, ATTACKS)
