"""Values keep their identity, and a candidate's plain function is a function, across the
witness (issue 48, docs/concepts/isolation.md's object model, rows 3.1 and 3.2): a
`str`, `bytes`, `tuple` or `frozenset` that crosses and comes back is the very object
that left (`wire/crossed.py`), one read twice is one object, and `type(m.f)` of a plain
function is the function type (`wire/functions.py`). Each correct case passes plain
`python -m pytest` in-process and must grade `pass` under `isolation: process`; each
attack fools plain pytest and must never pass: a worker that stamps a value it made
with a key the judge gave out for another value, or describes an object as a function
it is not, gains nothing."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "immutables-handed-over-come-home-as-themselves",
        "outline.py",
        """
        def walk(tree, on_leaf, trail=()):
            # Calls on_leaf(trail, leaf) for every leaf of nested lists and dicts.
            if isinstance(tree, dict):
                for key, sub in tree.items():
                    walk(sub, on_leaf, trail + (key,))
            elif isinstance(tree, list):
                for index, sub in enumerate(tree):
                    walk(sub, on_leaf, trail + (index,))
            else:
                on_leaf(trail, tree)


        def tidy(text):
            stripped = text.strip()
            return text if stripped == text else stripped


        def first_of(pairs):
            return pairs[0]
        """,
        """
        from outline import first_of, tidy, walk


        def test_a_leaf_reaches_the_callback_as_the_tests_own_object():
            title = " ".join(["chapter", "one"])
            stamp = b"\\x00\\xffraw"
            span = (3, "pages", 7.5)
            tags = frozenset({"draft", 2})
            found = {}

            def on_leaf(trail, leaf):
                for name, mine in (("title", title), ("stamp", stamp), ("span", span),
                                   ("tags", tags)):
                    if leaf is mine:
                        found[name] = trail

            walk({"head": [[title]], "meta": {"raw": stamp, "at": [span, tags]}}, on_leaf)
            assert found == {"title": ("head", 0, 0), "stamp": ("meta", "raw"),
                             "span": ("meta", "at", 0), "tags": ("meta", "at", 1)}


        def test_an_unchanged_argument_is_returned_itself():
            text = "".join(["al", "ready tidy"])
            assert tidy(text) is text
            assert tidy("  padded ") == "padded"
            pair = ("x", ["list", "inside"])
            assert first_of([pair, ("y",)]) is pair
        """,
    ),
    _case(
        "immutables-read-twice-are-one-object",
        "ring.py",
        """
        MISSING = "<no such key>"


        class Node:
            def __init__(self, name):
                self.name = name
                self.edge = None

            def link(self, other):
                self.edge = ("to", other)
                return self


        def lookup(table, key):
            return table.get(key, MISSING)


        def bounds():
            return _BOUNDS


        _BOUNDS = (0.5, "half", b"\\x01")
        """,
        """
        import ring


        def test_a_sentinel_string_is_the_modules_own():
            assert ring.lookup({}, "k") is ring.MISSING
            assert ring.lookup({"k": 1}, "k") == 1


        def test_a_tuple_read_twice_is_one_tuple():
            assert ring.bounds() is ring.bounds()
            a, b = ring.Node("a"), ring.Node("b")
            a.link(b)
            b.link(a)
            assert a.edge is a.edge
            assert a.edge[1].edge[1].edge is a.edge
        """,
    ),
    _case(
        "plain-functions-are-functions",
        "shapes.py",
        '''
        def area(width, height=1.0, *, unit="m"):
            """Area of a rectangle."""
            return f"{width * height}{unit}2"


        double = lambda x: 2 * x  # noqa: E731


        def apply(f, value):
            return f(value)


        def is_own(f):
            return f is area or f is double


        def counter():
            yield 1


        def label(obj):
            return type(obj).__name__.lower()
        ''',
        """
        import functools
        import inspect
        import pickle
        import types

        import shapes


        def test_the_type_of_a_plain_function_is_the_function_type():
            assert type(shapes.area) is type(lambda: None)
            assert type(shapes.double) is types.FunctionType
            assert inspect.isfunction(shapes.counter)  # a generator function: still a proxy
            assert shapes.area.__name__ == "area" and shapes.area.__doc__ == "Area of a rectangle."
            assert shapes.area.__module__ == "shapes" and shapes.double.__name__ == "<lambda>"
            sig = inspect.signature(shapes.area)
            assert list(sig.parameters) == ["width", "height", "unit"]
            assert sig.parameters["height"].default == 1.0
            assert shapes.area.__code__.co_varnames[:3] == ("width", "height", "unit")


        def test_it_calls_binds_and_comes_home_as_the_candidates():
            assert shapes.area(2, 3, unit="cm") == "6cm2"
            assert shapes.area is shapes.area
            assert shapes.apply(shapes.double, 4) == 8
            assert shapes.is_own(shapes.area) and shapes.is_own(shapes.double)
            assert pickle.loads(pickle.dumps(shapes.area)) is shapes.area

            class Room:
                kind = shapes.label  # a function binds as a method

            assert Room().kind() == "room"

            calls = []

            @functools.wraps(shapes.double)
            def traced(x):
                calls.append(x)
                return shapes.double(x)

            assert shapes.is_own(traced) is False  # the test's wrapper is the test's
            assert shapes.apply(traced, 5) == 10 and calls == [5]
        """,
    ),
    _case(
        "defaults-left-as-they-are-are-the-candidates-own",
        "ledger.py",
        """
        _EPSILON = 1e-9  # sentinels a float and a long int: no cache makes them one
        _CEILING = 10**30
        _HISTORY = []


        def settle(amount, tolerance=_EPSILON, ceiling=_CEILING, /, *, note=None):
            parts = ["tolerance:own" if tolerance is _EPSILON else f"tolerance:{tolerance}"]
            parts.append("ceiling:own" if ceiling is _CEILING else f"ceiling:{ceiling}")
            return ",".join(parts) + ("" if note is None else f",{note}")


        def record(entry, book=_HISTORY):
            book.append(entry)
            return len(_HISTORY)


        def scaled(value, factor=2.5):
            return value * factor
        """,
        """
        import ledger


        def test_a_default_the_test_leaves_is_the_candidates_object():
            assert ledger.settle(10) == "tolerance:own,ceiling:own"
            assert ledger.settle(10, 0.5) == "tolerance:0.5,ceiling:own"
            assert ledger.settle(10, 0.5, 7, note="x") == "tolerance:0.5,ceiling:7,x"
            assert ledger.settle(10, note="late") == "tolerance:own,ceiling:own,late"
            assert ledger.record("a") == 1 and ledger.record("b") == 2
            assert ledger.record("c", []) == 2


        def test_defaults_the_test_sets_on_the_function_are_given():
            assert ledger.scaled(4) == 10.0
            ledger.scaled.__defaults__ = (0.5,)
            assert ledger.scaled(4) == 2.0
            assert ledger.scaled(4, 3) == 12
        """,
    ),
)


# In the witness's worker only: what the candidate does to the wire around it.
_IN_WORKER = """
import gc
import sys

IN_WORKER = any(name.startswith("evalpin_wire") for name in sys.modules)


def _worker():
    return next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
"""

ATTACKS = _corpus(
    _case(
        "a-made-tuple-stamped-with-the-key-of-a-tests-value",
        "vault.py",
        _IN_WORKER
        + """

def keep(value):
    return len(value)


def guesses():
    if not IN_WORKER:  # plain pytest: the candidate shares the test's process
        for module in list(sys.modules.values()):
            if hasattr(module, "SECRET_PAIR"):
                return [module.SECRET_PAIR]
    table = _worker().crossed
    keys = iter(range(2, 2002, 2))  # every key the judge may have given out, and more
    real = table.key
    table.key = lambda value: next(keys) if value == ("secret", 42) else real(value)
    return [("secret", int("42")) for _ in range(1000)]  # each one stamped with a key
""",
        """
        import vault

        SECRET_PAIR = ("secret", 42)


        def test_the_vault_hands_back_the_tests_own_pair():
            assert vault.keep(("public", 1)) == 2
            assert vault.keep(("secret", int("42"))) == 2  # equal, not the test's own
            assert any(guess is SECRET_PAIR for guess in vault.guesses())
        """,
    ),
    _case(
        "an-always-equal-object-described-as-a-plain-function",
        "judged.py",
        _IN_WORKER
        + """

class Anything:
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


def answer():
    if IN_WORKER:
        from evalpin_wire import functions

        real = functions.extras

        def forged(worker, value, data, e):
            data = real(worker, value, data, e)
            if type(value) is Anything:
                shape = e(__import__("inspect").signature(answer))
                data["f"] = {"n": "answer", "q": "answer", "sg": shape}
            return data

        functions.extras = forged
        return Anything()
    return 42
""",
        """
        from judged import answer


        def test_the_answer():
            assert answer() == 42
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_carried_case_grades_pass,
    test_an_attack_never_passes,
) = corpus_tests(CARRIED, ATTACKS)
