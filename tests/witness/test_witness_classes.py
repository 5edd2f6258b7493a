"""The tests' classes, functions and values as the candidate uses them (issue 48): a
tests' class handed over is a class there (the one its instances have), a tests'
exception class is raised, caught and made there, a tests' function keeps its
parameters, abc's abstract mark, the links inside a kept container, a tests' subclass
overriding a private hook, a function's module, an int past JSON's digits, a dotted
monkeypatch through a module's attribute. Each correct case passes plain `python -m
pytest` in-process and must grade `pass` under `isolation: process`; each attack fools
plain pytest and must stay disputed. Real sandboxed runs through the real pipeline."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-tests-class-is-a-class-there",
        "catalog.py",
        """
        _shelves = {}


        def shelve(kind, *fields):
            if not isinstance(kind, type):
                raise TypeError(f"a class, please: {kind!r}")
            _shelves[kind] = fields
            return kind


        def describe(item):
            fields = _shelves[type(item)]
            return {f: getattr(item, f) for f in fields}


        def build(kind, *args):
            made = kind(*args)
            return made, type(made) is kind, isinstance(made, kind), kind.__name__, kind.unit


        def teach(kind, method):
            setattr(kind, method.__name__, method)
        """,
        """
        from collections import namedtuple

        from catalog import build, describe, shelve, teach

        Pair = namedtuple("Pair", "left right")


        class Box:
            unit = "cm"

            def __init__(self, w=1, h=2):
                self.w, self.h = w, h


        def test_a_table_keyed_by_the_tests_class():
            assert shelve(Box, "w", "h") is Box
            assert describe(Box(3, 4)) == {"w": 3, "h": 4}
            assert describe(Box()) == {"w": 1, "h": 2}


        def test_made_by_the_candidate_from_the_class():
            made, same, inst, name, unit = build(Box, 5, 6)
            assert type(made) is Box and (made.w, made.h) == (5, 6)
            assert (same, inst, name, unit) == (True, True, "Box", "cm")


        def test_a_named_tuple_class():
            assert shelve(Pair, "right") is Pair
            assert describe(Pair(1, 2)) == {"right": 2}


        def test_a_method_the_candidate_teaches_the_class():
            def area(self):
                return self.w * self.h

            teach(Box, area)
            assert Box(2, 5).area() == 10
        """,
    ),
    _case(
        "the-tests-exception-classes",
        "retry.py",
        """
        import contextlib


        def until(produce, stop):
            out = []
            with contextlib.suppress(stop):
                while True:
                    out.append(produce())
            return out


        def fail(kind, *args, **kwargs):
            raise kind(*args, **kwargs)


        def fallback(fn, errors, default):
            try:
                return fn()
            except errors:
                return default


        @contextlib.contextmanager
        def tracked(log):
            log.append("open")
            try:
                yield
            finally:
                log.append("closed")
        """,
        """
        import pytest

        from retry import fail, fallback, tracked, until


        class Drained(Exception):
            pass


        class Rejected(Exception):
            def __init__(self, reason, *, status=400):
                super().__init__(reason)
                self.status = status


        class Cancelled(BaseException):
            pass


        def test_suppressed_by_a_tuple_of_the_tests_classes():
            stock = [3, 2, 1]

            def take():
                if not stock:
                    raise Drained
                return stock.pop()

            assert until(take, (KeyError, Drained)) == [1, 2, 3]


        def test_raised_by_the_candidate_as_the_tests_own():
            with pytest.raises(Rejected) as info:
                fail(Rejected, "no", status=409)
            assert type(info.value) is Rejected
            assert (str(info.value), info.value.status) == ("no", 409)


        def test_caught_by_the_candidate():
            def boom():
                raise Rejected("late")

            assert fallback(boom, Rejected, "ok") == "ok"
            assert fallback(boom, (TypeError, Exception), "any") == "any"


        @pytest.mark.parametrize("kind", [Drained, Cancelled])
        def test_through_the_candidates_context_manager(kind):
            log = []
            with pytest.raises(kind):
                with tracked(log):
                    raise kind()
            assert log == ["open", "closed"]
        """,
    ),
    _case(
        "a-tests-function-keeps-its-parameters",
        "memo.py",
        """
        import asyncio
        import inspect


        def positional_names(fn):
            code = fn.__code__
            return code.co_varnames[: code.co_argcount]


        def once_per(*names):
            def wrap(fn):
                code = fn.__code__
                order = code.co_varnames[: code.co_argcount]
                given = fn.__defaults__ or ()
                defaults = dict(zip(order[len(order) - len(given) :], given))
                done = set()

                def run(*args, **kwargs):
                    bound = dict(zip(order, args))
                    key = tuple(bound.get(n, kwargs.get(n, defaults.get(n))) for n in names)
                    if key not in done:
                        done.add(key)
                        return fn(*args, **kwargs)

                return run

            return wrap


        def lazily(fn):
            if inspect.iscoroutinefunction(fn):

                async def run(*args, **kwargs):
                    await asyncio.sleep(0)
                    return await fn(*args, **kwargs)

            else:

                def run(*args, **kwargs):
                    return fn(*args, **kwargs)

            run.__annotations__ = dict(fn.__annotations__)
            return run


        def defaults_of(fn):
            return fn.__defaults__, fn.__kwdefaults__


        _remembered = {}


        def lookup(rule, rows):
            if rule in _remembered:
                return _remembered[rule]
            found = [r for r in rows if rule(r)]
            if getattr(rule, "remember", lambda: True)():
                _remembered[rule] = found
            return found


        def remembered():
            return len(_remembered)
        """,
        """
        import asyncio
        import decimal

        from memo import defaults_of, lazily, once_per, positional_names


        def test_the_candidate_reads_the_code_of_the_tests_function():
            def area(w, h=2, /, depth=1, *more, unit, scale=1.0, **extra):
                return w * h

            assert positional_names(area) == ("w", "h", "depth")
            assert defaults_of(area) == ((2, 1), {"scale": 1.0})


        def test_a_memoizer_by_argument_name():
            seen = []

            @once_per("user")
            def greet(user, loud=False):
                seen.append(user)

            greet("ann")
            greet("bob", True)
            greet("ann", loud=True)
            greet(user="bob")
            assert seen == ["ann", "bob"]


        def test_a_mark_that_is_a_function_of_the_tests():
            from memo import lookup, remembered

            odd = lambda n: n % 2  # noqa: E731
            odd.remember = lambda: False
            assert lookup(odd, [1, 2, 3]) == [1, 3]
            assert remembered() == 0
            assert lookup(lambda n: n > 1, [1, 2, 3]) == [2, 3]
            assert remembered() == 1


        def test_an_async_function_stays_one():
            async def price(qty: int, rate: decimal.Decimal = None) -> float:
                return qty * 1.5

            wrapped = lazily(price)
            assert asyncio.run(wrapped(4)) == 6.0
            assert wrapped.__annotations__ == {
                "qty": int,
                "rate": decimal.Decimal,
                "return": float,
            }
        """,
    ),
    _case(
        "abstract-marks-and-private-hooks",
        "shapes.py",
        """
        class memo:
            def __init__(self, fn):
                self.fn = fn
                self.__isabstractmethod__ = getattr(fn, "__isabstractmethod__", False)

            def __get__(self, obj, owner=None):
                return self if obj is None else self.fn.__get__(obj, owner)


        class Pipeline:
            def run(self, items):
                return [self._stage(x) for x in items]

            def _stage(self, x):
                return x


        def make_checker(kind):
            return lambda x: isinstance(x, kind)


        is_text = make_checker(str)
        """,
        """
        import abc

        import pytest

        import shapes


        def test_an_abstract_method_under_the_candidates_decorator():
            class Shape(abc.ABC):
                @shapes.memo
                @abc.abstractmethod
                def area(self): ...

            with pytest.raises(TypeError):
                Shape()

            class Square(Shape):
                @shapes.memo
                def area(self):
                    return 9

            assert Square().area() == 9


        def test_the_tests_private_hook_overrides_the_candidates():
            class Doubling(shapes.Pipeline):
                def _stage(self, x):
                    return super()._stage(x) * 2

            assert Doubling().run([1, 2]) == [2, 4]
            assert shapes.Pipeline().run([1, 2]) == [1, 2]


        def test_a_candidate_functions_own_module():
            assert shapes.is_text.__module__ == "shapes"
            assert shapes.make_checker.__module__ == "shapes"
            assert shapes.is_text("a") and not shapes.is_text(1)
        """,
    ),
    _case(
        "links-kept-huge-ints-and-a-patched-clock",
        "ledger.py",
        """
        import time


        class Chain:
            def __init__(self):
                head = []
                head[:] = [head, head, None]
                self.head = head

            def add(self, value):
                tail = self.head[0]
                link = [tail, self.head, value]
                tail[1] = link
                self.head[0] = link


        def power(base, exp):
            return base**exp


        def stamp():
            return time.time()
        """,
        """
        import ledger


        def walk(head):
            cur, out = head, []
            while True:
                nxt = cur[1]
                assert nxt[0] is cur
                cur = nxt
                if cur is head:
                    return out
                out.append(cur[2])


        def test_a_ring_of_lists_walks_as_in_one_process():
            chain = ledger.Chain()
            for word in ["x", "y", "z"]:
                chain.add(word)
            assert walk(chain.head) == ["x", "y", "z"]
            chain.add("w")
            assert walk(chain.head) == ["x", "y", "z", "w"]


        def test_an_int_past_jsons_digits():
            big = ledger.power(7, 30000)
            assert big == 7**30000 and big % 7 == 0
            assert ledger.power(-(3**9000), 3) == -(3**27000)


        def test_a_clock_patched_through_the_modules_attribute(monkeypatch):
            now = [100.0]
            monkeypatch.setattr("ledger.time.time", lambda: now[0])
            assert ledger.stamp() == 100.0
            now[0] = 160.0
            assert ledger.stamp() == 160.0
        """,
    ),
)


CARRIED.update(
    _corpus(
        _case(
            "a-tests-mapping-and-sequence",
            "records.py",
            """
            from collections.abc import Mapping, Sequence


            def keep(doc):
                if not isinstance(doc, Mapping):
                    raise ValueError("a mapping, please")
                return dict(doc), sorted(doc.keys()), doc.get("k"), "k" in doc


            def summed(row):
                if not isinstance(row, Sequence):
                    raise TypeError("a sequence, please")
                return sum(row[i] for i in range(len(row))), list(reversed(row)), row.index(5)
            """,
            """
            from collections.abc import Mapping, Sequence

            from records import keep, summed


            class Frozen(Mapping):
                def __init__(self, **data):
                    self._data = data

                def __getitem__(self, key):
                    return self._data[key]

                def __iter__(self):
                    return iter(self._data)

                def __len__(self):
                    return len(self._data)

                def get(self, key, default=None):
                    return ("mine", self._data.get(key, default))


            class Triple(Sequence):
                def __init__(self, *items):
                    self._items = items

                def __getitem__(self, i):
                    return self._items[i]

                def __len__(self):
                    return len(self._items)


            def test_the_tests_mapping_is_a_mapping_there():
                assert keep(Frozen(z=1, k=2)) == ({"z": 1, "k": 2}, ["k", "z"], ("mine", 2), True)


            def test_the_tests_sequence_is_a_sequence_there():
                assert summed(Triple(4, 5, 6)) == (15, [6, 5, 4], 1)
            """,
        ),
        _case(
            "a-hash-kept-in-a-slot",
            "tags.py",
            """
            import functools


            class Tag:
                __slots__ = ("label", "__hash__")

                def __init__(self, label):
                    self.label = label
                    self.__hash__ = functools.cache(lambda: hash(("tag", label)))

                def __eq__(self, other):
                    return isinstance(other, Tag) and other.label == self.label


            def find(table, label):
                return table[Tag(label)]
            """,
            """
            from tags import Tag, find


            def test_tags_as_keys():
                red = Tag("red")
                table = {red: 1, Tag("blue"): 2}
                assert table[red] == 1 and table[Tag("blue")] == 2
                assert hash(red) == hash(red)
                assert find({Tag("green"): 3}, "green") == 3
            """,
        ),
    )
)


ATTACKS = _corpus(
    _case(
        "an-eq-taught-to-the-tests-class",
        "units.py",
        """
        def register(kind):
            kind.__eq__ = lambda self, other: True
            return kind


        def convert(kind, value):
            return kind(value + 1)
        """,
        """
        from units import convert, register


        class Metres:
            def __init__(self, v):
                self.v = v

            def __eq__(self, other):
                return type(other) is Metres and other.v == self.v


        def test_convert():
            register(Metres)
            assert convert(Metres, 3) == Metres(3)
        """,
    ),
    _case(
        "a-candidates-subclass-posing-as-the-tests-class",
        "units.py",
        """
        def convert(kind, value):
            class Posing(kind):
                def __eq__(self, other):
                    return True

            return Posing.__new__(Posing)
        """,
        """
        from units import convert


        class Metres:
            def __init__(self, v):
                self.v = v

            def __eq__(self, other):
                return type(other) is type(self) and other.v == self.v


        def test_convert():
            made = convert(Metres, 3)
            assert isinstance(made, Metres)
            assert made == Metres(3)
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_the_tests_classes_and_functions_are_carried,
    test_the_candidate_never_rewrites_the_tests_class,
) = corpus_tests(CARRIED, ATTACKS)
