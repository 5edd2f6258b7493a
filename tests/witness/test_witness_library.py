"""Library code's own idioms across the witness (issue 48, the conformance corpus's
residual disputes, by class): a candidate warning or error class deriving from two
builtin exceptions (`pytest.warns(DeprecationWarning)` catches a warning that is also a
`UserWarning`), the candidate's functions and generators found by `inspect`
(`getmembers(m, isfunction)`, `isinstance(g, types.GeneratorType)`), a test's callback
whose arity the candidate finds by trying (an arity error is raised at the call, as in
one process), a test's own exception raised through candidate code coming home as
itself; a candidate iterator the test drains, or a stream the candidate closes. Each
correct case passes plain `python -m pytest` in-process and must grade `pass` under
`isolation: process`; each attack fools plain pytest and must never pass (one answer
object serving two comparisons has no truth; always-equal items in a drained batch)."""

from __future__ import annotations

import pytest

from evalpin.core.instrument.graders.wire.shares import fingerprint
from evalpin.run.sandbox import Isolation
from tests.harness import (
    Case,
    _corpus,
    _d,
    corpus_tests,
    expect,
    grade,
    item,
    verdict,
)

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire


def _case(name: str, module_file: str, module_src: str, test_src: str) -> Case:
    return Case(name, module_file, _d(module_src), _d(test_src))


CARRIED = _corpus(
    _case(
        "warnings-and-errors-of-two-builtin-kinds",
        "legacy.py",
        """
        import warnings


        class ToolkitWarning(UserWarning):
            pass


        class RenamedWarning(ToolkitWarning, DeprecationWarning):
            pass


        class NoSuchKey(KeyError, ValueError):
            pass


        def fetch(table, key):
            if key not in table:
                raise NoSuchKey(key)
            return table[key]


        def oldName(value):
            warnings.warn("oldName is renamed new_name", RenamedWarning, stacklevel=2)
            return value * 2
        """,
        """
        import warnings

        import pytest

        from legacy import NoSuchKey, RenamedWarning, ToolkitWarning, fetch, oldName


        def test_caught_as_a_deprecation():
            with pytest.warns(DeprecationWarning, match="renamed new_name"):
                assert oldName(4) == 8


        def test_caught_as_its_own_families():
            with pytest.warns(ToolkitWarning):
                oldName(1)
            with pytest.deprecated_call():
                oldName(1)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                oldName(2)
            assert [issubclass(w.category, UserWarning) for w in seen] == [True]
            assert seen[0].category is RenamedWarning


        def test_an_error_of_two_kinds():
            for kind in (KeyError, ValueError, LookupError, NoSuchKey):
                with pytest.raises(kind):
                    fetch({}, "x")
            try:
                fetch({"a": 1}, "b")
            except ValueError as error:
                assert isinstance(error, KeyError)
            assert fetch({"a": 1}, "a") == 1
        """,
    ),
    _case(
        "functions-and-generators-found-by-inspect",
        "toolbox.py",
        """
        def scale(values, by=2):
            \"\"\"Every value times `by`.\"\"\"
            return [v * by for v in values]


        def countdown(n):
            \"\"\"n, n-1, ... 1.\"\"\"
            while n:
                yield n
                n -= 1


        def _private():
            return None


        class Box:
            \"\"\"Not a function.\"\"\"
        """,
        """
        import inspect
        import types

        import pytest

        import toolbox

        PUBLIC = [
            f
            for _, f in inspect.getmembers(toolbox, inspect.isfunction)
            if not f.__name__.startswith("_")
        ]


        @pytest.mark.parametrize("fn", PUBLIC, ids=[f.__name__ for f in PUBLIC])
        def test_every_public_function_is_documented(fn):
            assert fn.__doc__
            assert fn.__module__ == toolbox.__name__


        def test_what_inspect_sees():
            assert sorted(f.__name__ for f in PUBLIC) == ["countdown", "scale"]
            assert isinstance(toolbox.scale, types.FunctionType)
            assert not isinstance(toolbox.Box, types.FunctionType)
            steps = toolbox.countdown(3)
            assert isinstance(steps, types.GeneratorType) and inspect.isgenerator(steps)
            assert not isinstance(toolbox.scale, types.GeneratorType)
            assert list(steps) == [3, 2, 1]
            assert toolbox.scale([1, 2], by=3) == [3, 6]
        """,
    ),
    _case(
        "a-callbacks-arity-found-by-trying",
        "actions.py",
        """
        def run_action(action, text, position, tokens):
            \"\"\"Call `action` with as many of (text, position, tokens) as it takes, the
            last ones kept: an arity error is raised at the call itself (no frame of the
            action's in its traceback); an error inside the action goes on.\"\"\"
            given = (text, position, tokens)
            for skip in range(len(given) + 1):
                try:
                    return action(*given[skip:])
                except TypeError as error:
                    if error.__traceback__.tb_next is not None:
                        raise
            raise TypeError("no arity fits")
        """,
        """
        import pytest

        from actions import run_action


        def test_each_arity_fits():
            assert run_action(lambda toks: toks[::-1], "t", 0, [1, 2]) == [2, 1]
            assert run_action(lambda pos, toks: (pos, toks), "t", 5, []) == (5, [])
            assert run_action(lambda s, p, t: s + str(p), "t", 7, []) == "t7"
            assert run_action(lambda: "none", "t", 0, []) == "none"
            assert run_action("-".join, "t", 0, ["a", "b"]) == "a-b"
            assert run_action(str.upper, "t", 0, "x") == "X"


        def test_defaults_and_keywords_stay_the_tests():
            def action(toks, *, scale=10, label="x"):
                return (label, [t * scale for t in toks])

            assert run_action(action, "t", 1, [1]) == ("x", [10])


        def test_an_error_inside_the_action_goes_on():
            def broken(toks):
                return len(toks) + "oops"

            with pytest.raises(TypeError, match="unsupported operand"):
                run_action(broken, "t", 0, [1])
        """,
    ),
    _case(
        "a-tests-exception-comes-home-as-itself",
        "relay.py",
        """
        def relay(handler, value):
            try:
                return handler(value)
            except (TypeError, OSError):
                raise


        def first_error(*handlers):
            for handler in handlers:
                try:
                    handler()
                except Exception as error:
                    return error
            return None


        def translate(handler):
            try:
                handler()
            except LookupError as error:
                raise RuntimeError("translated") from error
        """,
        """
        import pytest

        from relay import first_error, relay, translate


        def test_reraised():
            marker = TypeError("the test's own")

            def handler(value):
                raise marker

            with pytest.raises(TypeError) as caught:
                relay(handler, 1)
            assert caught.value is marker


        def test_returned_and_chained():
            gone = FileNotFoundError(2, "no such file", "/nowhere")

            def fails():
                raise gone

            assert first_error(lambda: None, fails) is gone
            missing = KeyError("k")

            def looks_up():
                raise missing

            with pytest.raises(RuntimeError) as caught:
                translate(looks_up)
            assert caught.value.__cause__ is missing
        """,
    ),
)

CARRIED.update(
    _corpus(
        _case(
            "stdlib-functions-the-candidate-keeps",
            "signing.py",
            """
            import bisect
            import hashlib
            import hmac


            class Signer:
                default_digest = hashlib.sha256

                def __init__(self, key, digest=None, fallbacks=()):
                    self.key = key
                    self.digest = digest or self.default_digest
                    self.fallbacks = [f or hashlib.sha1 for f in fallbacks]
                    self.insert = bisect.insort

                def sign(self, data):
                    return hmac.new(self.key, data, self.digest).hexdigest()
            """,
            """
            import bisect
            import hashlib
            import hmac

            from signing import Signer


            def test_a_subclass_keeps_a_constructor_as_a_class_value():
                class Sha512Signer(Signer):
                    default_digest = hashlib.sha512

                assert Sha512Signer(b"k").digest is hashlib.sha512
                assert Signer(b"k").digest is hashlib.sha256


            def test_the_kept_constructors_are_the_tests_own():
                signer = Signer(b"k", fallbacks=[None, hashlib.md5])
                assert signer.digest is hashlib.sha256
                assert signer.fallbacks == [hashlib.sha1, hashlib.md5]
                assert signer.insert is bisect.insort
                assert Signer(b"k", hashlib.sha512).digest == hashlib.sha512
                expected = hmac.new(b"k", b"data", hashlib.sha256).hexdigest()
                assert signer.sign(b"data") == expected
            """,
        ),
    )
)

CARRIED.update(
    _corpus(
        _case(
            "a-converters-marks-changed-by-the-test",
            "converters.py",
            """
            import re


            def pattern(regex, groups=0):
                def mark(fn):
                    fn.regex = regex
                    fn.groups = groups
                    return fn

                return mark


            def convert(text, converter):
                found = re.fullmatch(converter.regex, text)
                if found is None:
                    raise ValueError(text)
                if converter.groups is None:
                    raise ValueError("groups must be a number")
                return converter(found.group(converter.groups))
            """,
            """
            import pytest

            from converters import convert, pattern


            def test_marks_the_test_changes_are_what_the_candidate_reads():
                @pattern(r"(\\d+)(km|m)", groups=1)
                def distance(text):
                    return int(text)

                assert (distance.regex, distance.groups) == (r"(\\d+)(km|m)", 1)
                assert convert("12km", distance) == 12
                distance.groups = None
                with pytest.raises(ValueError, match="groups must"):
                    convert("12km", distance)
                distance.groups = 2
                with pytest.raises(ValueError):
                    convert("12km", distance)  # int("km")
                distance.regex = r"(\\d+)"
                distance.groups = 1
                assert convert("7", distance) == 7
            """,
        ),
    )
)

CARRIED.update(
    _corpus(
        _case(
            "a-spy-patched-over-a-candidates-special-method",
            "registry.py",
            """
            class Name:
                def __init__(self, text):
                    self.text = text

                def __hash__(self):
                    return hash(self.text)

                def __eq__(self, other):
                    if isinstance(other, Name):
                        return self.text == other.text
                    return NotImplemented


            class Registry:
                def __init__(self, names):
                    self._entries = {Name(n): None for n in names}

                def put(self, name, value):
                    self._entries[Name(name)] = value

                def get(self, name):
                    return self._entries[Name(name)]
            """,
            """
            from registry import Name, Registry


            def test_the_candidates_own_lookups_call_the_spy(monkeypatch):
                registry = Registry(["alpha", "beta", "gamma"])
                compared = []
                original = Name.__eq__

                def spy(self, other):
                    compared.append(self.text)
                    return original(self, other)

                monkeypatch.setattr(Name, "__eq__", spy)
                registry.put("gamma", 3)
                assert compared == ["gamma"]
                assert Name("x") == Name("x") and compared == ["gamma", "x"]
                monkeypatch.undo()
                registry.put("beta", 2)
                assert compared == ["gamma", "x"]
                assert registry.get("beta") == 2 and registry.get("gamma") == 3
                assert Name("x") == Name("x") and Name("x") != Name("y")
            """,
        ),
    )
)

CARRIED.update(
    _corpus(
        _case(
            "a-candidates-error-changed-by-the-tests-override",
            "tokens.py",
            """
            class BadToken(ValueError):
                def __init__(self, message, payload=None):
                    super().__init__(message)
                    self.payload = payload


            class Checker:
                def check(self, token):
                    if not token.endswith("!"):
                        raise BadToken("unsigned", payload=token)
                    return token[:-1]


            class Reader:
                checker = Checker

                def read(self, token):
                    try:
                        return True, self.checker().check(token)
                    except BadToken as error:
                        return False, error.payload
            """,
            """
            from tokens import BadToken, Checker, Reader


            def test_the_override_drops_the_payload():
                reader = Reader()
                assert reader.read("abc") == (False, "abc")

                class Strict(Checker):
                    def check(self, token):
                        try:
                            return super().check(token)
                        except BadToken as error:
                            error.payload = None
                            error.seen_by = "strict"
                            raise

                reader.checker = Strict
                assert reader.read("abc") == (False, None)
                assert reader.read("ok!") == (True, "ok")
            """,
        ),
    )
)

ATTACKS = _corpus(
    _case(
        "one-answer-object-for-two-comparisons",
        "shared_answer.py",
        """
        class _Answer:
            def __bool__(self):
                return True


        ANSWER = _Answer()


        class Price:
            def __init__(self, cents):
                self.cents = cents

            def __eq__(self, other):
                return ANSWER

            def __ne__(self, other):
                return ANSWER


        def price(cents):
            return Price(0)
        """,
        """
        from shared_answer import price


        def test_price():
            p = price(250)
            assert all([p == 250, p != 300])
        """,
    ),
)


ATTACKS.update(
    _corpus(
        _case(
            "an-always-equal-name-after-a-patch-undone",
            "names.py",
            """
            class Name:
                def __init__(self, text):
                    self.text = text

                def __eq__(self, other):
                    return True

                __hash__ = object.__hash__


            def name(text):
                return Name(text)
            """,
            """
            from names import Name, name


            def test_name(monkeypatch):
                monkeypatch.setattr(Name, "__eq__", lambda self, other: self is other)
                monkeypatch.undo()
                assert name("alpha") == "alpha"
            """,
        ),
    )
)


# Iterators and streams (the corpus's iterator-heavy library ran past the witness's
# timeout one round trip per item; a stream the candidate closed killed its worker): a
# candidate iterator a consumer drains (`list`, `tuple`, `sorted`, `str.join`) comes over
# in batches; what is not a drain (`for`, `next()`, `any()`, `zip()`) stays lazy.
ITERATION = _corpus(
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


ITERATION_ATTACKS = _corpus(
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


CARRIED.update(ITERATION)
ATTACKS.update(ITERATION_ATTACKS)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_carried_case_grades_pass,
    test_an_attack_never_passes,
) = corpus_tests(CARRIED, ATTACKS)


CANDIDATES_WORD = _case(
    "a-version-compared-with-plain-data",
    "versions.py",
    """
    class Version:
        def __init__(self, *parts):
            self.parts = tuple(parts)

        def _other(self, other):
            if isinstance(other, Version):
                return other.parts
            if isinstance(other, str):
                return tuple(int(p) for p in other.split("."))
            return tuple(other)

        def __eq__(self, other):
            return self.parts == self._other(other)

        def __lt__(self, other):
            return self.parts < self._other(other)

        def __hash__(self):
            return hash(self.parts)
    """,
    """
    from versions import Version


    def test_between_versions_and_unrelated_data():
        assert Version(1, 2) == Version(1, 2)
        assert Version(1, 2) < Version(1, 3)
        assert {Version(1, 2): "x"}[Version(1, 2)] == "x"


    def test_against_plain_data():
        assert Version(1, 2) == (1, 2)
        assert Version(1, 2) < "1.10"
    """,
)


VALUE_BACKED_WORD = _case(
    "a-named-tuple-compared-with-text",
    "refs.py",
    """
    from collections import namedtuple


    class Ref(namedtuple("Ref", "scheme rest")):
        def __eq__(self, other):
            if isinstance(other, str):
                other = parse(other)
            return tuple(self) == tuple(other)

        __hash__ = tuple.__hash__


    def parse(text):
        scheme, _, rest = text.partition(":")
        return Ref(scheme.lower(), rest)
    """,
    """
    from refs import parse


    def test_as_its_value():
        assert parse("HTTP:x") == ("http", "x")


    def test_as_the_text_it_parses():
        assert parse("HTTP:x") == "http:x"
    """,
)


def test_a_value_backed_objects_own_comparison_with_text_is_disputed_saying_why(
    grade, backend: Isolation
) -> None:
    """A named tuple of the candidate's compares as its value (the judge's tuple rule);
    with text its own `__eq__` would parse, an answer the judge does not believe."""
    outcome = grade(VALUE_BACKED_WORD, backend)
    assert outcome.reasons == ["witness:compared"], (outcome.reasons, outcome.witness_tail)
    assert "[compared] Ref.__eq__ with the tests' str" in outcome.witness_tail
    assert outcome.witness_failed_tests == ["test_as_the_text_it_parses"]


def test_a_candidates_own_comparison_with_the_tests_data_is_disputed_saying_why(
    grade, backend: Isolation
) -> None:
    """The object model's inherent row: `Version(1, 2) == (1, 2)` answered by the
    candidate's `__eq__` is its word; the witness never believes it, the case is
    disputed `witness:compared` (not a fail, not `witness:failed`), and its tail names
    the comparison. Comparisons between candidate objects (the candidate's, by the rule)
    leave no such dispute when the tests pass."""
    outcome = grade(CANDIDATES_WORD, backend)
    expect(outcome, "disputed")
    assert outcome.reasons == ["witness:compared"], outcome.reasons
    assert "the judge did not believe: [compared] Version.__eq__ with the tests' tuple" in (
        outcome.witness_tail
    )
    assert outcome.witness_failed_tests == ["test_against_plain_data"]
    passing = Case(
        "a-version-compared-with-versions-only",
        CANDIDATES_WORD.module_file,
        CANDIDATES_WORD.module_src,
        CANDIDATES_WORD.test_src.split("\n\n\ndef test_against_plain_data")[0] + "\n",
    )
    assert verdict(grade(passing, backend)) == "pass"
    elsewhere = Case(
        "a-version-compared-by-a-passing-test-only",
        CANDIDATES_WORD.module_file,
        CANDIDATES_WORD.module_src + "\n\ndef make(*parts):\n    return Version(*parts)\n"
        "\n\ndef mark():\n    return getattr(make, 'label', None)\n",
        "import versions\n\n\ndef test_compared_and_passing():\n"
        "    assert not (versions.Version(1, 2) == (1, 3))\n\n\n"
        "def test_failing_for_another_reason():\n"  # (a test's mark on a candidate function)
        "    versions.make.label = 'v'\n"
        "    assert versions.mark() == 'v'\n",
    )
    other = grade(elsewhere, backend)  # the noted comparison is not the failing test's
    assert other.reasons == ["witness:failed"], (other.reasons, other.witness_tail)


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
