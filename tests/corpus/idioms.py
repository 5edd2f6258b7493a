"""Ordinary code nobody listed (tests/witness/test_witness_idioms.py grades it): IDIOMS,
correct modules and tests grouped by kind of idiom, each to grade `pass`; UNCARRIED,
what the wire cannot carry, each with why, to end disputed."""

from __future__ import annotations

from tests.harness import Case, _corpus, _d

IDIOMS = _corpus(
    # -- exceptions: chains, notes, OS fields, groups ---------------------------------
    Case(
        "exception-chains-and-notes",
        "loader.py",
        _d(
            """
            import json


            class LoadError(Exception):
                def __init__(self, source, detail):
                    super().__init__(f"{source}: {detail}")
                    self.source = source
                    self.detail = detail


            def load(source, text):
                try:
                    return json.loads(text)
                except json.JSONDecodeError as exc:
                    raise LoadError(source, "bad json") from exc


            def setting(settings, key):
                try:
                    return settings[key]
                except KeyError:
                    raise LookupError(f"no setting {key!r}")


            def quiet(settings, key):
                try:
                    return settings[key]
                except KeyError:
                    raise ValueError("missing") from None


            def check_age(age):
                if age < 0:
                    err = ValueError("age must not be negative", age)
                    err.add_note("ages count from birth")
                    err.add_note(f"got {age}")
                    raise err
                return age
            """
        ),
        _d(
            """
            import json

            import pytest

            import loader as m


            def test_cause_is_the_original_error():
                with pytest.raises(m.LoadError) as info:
                    m.load("cfg", "{bad")
                cause = info.value.__cause__
                assert isinstance(cause, json.JSONDecodeError)
                assert cause.pos == 1 and cause.lineno == 1
                assert info.value.source == "cfg"
                assert str(info.value) == "cfg: bad json"


            def test_implicit_context():
                with pytest.raises(LookupError) as info:
                    m.setting({}, "port")
                assert isinstance(info.value.__context__, KeyError)
                assert info.value.__context__.args == ("port",)
                assert info.value.__cause__ is None
                assert not info.value.__suppress_context__


            def test_from_none_suppresses():
                with pytest.raises(ValueError, match="missing") as info:
                    m.quiet({}, "x")
                assert info.value.__suppress_context__
                assert info.value.__cause__ is None


            def test_notes_and_args():
                with pytest.raises(ValueError) as info:
                    m.check_age(-3)
                assert info.value.args == ("age must not be negative", -3)
                assert info.value.__notes__ == ["ages count from birth", "got -3"]
            """
        ),
    ),
    Case(
        "exception-os-fields-and-groups",
        "cleanup.py",
        _d(
            """
            import os


            def first_line(path):
                with open(path) as f:
                    return f.readline()


            def remove_all(paths):
                errors = []
                for path in paths:
                    try:
                        os.remove(path)
                    except OSError as exc:
                        errors.append(exc)
                if errors:
                    raise ExceptionGroup("some files could not be removed", errors)


            def parse_ints(items):
                problems, out = [], []
                for i, item in enumerate(items):
                    try:
                        out.append(int(item))
                    except ValueError as exc:
                        exc.add_note(f"item {i}")
                        problems.append(exc)
                if problems:
                    raise ExceptionGroup("bad items", problems)
                return out
            """
        ),
        _d(
            """
            import errno

            import pytest

            import cleanup as m


            def test_oserror_fields(tmp_path):
                missing = str(tmp_path / "none.txt")
                with pytest.raises(FileNotFoundError) as info:
                    m.first_line(missing)
                assert info.value.errno == errno.ENOENT
                assert info.value.filename == missing
                assert info.value.strerror == "No such file or directory"


            def test_group_of_os_errors(tmp_path):
                (tmp_path / "a.txt").write_text("a")
                gone = str(tmp_path / "b.txt")
                with pytest.raises(ExceptionGroup) as info:
                    m.remove_all([str(tmp_path / "a.txt"), gone])
                assert info.group_contains(FileNotFoundError)
                assert [e.filename for e in info.value.exceptions] == [gone]
                assert not (tmp_path / "a.txt").exists()


            def test_group_members_keep_their_notes():
                with pytest.raises(ExceptionGroup) as info:
                    m.parse_ints(["1", "x", "2", "y"])
                assert [e.__notes__ for e in info.value.exceptions] == [["item 1"], ["item 3"]]
                matched, rest = info.value.split(ValueError)
                assert rest is None and len(matched.exceptions) == 2
            """
        ),
    ),
    # -- identity of returned objects ----------------------------------------------------
    Case(
        "identity-sentinels-caches-singletons",
        "registry.py",
        _d(
            """
            import functools
            from datetime import datetime, timezone

            MISSING = object()
            _config = {"debug": False, "level": 1}
            _names = []


            def lookup(mapping, key):
                return mapping.get(key, MISSING)


            def config():
                return _config


            @functools.lru_cache(maxsize=None)
            def primes_below(n):
                return [p for p in range(2, n) if all(p % d for d in range(2, int(p**0.5) + 1))]


            def register(name):
                _names.append(name)
                return len(_names)


            def names():
                return _names


            def epoch():
                return datetime(1970, 1, 1, tzinfo=timezone.utc)
            """
        ),
        _d(
            """
            from datetime import timezone

            import registry as m


            def test_sentinel():
                assert m.lookup({}, "a") is m.MISSING
                assert m.lookup({"a": 1}, "a") == 1
                assert m.MISSING is m.MISSING


            def test_the_same_dict_twice_and_changed_through_either():
                assert m.config() is m.config()
                m.config()["debug"] = True
                try:
                    assert m.config()["debug"] is True
                finally:
                    m.config()["debug"] = False


            def test_a_cached_result_is_one_object():
                first = m.primes_below(20)
                assert m.primes_below(20) is first
                assert first == [2, 3, 5, 7, 11, 13, 17, 19]


            def test_a_held_list_follows_the_module():
                seen = m.names()
                m.register("x")
                assert seen[-1] == "x"
                assert m.names() is seen


            def test_utc_is_the_singleton():
                assert m.epoch().tzinfo is timezone.utc
                assert m.epoch().timestamp() == 0
            """
        ),
    ),
    # -- kinds returned by the candidate ---------------------------------------------
    Case(
        "returned-stdlib-kinds",
        "kits.py",
        _d(
            """
            import array
            import io
            import ipaddress
            import queue
            import random
            import re
            from types import SimpleNamespace

            WORD = re.compile(r"(?P<word>[a-z]+)(?P<num>\\d*)")


            def samples():
                return array.array("d", [0.5, 1.5, 2.5])


            def rng(seed):
                return random.Random(seed)


            def first_token(text):
                return WORD.search(text)


            def pairs(a, b):
                return zip(a, b)


            def doubled(xs):
                return map(lambda x: x * 2, xs)


            def window(data, start, stop):
                return memoryview(data)[start:stop]


            def jobs(*names):
                q = queue.Queue()
                for name in names:
                    q.put(name)
                return q


            def options(**kw):
                return SimpleNamespace(**kw)


            def network(cidr):
                return ipaddress.ip_network(cidr)


            def render(lines):
                buf = io.StringIO()
                for line in lines:
                    print(line, file=buf)
                return buf
            """
        ),
        _d(
            """
            import array
            import io
            import ipaddress
            import random
            import re
            from types import SimpleNamespace

            import kits as m


            def test_array():
                a = m.samples()
                assert a == array.array("d", [0.5, 1.5, 2.5])
                assert isinstance(a, array.array) and a.typecode == "d"
                assert sum(a) == 4.5


            def test_random_generator():
                r, ref = m.rng(7), random.Random(7)
                assert isinstance(r, random.Random)
                assert [r.randint(1, 6) for _ in range(5)] == [ref.randint(1, 6) for _ in range(5)]


            def test_pattern_and_match():
                assert isinstance(m.WORD, re.Pattern)
                assert m.WORD.pattern.startswith("(?P<word>")
                found = m.first_token("  abc42 x")
                assert isinstance(found, re.Match)
                assert found.group("word") == "abc" and found["num"] == "42"
                assert found.span() == (2, 7)
                assert m.first_token("123") is None


            def test_lazy_iterators():
                assert list(m.pairs("ab", [1, 2])) == [("a", 1), ("b", 2)]
                it = m.doubled([1, 2, 3])
                assert next(it) == 2
                assert list(it) == [4, 6]


            def test_memoryview():
                view = m.window(b"abcdef", 1, 4)
                assert view.tobytes() == b"bcd"
                assert view[0] == ord("b") and len(view) == 3


            def test_queue():
                q = m.jobs("a", "b")
                assert q.qsize() == 2
                assert q.get() == "a"
                assert not q.empty()


            def test_namespace_ip_and_buffer():
                assert m.options(verbose=True, n=2) == SimpleNamespace(verbose=True, n=2)
                net = m.network("10.0.0.0/30")
                assert net == ipaddress.ip_network("10.0.0.0/30")
                assert len(list(net.hosts())) == 2
                buf = m.render(["a", "b"])
                assert isinstance(buf, io.StringIO) and buf.getvalue() == "a\\nb\\n"
            """
        ),
    ),
    Case(
        "sqlite-and-own-tzinfo",
        "store.py",
        _d(
            """
            import sqlite3
            from datetime import datetime, timedelta, tzinfo


            def open_db(rows):
                conn = sqlite3.connect(":memory:")
                conn.execute("create table items (name text, qty integer)")
                conn.executemany("insert into items values (?, ?)", rows)
                conn.commit()
                return conn


            def totals(conn):
                cur = conn.cursor()
                cur.execute("select name, sum(qty) from items group by name order by name")
                return cur


            class Offset(tzinfo):
                def __init__(self, hours):
                    self.hours = hours

                def utcoffset(self, dt):
                    return timedelta(hours=self.hours)

                def dst(self, dt):
                    return timedelta(0)

                def tzname(self, dt):
                    return f"UTC{self.hours:+03d}"


            def local_noon(day, hours):
                return datetime(2024, 3, day, 12, tzinfo=Offset(hours))
            """
        ),
        _d(
            """
            from datetime import datetime, timedelta, timezone

            import store as m


            def test_connection_and_cursor():
                conn = m.open_db([("a", 2), ("b", 1), ("a", 3)])
                assert conn.execute("select count(*) from items").fetchone() == (3,)
                with conn:
                    conn.execute("insert into items values ('c', 9)")
                cur = m.totals(conn)
                assert cur.fetchall() == [("a", 5), ("b", 1), ("c", 9)]
                assert [d[0] for d in cur.description] == ["name", "sum(qty)"]


            def test_a_datetime_in_the_candidates_zone():
                noon = m.local_noon(5, 2)
                assert noon == datetime(2024, 3, 5, 10, tzinfo=timezone.utc)
                assert noon.utcoffset() == timedelta(hours=2)
                assert noon.tzname() == "UTC+02"
                assert noon.astimezone(timezone.utc).hour == 10


            def test_ordering_across_zones():
                times = [m.local_noon(5, h) for h in (1, -1, 3)]
                assert sorted(times)[0].tzname() == "UTC+03"
            """
        ),
    ),
    # -- in-place changes, both ways ------------------------------------------------------
    Case(
        "in-place-both-ways",
        "fill.py",
        _d(
            """
            def extend_with_squares(out, n):
                out.extend(i * i for i in range(n))


            def tally(counter, words):
                counter.update(words)


            def rotate(dq, steps):
                dq.rotate(steps)


            def invert(buf):
                for i, b in enumerate(buf):
                    buf[i] = 255 - b


            def link(graph, a, b):
                graph.setdefault(a, []).append(b)
                graph.setdefault(b, [])


            def mark_seen(seen, item):
                seen.add(item)
                return item in seen


            class Recorder:
                def __init__(self, sink):
                    self.sink = sink

                def record(self, event):
                    self.sink.append(event)


            class Stack:
                def __init__(self):
                    self._items = []

                def push(self, x):
                    self._items.append(x)

                def items(self):
                    return self._items

                def size(self):
                    return len(self._items)
            """
        ),
        _d(
            """
            from collections import Counter, deque

            import fill as m


            def test_a_list_filled_in_place():
                out = [99]
                m.extend_with_squares(out, 3)
                assert out == [99, 0, 1, 4]


            def test_counter_deque_bytearray_set():
                counts = Counter(a=1)
                m.tally(counts, ["a", "b"])
                assert counts == Counter(a=2, b=1)
                dq = deque([1, 2, 3], maxlen=3)
                m.rotate(dq, 1)
                assert dq == deque([3, 1, 2]) and dq.maxlen == 3
                buf = bytearray(b"\\x00\\x10")
                m.invert(buf)
                assert buf == bytearray(b"\\xff\\xef")
                seen = set()
                assert m.mark_seen(seen, 3) and seen == {3}


            def test_nested_lists_keep_their_identity():
                graph = {"x": []}
                inner = graph["x"]
                m.link(graph, "x", "y")
                assert inner == ["y"]
                assert graph == {"x": ["y"], "y": []}


            def test_a_list_the_candidate_kept():
                sink = []
                recorder = m.Recorder(sink)
                recorder.record("start")
                recorder.record("stop")
                assert sink == ["start", "stop"]


            def test_a_list_the_test_changes_after_getting_it():
                stack = m.Stack()
                stack.push(1)
                stack.items().append(2)
                assert stack.size() == 2
                assert stack.items() == [1, 2]
            """
        ),
    ),
    Case(
        "in-place-stdlib-arguments",
        "tweak.py",
        _d(
            """
            def scale(values, factor):
                for i in range(len(values)):
                    values[i] *= factor


            def deal(deck, rng):
                rng.shuffle(deck)
                return deck.pop()


            def touch(cache, key):
                cache.move_to_end(key)


            def configure(ns):
                ns.ready = True
                ns.retries = getattr(ns, "retries", 0) + 1
            """
        ),
        _d(
            """
            import array
            import random
            from collections import OrderedDict
            from types import SimpleNamespace

            import tweak as m


            def test_an_array_filled_in_place():
                values = array.array("i", [1, 2, 3])
                m.scale(values, 10)
                assert values.tolist() == [10, 20, 30]


            def test_a_generator_advanced_by_the_candidate():
                deck, rng = list(range(10)), random.Random(5)
                top = m.deal(deck, rng)
                ref_deck, ref = list(range(10)), random.Random(5)
                ref.shuffle(ref_deck)
                assert top == ref_deck.pop() and deck == ref_deck
                assert rng.random() == ref.random()


            def test_ordered_dict_and_namespace():
                cache = OrderedDict(a=1, b=2)
                m.touch(cache, "a")
                assert list(cache) == ["b", "a"]
                ns = SimpleNamespace(retries=2)
                m.configure(ns)
                assert ns.ready and ns.retries == 3
            """
        ),
    ),
    # -- class behaviours ---------------------------------------------------------------
    Case(
        "protocols-abcs-slots-signatures",
        "shapes.py",
        _d(
            '''
            """Shapes and the protocol they share."""
            from abc import ABC, abstractmethod
            from typing import Protocol, runtime_checkable

            __version__ = "2.1.0"
            __author__ = "shapes team"


            @runtime_checkable
            class HasArea(Protocol):
                def area(self) -> float: ...


            class Shape(ABC):
                """A closed figure."""

                __slots__ = ()

                @abstractmethod
                def area(self) -> float: ...

                def describe(self):
                    return f"{type(self).__name__} of area {self.area():.1f}"


            class Square(Shape):
                """A square of side `side`."""

                __slots__ = ("side",)

                def __init__(self, side):
                    self.side = side

                def area(self):
                    return self.side**2


            class Disc:
                def __init__(self, r):
                    self.r = r

                def area(self):
                    return 3.0 * self.r * self.r


            def scale(shape, k: float = 2.0, *, clamp: bool = False) -> float:
                """Area after scaling by k."""
                return shape.area() * k * k
            '''
        ),
        _d(
            """
            import inspect

            import pytest

            import shapes as m


            def test_runtime_protocol():
                class Triangle:
                    def area(self):
                        return 1.0

                assert isinstance(m.Disc(1), m.HasArea)
                assert isinstance(m.Square(2), m.HasArea)
                assert isinstance(Triangle(), m.HasArea)
                assert not isinstance(3, m.HasArea)


            def test_abstract_base():
                with pytest.raises(TypeError):
                    m.Shape()
                assert isinstance(m.Square(2), m.Shape)
                assert issubclass(m.Square, m.Shape)
                assert not isinstance(m.Disc(1), m.Shape)
                assert m.Square(3).describe() == "Square of area 9.0"


            def test_slots_and_vars():
                square = m.Square(2)
                with pytest.raises(AttributeError):
                    square.colour = "red"
                assert not hasattr(square, "__dict__")
                assert m.Square.__slots__ == ("side",)
                disc = m.Disc(2)
                assert vars(disc) == {"r": 2}
                disc.__dict__["r"] = 5
                assert disc.area() == 75.0


            def test_signature_docs_and_module_attributes():
                sig = inspect.signature(m.scale)
                assert list(sig.parameters) == ["shape", "k", "clamp"]
                assert sig.parameters["k"].default == 2.0
                assert sig.parameters["clamp"].kind is inspect.Parameter.KEYWORD_ONLY
                assert str(sig) == "(shape, k: float = 2.0, *, clamp: bool = False) -> float"
                assert m.scale.__doc__ == "Area after scaling by k."
                assert m.Square.__doc__ == "A square of side `side`."
                assert m.__doc__ == "Shapes and the protocol they share."
                assert (m.__version__, m.__author__) == ("2.1.0", "shapes team")
                assert (m.Square.__name__, m.Square.__module__) == ("Square", "shapes")
            """
        ),
    ),
    Case(
        "init-subclass-generics-list-subclass",
        "plugins.py",
        _d(
            """
            from typing import Generic, TypeVar

            T = TypeVar("T")


            class Plugin:
                registry = {}

                def __init_subclass__(cls, name=None, **kwargs):
                    super().__init_subclass__(**kwargs)
                    Plugin.registry[name or cls.__name__.lower()] = cls

                def run(self, text):
                    raise NotImplementedError


            def run_plugin(name, text):
                return Plugin.registry[name]().run(text)


            class Box(Generic[T]):
                def __init__(self, item: T):
                    self.item = item

                def get(self) -> T:
                    return self.item

                def map(self, fn):
                    return Box(fn(self.item))


            class Stack(list):
                def peek(self):
                    return self[-1]
            """
        ),
        _d(
            """
            import typing

            import plugins as m


            def test_init_subclass_registers_the_tests_class():
                class Shout(m.Plugin, name="shout"):
                    def run(self, text):
                        return text.upper() + "!"

                assert m.Plugin.registry["shout"] is Shout
                assert m.run_plugin("shout", "hi") == "HI!"


            def test_generic_class():
                assert m.Box[int](3).get() == 3
                assert m.Box(2).map(lambda x: x + 1).get() == 3
                assert typing.get_args(m.Box[int]) == (int,)
                assert m.Box[str].__origin__ is m.Box


            def test_list_subclass():
                stack = m.Stack([1, 2])
                assert stack.peek() == 2
                assert stack == [1, 2]
                assert isinstance(stack, list)
            """
        ),
    ),
    Case(
        "doctest-reload-env-at-import",
        "textkit.py",
        _d(
            '''
            """Small text helpers.

            >>> shout("hi")
            'HI!'
            """
            import os

            MODE = os.environ.get("TEXTKIT_MODE", "plain")
            CALLS = 0


            def shout(text):
                """Upper-case with a bang.

                >>> shout("ok")
                'OK!'
                """
                global CALLS
                CALLS += 1
                return text.upper() + "!"


            def wrap(text):
                """
                >>> wrap("abc")
                '[abc]'
                """
                return f"[{text}]" if MODE == "plain" else f"<{text}>"
            '''
        ),
        _d(
            """
            import doctest
            import importlib

            import textkit as m


            def test_doctests_pass():
                results = doctest.testmod(m)
                assert results.failed == 0 and results.attempted == 3


            def test_an_environment_variable_read_at_import(monkeypatch):
                monkeypatch.setenv("TEXTKIT_MODE", "fancy")
                importlib.reload(m)
                try:
                    assert m.MODE == "fancy"
                    assert m.wrap("x") == "<x>"
                finally:
                    monkeypatch.delenv("TEXTKIT_MODE")
                    importlib.reload(m)
                assert m.wrap("x") == "[x]"


            def test_reload_resets_module_state():
                m.shout("a")
                m.shout("b")
                assert m.CALLS >= 2
                importlib.reload(m)
                assert m.CALLS == 0
            """
        ),
    ),
    Case(
        "star-import-with-all",
        "geometry.py",
        _d(
            """
            import math

            __all__ = ["distance", "midpoint", "ORIGIN"]
            ORIGIN = (0.0, 0.0)


            def distance(a, b):
                return math.dist(a, b)


            def midpoint(a, b):
                return ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)


            def _helper():
                return None
            """
        ),
        _d(
            """
            from geometry import *


            def test_star_import():
                assert distance(ORIGIN, (3, 4)) == 5.0
                assert midpoint((0, 0), (2, 2)) == (1.0, 1.0)
                assert all(isinstance(x, float) for x in midpoint((0, 0), (1, 3)))
                assert "_helper" not in globals()
            """
        ),
    ),
    Case(
        "star-import-without-all",
        "units.py",
        _d(
            """
            KM = 1000
            try:
                from math import fsum as _sum
            except ImportError:
                _sum = sum


            def to_metres(km):
                return km * KM


            def total(values):
                return _sum(values)
            """
        ),
        _d(
            """
            from units import *


            def test_star_import_public_names():
                assert to_metres(2) == 2000 and KM == 1000
                assert total([0.1] * 10) == 1.0
                assert len([1, 2]) == 2 and sum([1, 2]) == 3
            """
        ),
    ),
    # -- the test's process state ------------------------------------------------------
    Case(
        "random-seed-and-decimal-context",
        "dice.py",
        _d(
            """
            import random
            from decimal import Decimal, getcontext


            def roll(n):
                return [random.randint(1, 6) for _ in range(n)]


            def third():
                return Decimal(1) / Decimal(3)


            def precision():
                return getcontext().prec
            """
        ),
        _d(
            """
            import decimal
            import random
            from decimal import Decimal

            import dice as m


            def test_seeded_rolls_repeat():
                random.seed(11)
                first = m.roll(4)
                random.seed(11)
                assert m.roll(4) == first


            def test_seeded_rolls_match_the_tests_own():
                random.seed(3)
                expected = [random.randint(1, 6) for _ in range(3)]
                random.seed(3)
                assert m.roll(3) == expected


            def test_localcontext():
                with decimal.localcontext() as ctx:
                    ctx.prec = 4
                    assert m.third() == Decimal("0.3333")
                    assert m.precision() == 4
                assert m.precision() == 28


            def test_global_context_precision():
                ctx = decimal.getcontext()
                old = ctx.prec
                ctx.prec = 6
                try:
                    assert str(m.third()) == "0.333333"
                finally:
                    ctx.prec = old
            """
        ),
    ),
    Case(
        "chdir-env-timezone",
        "workspace.py",
        _d(
            """
            import os
            import time
            from pathlib import Path


            def save(name, text):
                Path(name).write_text(text)
                return os.path.abspath(name)


            def listing():
                return sorted(os.listdir("."))


            def greeting():
                return f"hello {os.environ.get('USER_NAME', 'nobody')}"


            def local_hour(ts):
                return time.localtime(ts).tm_hour
            """
        ),
        _d(
            """
            import os
            import time
            from pathlib import Path

            import workspace as m


            def test_plain_chdir(tmp_path):
                old = os.getcwd()
                os.chdir(tmp_path)
                try:
                    path = m.save("note.txt", "hi")
                    assert Path("note.txt").read_text() == "hi"
                    assert path == str(tmp_path / "note.txt")
                    assert m.listing() == ["note.txt"]
                finally:
                    os.chdir(old)


            def test_environment(monkeypatch):
                monkeypatch.setenv("USER_NAME", "ada")
                assert m.greeting() == "hello ada"
                monkeypatch.delenv("USER_NAME")
                assert m.greeting() == "hello nobody"


            def test_time_zone(monkeypatch):
                monkeypatch.setenv("TZ", "UTC0")
                time.tzset()
                assert m.local_hour(3600) == 1
            """
        ),
    ),
    # -- file metadata through handed paths ---------------------------------------------
    Case(
        "folders-modes-links-times",
        "layout.py",
        _d(
            """
            import os
            import shutil
            from pathlib import Path


            def scaffold(root):
                root = Path(root)
                for name in ("src", "tests", "docs/api"):
                    (root / name).mkdir(parents=True, exist_ok=True)
                (root / "README").write_text("x\\n")


            def lock_down(path):
                os.chmod(path, 0o600)


            def publish(root, version):
                root = Path(root)
                (root / version).mkdir()
                (root / version / "app.txt").write_text(version)
                link = root / "current"
                if link.is_symlink():
                    link.unlink()
                link.symlink_to(version)


            def clean(root):
                shutil.rmtree(Path(root) / "build")


            def stamp(path, when):
                os.utime(path, (when, when))
            """
        ),
        _d(
            """
            import os
            import stat

            import layout as m


            def test_empty_folders(tmp_path):
                m.scaffold(tmp_path)
                names = sorted(p.name for p in tmp_path.iterdir())
                assert names == ["README", "docs", "src", "tests"]
                assert (tmp_path / "docs" / "api").is_dir()
                assert list((tmp_path / "src").iterdir()) == []


            def test_mode(tmp_path):
                secret = tmp_path / "secret.txt"
                secret.write_text("k")
                secret.chmod(0o644)
                m.lock_down(secret)
                assert stat.S_IMODE(secret.stat().st_mode) == 0o600


            def test_symlink_inside_the_tree(tmp_path):
                m.publish(tmp_path, "v1")
                m.publish(tmp_path, "v2")
                current = tmp_path / "current"
                assert current.is_symlink() and os.readlink(current) == "v2"
                assert (current / "app.txt").read_text() == "v2"


            def test_removed_tree_and_times(tmp_path):
                (tmp_path / "build" / "obj").mkdir(parents=True)
                (tmp_path / "build" / "obj" / "a.o").write_text("o")
                m.clean(tmp_path)
                assert not (tmp_path / "build").exists()
                note = tmp_path / "a.txt"
                note.write_text("a")
                m.stamp(note, 1_000_000)
                assert note.stat().st_mtime == 1_000_000
            """
        ),
    ),
    # -- logging -----------------------------------------------------------------------
    Case(
        "logging-extra-exceptions-levels",
        "audit.py",
        _d(
            """
            import logging

            log = logging.getLogger("audit")


            def login(user, ip):
                log.info("user %s logged in", user, extra={"ip": ip, "event": "login"})
                return True


            def divide(a, b):
                try:
                    return a / b
                except ZeroDivisionError:
                    log.exception("cannot divide %d by %d", a, b)
                    return None


            def verbose():
                log.setLevel(logging.DEBUG)
                log.debug("debug on")
            """
        ),
        _d(
            """
            import logging

            import audit as m


            def test_extra_fields_and_arguments(caplog):
                caplog.set_level(logging.INFO)
                m.login("ada", "10.0.0.1")
                record = caplog.records[0]
                assert (record.ip, record.event) == ("10.0.0.1", "login")
                assert record.msg == "user %s logged in" and record.args == ("ada",)
                assert record.getMessage() == "user ada logged in"


            def test_logged_exception(caplog):
                assert m.divide(1, 0) is None
                record = caplog.records[-1]
                assert record.levelname == "ERROR"
                assert record.exc_info[0] is ZeroDivisionError
                assert "ZeroDivisionError" in caplog.text


            def test_the_candidates_own_level(caplog):
                try:
                    m.verbose()
                    assert caplog.records[-1].getMessage() == "debug on"
                finally:
                    logging.getLogger("audit").setLevel(logging.NOTSET)


            def test_a_handler_the_test_adds():
                records = []
                handler = logging.Handler()
                handler.emit = records.append
                logger = logging.getLogger("audit")
                logger.addHandler(handler)
                logger.setLevel(logging.INFO)
                try:
                    m.login("bob", "x")
                    assert records[0].getMessage() == "user bob logged in"
                finally:
                    logger.removeHandler(handler)
                    logger.setLevel(logging.NOTSET)
            """
        ),
    ),
    # -- threads ---------------------------------------------------------------------
    Case(
        "threads-timers-pools",
        "scheduler.py",
        _d(
            """
            import threading
            from concurrent.futures import ThreadPoolExecutor


            def later(delay, callback, *args):
                timer = threading.Timer(delay, callback, args)
                timer.start()
                return timer


            def map_parallel(fn, items, workers=4):
                with ThreadPoolExecutor(workers) as pool:
                    return list(pool.map(fn, items))


            class Counter:
                def __init__(self):
                    self.value = 0
                    self._lock = threading.Lock()

                def increment(self):
                    with self._lock:
                        self.value += 1


            def watch(callback, n):
                def run():
                    for i in range(n):
                        callback(i)

                thread = threading.Thread(target=run)
                thread.start()
                return thread


            def cube(x):
                return x**3


            def guarded(lock, fn):
                with lock:
                    return fn()
            """
        ),
        _d(
            """
            import threading
            from concurrent.futures import ThreadPoolExecutor

            import scheduler as m


            def test_a_timer_calls_back():
                got, done = [], threading.Event()

                def callback(x):
                    got.append(x)
                    done.set()

                timer = m.later(0.01, callback, "ping")
                assert done.wait(10)
                timer.join(10)
                assert got == ["ping"]


            def test_a_pool_calls_back_concurrently():
                def square(x):
                    return x * x

                assert m.map_parallel(square, range(20)) == [x * x for x in range(20)]


            def test_the_tests_threads_call_the_candidate():
                counter = m.Counter()
                threads = [threading.Thread(target=counter.increment) for _ in range(8)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(10)
                assert counter.value == 8
                with ThreadPoolExecutor(4) as pool:
                    assert list(pool.map(m.cube, range(6))) == [0, 1, 8, 27, 64, 125]


            def test_a_thread_calls_back_and_a_lock_handed_over():
                got = []
                m.watch(got.append, 5).join(10)
                assert got == [0, 1, 2, 3, 4]
                lock = threading.Lock()
                assert m.guarded(lock, lambda: 3) == 3
                assert not lock.locked()
            """
        ),
    ),
    # -- async -------------------------------------------------------------------------
    Case(
        "async-with-for-await",
        "aio.py",
        _d(
            """
            import asyncio


            class Session:
                def __init__(self):
                    self.open = False

                async def __aenter__(self):
                    await asyncio.sleep(0)
                    self.open = True
                    return self

                async def __aexit__(self, *exc):
                    self.open = False
                    return False

                async def get(self, key):
                    await asyncio.sleep(0)
                    return key.upper()


            async def ticker(n):
                for i in range(n):
                    await asyncio.sleep(0)
                    yield i


            class Countdown:
                def __init__(self, start):
                    self.current = start

                def __aiter__(self):
                    return self

                async def __anext__(self):
                    if self.current <= 0:
                        raise StopAsyncIteration
                    self.current -= 1
                    return self.current + 1


            class Ready:
                def __init__(self, value):
                    self.value = value

                def __await__(self):
                    yield from asyncio.sleep(0).__await__()
                    return self.value


            async def fetch(x):
                await asyncio.sleep(0)
                return x * 10
            """
        ),
        _d(
            """
            import asyncio

            import aio as m


            def test_async_with():
                async def main():
                    async with m.Session() as session:
                        assert session.open
                        return await session.get("k")

                assert asyncio.run(main()) == "K"


            def test_async_for_over_a_generator_and_an_iterator():
                async def main():
                    ticks = [i async for i in m.ticker(3)]
                    counted = []
                    async for x in m.Countdown(3):
                        counted.append(x)
                    return ticks, counted

                assert asyncio.run(main()) == ([0, 1, 2], [3, 2, 1])


            def test_awaitables():
                async def main():
                    return await m.Ready(7), await asyncio.gather(m.fetch(1), m.fetch(2))

                assert asyncio.run(main()) == (7, [10, 20])
            """
        ),
    ),
    # -- async: timeouts, the test's own coroutines, interleaving ------------------------
    Case(
        "async-timeouts-callbacks-interleaving",
        "aio_more.py",
        _d(
            """
            import asyncio


            async def slow(seconds):
                await asyncio.sleep(seconds)
                return "late"


            async def retry(fn, attempts):
                last = None
                for i in range(attempts):
                    try:
                        return await fn(i)
                    except ValueError as exc:
                        last = exc
                raise last


            async def produce(queue_put, n):
                for i in range(n):
                    await asyncio.sleep(0)
                    queue_put(i)


            async def ticker(n, delay):
                for i in range(n):
                    await asyncio.sleep(delay)
                    yield i
            """
        ),
        _d(
            """
            import asyncio

            import pytest

            import aio_more as m


            def test_timeout():
                async def main():
                    with pytest.raises(asyncio.TimeoutError):
                        await asyncio.wait_for(m.slow(5), 0.05)
                    return await asyncio.wait_for(m.slow(0), 5)

                assert asyncio.run(main()) == "late"


            def test_async_callback():
                calls = []

                async def flaky(i):
                    await asyncio.sleep(0)
                    calls.append(i)
                    if i < 2:
                        raise ValueError(i)
                    return i * 10

                assert asyncio.run(m.retry(flaky, 5)) == 20
                assert calls == [0, 1, 2]


            def test_interleaving():
                async def main():
                    got = []
                    ticks = asyncio.create_task(m.produce(got.append, 3))
                    await ticks
                    return got

                assert asyncio.run(main()) == [0, 1, 2]


            def test_gather_with_own_task():
                async def mine():
                    await asyncio.sleep(0.01)
                    return "mine"

                async def main():
                    return await asyncio.gather(m.slow(0.01), mine())

                assert asyncio.run(main()) == ["late", "mine"]


            def test_async_for_timeout():
                async def main():
                    out = []
                    async for x in m.ticker(3, 0.001):
                        out.append(x)
                    return out

                assert asyncio.run(main()) == [0, 1, 2]
            """
        ),
    ),
    # -- the tests' own objects handed over ---------------------------------------------
    Case(
        "tests-dataclasses-and-named-tuples",
        "orders.py",
        _d(
            """
            import dataclasses
            import json
            import math


            def total(orders):
                return sum(o.price * o.qty for o in orders)


            def as_rows(orders):
                return [dataclasses.asdict(o) for o in orders]


            def cleared(order):
                return dataclasses.replace(order, qty=0)


            def cheapest(orders):
                return min(orders, key=lambda o: o.price)


            def length(p):
                x, y = p
                return math.hypot(x, y)


            def shifted(p, dx):
                return p._replace(x=p.x + dx)


            def to_json(p):
                return json.dumps(p)


            def ordered(items):
                return sorted(items)
            """
        ),
        _d(
            """
            from dataclasses import dataclass
            from typing import NamedTuple

            import orders as m


            @dataclass
            class Order:
                price: float
                qty: int


            class Point(NamedTuple):
                x: int
                y: int


            def test_the_tests_dataclass():
                orders = [Order(2.0, 3), Order(1.5, 2)]
                assert m.total(orders) == 9.0
                assert m.as_rows(orders) == [{"price": 2.0, "qty": 3}, {"price": 1.5, "qty": 2}]
                assert m.cleared(orders[0]) == Order(2.0, 0)
                assert m.cheapest(orders) is orders[1]


            def test_the_tests_named_tuple():
                p = Point(3, 4)
                assert m.length(p) == 5.0
                moved = m.shifted(p, 1)
                assert moved == Point(4, 4) and isinstance(moved, Point)
                assert m.to_json(p) == "[3, 4]"


            def test_sorting_the_tests_objects():
                assert m.ordered([Point(2, 1), Point(1, 5)]) == [Point(1, 5), Point(2, 1)]
            """
        ),
    ),
    # -- everyday objects: pickling, properties, partials, generators, main ---------
    Case(
        "pickle-property-partial-generator-main",
        "misc.py",
        _d(
            """
            import contextlib
            import dataclasses
            import functools
            import sys


            @dataclasses.dataclass
            class Temp:
                celsius: float

                @property
                def fahrenheit(self):
                    return self.celsius * 9 / 5 + 32

                @fahrenheit.setter
                def fahrenheit(self, value):
                    self.celsius = (value - 32) * 5 / 9


            def adder(n):
                return functools.partial(lambda a, b: a + b, n)


            def averager():
                total = count = 0
                average = None
                while True:
                    value = yield average
                    total += value
                    count += 1
                    average = total / count


            @contextlib.contextmanager
            def tag(name, out):
                out.append(f"<{name}>")
                yield name
                out.append(f"</{name}>")


            def main(argv=None):
                argv = sys.argv[1:] if argv is None else argv
                print("args:", " ".join(argv))
                return 0


            if __name__ == "__main__":
                raise SystemExit(main())
            """
        ),
        _d(
            """
            import copy
            import pickle
            import runpy
            import sys

            import pytest

            import misc as m


            def test_pickle_and_copy_round_trips():
                t = m.Temp(10.0)
                again = pickle.loads(pickle.dumps(t))
                assert again == t and again is not t
                assert copy.deepcopy(t) == t


            def test_property_setter_and_partial():
                t = m.Temp(0.0)
                t.fahrenheit = 212
                assert t.celsius == 100.0
                assert m.adder(5)(3) == 8


            def test_generator_send_and_context_manager():
                avg = m.averager()
                next(avg)
                assert avg.send(10) == 10.0
                assert avg.send(20) == 15.0
                out = []
                with m.tag("b", out) as name:
                    out.append(name)
                assert out == ["<b>", "b", "</b>"]


            def test_run_as_main(capsys, monkeypatch):
                monkeypatch.setattr(sys, "argv", ["misc", "x", "y"])
                with pytest.raises(SystemExit) as info:
                    runpy.run_module("misc", run_name="__main__")
                assert info.value.code == 0
                assert capsys.readouterr().out == "args: x y\\n"
            """
        ),
    ),
    # -- value-backed numbers, approx and friends ---------------------------------------
    Case(
        "value-backed-numbers",
        "measure.py",
        _d(
            """
            class Metres(float):
                def __add__(self, other):
                    return Metres(float(self) + float(other))

                __radd__ = __add__

                def __repr__(self):
                    return f"Metres({float(self)})"

                def to_km(self):
                    return self / 1000


            class Count(int):
                def describe(self):
                    return f"{int(self)} items"


            def distance(a, b):
                return Metres(abs(b - a))
            """
        ),
        _d(
            """
            import math

            import pytest

            import measure as m


            def test_approx_and_isclose():
                assert m.distance(1.0, 3.5) == pytest.approx(2.5)
                assert m.distance(0, 0.3) == pytest.approx(0.3)
                assert [m.distance(0, 0.1), m.distance(0, 0.2)] == pytest.approx([0.1, 0.2])
                assert math.isclose(m.distance(1, 2), 1.0)
                assert abs(m.distance(0, 2.5) - 2.5) < 1e-9


            def test_methods_repr_and_arithmetic():
                assert m.distance(0, 1000).to_km() == 1.0
                assert isinstance(m.distance(1, 2), float)
                assert repr(m.distance(1, 2)) == "Metres(1.0)"
                assert sum([m.Metres(1.0), m.Metres(2.0)]) == 3.0
                assert m.Count(3).describe() == "3 items"
                assert m.Count(3) + 1 == 4 and round(m.distance(0, 2.345), 2) == 2.35
                assert f"{m.distance(0, 2.5):.1f}" == "2.5"
            """
        ),
    ),
    # -- enums and dataclass features --------------------------------------------------
    Case(
        "enums-flags-dataclass-features",
        "catalog.py",
        _d(
            """
            import dataclasses
            import enum


            class Perm(enum.Flag):
                R = enum.auto()
                W = enum.auto()
                X = enum.auto()


            class Size(enum.IntEnum):
                S = 1
                M = 2
                L = 3


            class Colour(enum.StrEnum):
                RED = "red"
                BLUE = "blue"


            @dataclasses.dataclass(order=True)
            class Item:
                price: int
                name: str = dataclasses.field(compare=False)
                tags: list = dataclasses.field(default_factory=list, compare=False)

                def __post_init__(self):
                    self.name = self.name.strip()


            def rw():
                return Perm.R | Perm.W


            def cheapest(items):
                return min(items)
            """
        ),
        _d(
            """
            import dataclasses

            import catalog as m


            def test_flags_and_enums():
                assert m.Perm.R in m.rw() and m.Perm.X not in m.rw()
                assert m.rw() == m.Perm.R | m.Perm.W
                assert m.Size.M > m.Size.S and m.Size(3) is m.Size.L
                assert m.Colour.RED == "red" and f"{m.Colour.BLUE}" == "blue"
                assert [c.name for c in m.Colour] == ["RED", "BLUE"]


            def test_dataclass_features():
                a, b = m.Item(3, " pen "), m.Item(2, "ink", ["x"])
                assert a.name == "pen" and a.tags == []
                assert m.cheapest([a, b]) is b
                assert sorted([a, b]) == [b, a]
                assert dataclasses.asdict(b) == {"price": 2, "name": "ink", "tags": ["x"]}
                assert dataclasses.replace(a, price=9).price == 9
            """
        ),
    ),
    # -- a call that answers with one of its own arguments -------------------------------
    Case(
        "arguments-returned-as-themselves",
        "choose.py",
        _d(
            """
            def heavier(left, right):
                return left if sum(map(len, left)) >= sum(map(len, right)) else right


            def tagged(rows, tag):
                return {"tag": tag, "rows": rows}


            class Journal:
                def __init__(self):
                    self.pages = None

                def adopt(self, pages):
                    self.pages = pages
                    return pages
            """
        ),
        _d(
            """
            import choose as m


            def test_the_argument_comes_back_as_itself():
                a, b = ["ab"], ["c", "d", "e"]
                assert m.heavier(a, b) is b and m.heavier(b, a) is b
                rows = [1, 2]
                assert m.tagged(rows, "t")["rows"] is rows


            def test_many_fresh_lists_in_a_row():
                for i in range(300):
                    short, long = [str(i)], [str(i), "x" * (1 + i % 7)]
                    assert m.heavier(short, long) == long
                    assert m.heavier([str(i)], []) == [str(i)]


            def test_an_argument_kept_and_returned():
                journal, pages = m.Journal(), ["intro"]
                assert journal.adopt(pages) is pages
                pages.append("end")
                assert journal.pages == ["intro", "end"]
            """
        ),
    ),
    # -- everyday patching, encoders, lazy attributes, closures, exits -------------------
    Case(
        "everyday-patching-encoders-lazy-exits",
        "everyday.py",
        _d(
            """
            import argparse
            import collections
            import functools
            import itertools
            import json
            import sys
            import time
            from datetime import datetime


            class Encoder(json.JSONEncoder):
                def default(self, o):
                    if isinstance(o, set):
                        return sorted(o)
                    return super().default(o)


            class Service:
                def fetch(self):
                    return "real"

                def run(self):
                    return self.fetch().upper()


            def stamp():
                return time.time()


            def merged(a, b):
                return collections.ChainMap(a, b)


            class Lazy:
                def __init__(self):
                    self.calls = 0

                @functools.cached_property
                def value(self):
                    self.calls += 1
                    return 42

                def __getattr__(self, name):
                    if name.startswith("dyn_"):
                        return name[4:]
                    raise AttributeError(name)


            def chain(*xs):
                return itertools.chain(*xs)


            def make_counter():
                count = 0

                def inc():
                    nonlocal count
                    count += 1
                    return count

                return inc


            class Multiplier:
                def __init__(self, k):
                    self.k = k

                def __call__(self, x):
                    return x * self.k


            class MissingKey(KeyError):
                def __str__(self):
                    return f"missing: {self.args[0]}"


            def get(d, k):
                if k not in d:
                    raise MissingKey(k)
                return d[k]


            def parse(argv):
                p = argparse.ArgumentParser()
                p.add_argument("--n", type=int, default=1)
                p.add_argument("name")
                return p.parse_args(argv)


            def main(argv):
                if not argv:
                    sys.exit(2)
                print("ok")
                return 0


            def today_label():
                return datetime.now().strftime("%Y")
            """
        ),
        _d(
            """
            import argparse
            import collections.abc
            import copy
            import json
            import weakref
            from unittest import mock

            import pytest

            import everyday as m


            def test_encoder():
                assert json.dumps({"a": {3, 1}}, cls=m.Encoder) == '{"a": [1, 3]}'


            def test_patch_object():
                with mock.patch.object(m.Service, "fetch", return_value="fake"):
                    assert m.Service().run() == "FAKE"
                assert m.Service().run() == "REAL"


            def test_patch_module_time(monkeypatch):
                monkeypatch.setattr(m.time, "time", lambda: 123.0)
                assert m.stamp() == 123.0


            def test_chainmap():
                cm = m.merged({"a": 1}, {"b": 2})
                assert cm == {"a": 1, "b": 2}
                assert cm["b"] == 2
                assert isinstance(cm, collections.abc.Mapping)


            def test_lazy_and_dynamic():
                lazy = m.Lazy()
                assert lazy.value == 42 and lazy.value == 42 and lazy.calls == 1
                assert lazy.dyn_hello == "hello"
                with pytest.raises(AttributeError):
                    lazy.other
                ref = weakref.ref(lazy)
                assert ref() is lazy


            def test_iter_closure_call():
                assert list(m.chain([1], [2, 3])) == [1, 2, 3]
                inc = m.make_counter()
                assert inc() == 1 and inc() == 2
                assert m.Multiplier(3)(4) == 12
                assert callable(m.Multiplier(2))
                assert isinstance(m.chain([1]), collections.abc.Iterator)


            def test_custom_keyerror():
                with pytest.raises(KeyError) as info:
                    m.get({}, "x")
                assert str(info.value) == "missing: x"
                assert isinstance(info.value, m.MissingKey)


            def test_argparse_namespace():
                assert m.parse(["bob", "--n", "3"]) == argparse.Namespace(n=3, name="bob")


            def test_main_exit(capsys):
                with pytest.raises(SystemExit) as info:
                    m.main([])
                assert info.value.code == 2
                assert m.main(["x"]) == 0
                assert capsys.readouterr().out == "ok\\n"


            def test_fake_datetime(monkeypatch):
                class Fake:
                    @classmethod
                    def now(cls):
                        import datetime
                        return datetime.datetime(1999, 1, 1)

                monkeypatch.setattr(m, "datetime", Fake)
                assert m.today_label() == "1999"


            def test_copy():
                svc = m.Service()
                assert copy.copy(svc) is not svc
            """
        ),
    ),
    # -- stdlib objects, futures, loggers by name, the tests' objects filled in -----------
    Case(
        "stdlib-objects-futures-loggers",
        "stdlib_objects.py",
        _d(
            """
            from __future__ import annotations

            import csv
            import hashlib
            import io
            import logging
            import struct
            import subprocess
            import threading
            from concurrent.futures import Future, ThreadPoolExecutor

            log = logging.getLogger("p2")


            def add_item(order, item):
                order.items.append(item)
                order.count += 1


            def logger():
                return log


            def announce(logger, text):
                logger.warning(text)


            def run_fail():
                return subprocess.run(["false"], check=True)


            def decode(data):
                return data.decode("utf-8")


            def wrap_error():
                try:
                    {}["k"]
                except KeyError as exc:
                    raise RuntimeError("wrapped") from exc


            def rows(text):
                return csv.reader(io.StringIO(text))


            def digest():
                h = hashlib.sha256()
                h.update(b"abc")
                return h


            def packer():
                return struct.Struct("<HI")


            def background(value, delay=0.01):
                fut = Future()
                threading.Timer(delay, fut.set_result, (value,)).start()
                return fut


            def flag_later(delay=0.01):
                ev = threading.Event()
                threading.Timer(delay, ev.set).start()
                return ev


            def typed(x: int, y: "list[str]") -> dict[str, int]:
                return {}


            def pool_future(fn, x):
                pool = ThreadPoolExecutor(1)
                return pool.submit(fn, x)
            """
        ),
        _d(
            """
            import logging
            import subprocess
            import traceback
            import typing
            from dataclasses import dataclass, field

            import pytest

            import stdlib_objects as m


            @dataclass
            class Order:
                items: list = field(default_factory=list)
                count: int = 0


            def test_candidate_fills_tests_object():
                order = Order()
                m.add_item(order, "pen")
                assert order.items == ["pen"] and order.count == 1


            def test_loggers_by_name(caplog):
                assert m.logger().name == "p2" and m.logger() is m.logger()
                m.announce(logging.getLogger("tests.x"), "careful")
                assert caplog.records[-1].name == "tests.x"
                assert caplog.records[-1].getMessage() == "careful"


            def test_stdlib_errors():
                with pytest.raises(subprocess.CalledProcessError) as info:
                    m.run_fail()
                assert info.value.returncode == 1 and info.value.cmd == ["false"]
                with pytest.raises(UnicodeDecodeError) as info2:
                    m.decode(b"\\xff")
                assert info2.value.start == 0 and info2.value.reason == "invalid start byte"


            def test_traceback_text():
                with pytest.raises(RuntimeError) as info:
                    m.wrap_error()
                text = "".join(traceback.format_exception(info.value))
                assert "The above exception was the direct cause" in text
                assert "KeyError: 'k'" in text


            def test_objects():
                assert list(m.rows("a,b\\n1,2\\n")) == [["a", "b"], ["1", "2"]]
                assert m.digest().hexdigest().startswith("ba7816bf")
                p = m.packer()
                assert p.size == 6 and p.unpack(p.pack(1, 2)) == (1, 2)


            def test_futures_and_events():
                assert m.background(7).result(timeout=10) == 7
                assert m.flag_later().wait(10)
                got = []
                fut = m.pool_future(lambda x: x * 2, 21)
                fut.add_done_callback(lambda f: got.append(f.result()))
                assert fut.result(timeout=10) == 42


            def test_type_hints():
                hints = typing.get_type_hints(m.typed)
                assert hints == {"x": int, "y": list[str], "return": dict[str, int]}
            """
        ),
    ),
    # -- what comes back: the test's own exception, paths the candidate made, argv ------
    Case(
        "handbacks-exceptions-temp-paths-argv-rows",
        "handbacks.py",
        _d(
            """
            import argparse
            import sys
            import tempfile
            from pathlib import Path


            def call_back(fn):
                return fn()


            def export(lines):
                folder = Path(tempfile.mkdtemp())
                target = folder / "report.txt"
                target.write_text("\\n".join(lines))
                return target


            def export_str(text):
                fd, name = tempfile.mkstemp(suffix=".txt")
                with open(fd, "w") as f:
                    f.write(text)
                return name


            def cli():
                parser = argparse.ArgumentParser()
                parser.add_argument("name")
                return parser.parse_args().name


            def totals(rows):
                for row in rows:
                    row["total"] = row["price"] * row["qty"]
            """
        ),
        _d(
            """
            import sys
            from pathlib import Path

            import pytest

            import handbacks as m


            class Boom(Exception):
                pass


            def test_the_tests_exception_comes_back_as_itself():
                err = Boom("bang")

                def explode():
                    raise err

                with pytest.raises(Boom) as info:
                    m.call_back(explode)
                assert info.value is err


            def test_paths_the_candidate_made():
                path = m.export(["a", "b"])
                assert path.read_text() == "a\\nb"
                assert Path(m.export_str("x")).read_text() == "x"


            def test_argv_assigned_directly():
                old = sys.argv
                sys.argv = ["prog", "ada"]
                try:
                    assert m.cli() == "ada"
                finally:
                    sys.argv = old


            def test_rows_filled_in_place():
                rows = [{"price": 2, "qty": 3}, {"price": 1, "qty": 1}]
                first = rows[0]
                m.totals(rows)
                assert first["total"] == 6 and rows[1]["total"] == 1
            """
        ),
    ),
)

# Idioms the wire cannot carry, each with why: they must end not judged, never a fail.
UNCARRIED = _corpus(
    Case(
        # (the candidate's own program run so is carried: tests/witness/test_witness_children.py)
        "a-candidate-module-imported-by-the-tests-own-child-script",
        "hello.py",
        _d(
            """
            def greet(name):
                return "hello " + name
            """
        ),
        _d(
            """
            import subprocess
            import sys


            def test_script():
                code = "import hello; print(hello.greet('there'))"
                done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
                assert done.stdout == "hello there\\n"
            """
        ),
    ),
)


UNCARRIED.update(
    _corpus(
        Case(
            "a-script-the-candidate-makes-executable",
            "deploy.py",
            _d(
                """
                import os
                from pathlib import Path


                def write_script(folder):
                    script = Path(folder, "run.sh")
                    script.write_text("#!/bin/sh\\necho ok\\n")
                    os.chmod(script, 0o755)
                    return script
                """
            ),
            _d(
                """
                import os

                import deploy as m


                def test_script_is_executable(tmp_path):
                    script = m.write_script(tmp_path)
                    assert os.access(script, os.X_OK)
                """
            ),
        ),
        Case(
            "a-module-the-candidate-generates-and-the-test-imports",
            "codegen_ok.py",
            _d(
                """
                from pathlib import Path


                def generate(folder, name, value):
                    Path(folder, f"{name}.py").write_text(f"VALUE = {value!r}\\n")
                """
            ),
            _d(
                """
                import importlib
                import sys

                import codegen_ok as m


                def test_generated(tmp_path):
                    m.generate(tmp_path, "settings_gen", 42)
                    sys.path.insert(0, str(tmp_path))
                    try:
                        assert importlib.import_module("settings_gen").VALUE == 42
                    finally:
                        sys.path.remove(str(tmp_path))
                """
            ),
        ),
    )
)
