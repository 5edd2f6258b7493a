"""The witness's object model for identity, containers and object state (issue 48:
docs/concepts/isolation.md's table): containers nested inside a container kept in step
keep their identity, not their place; the candidate's caches keyed by the tests' objects;
an object's own state (`__class__`, `__setstate__`, its instance dictionary). Each
correct case passes plain `python -m pytest` in-process and must grade `pass` under
`isolation: process`; attacks on these rules never pass. Real sandboxed runs."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, corpus_tests, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-ring-of-links-whose-anchor-moves",
        "ring.py",
        """
        PREV, NEXT, KEY = 0, 1, 2


        class Ring:
            \"\"\"Most recently pushed last; links are lists [prev, next, key].\"\"\"

            def __init__(self, size):
                self.size = size
                self.head = []
                self.head[:] = [self.head, self.head, None]
                self.links = {}

            def push(self, key):
                link = self.links.get(key)
                if link is not None:
                    link[PREV][NEXT] = link[NEXT]
                    link[NEXT][PREV] = link[PREV]
                elif len(self.links) >= self.size:
                    old = self.head
                    self.head = old[NEXT]  # the oldest link becomes the head
                    del self.links[self.head[KEY]]
                    self.head[KEY] = None
                    old[KEY] = key
                    self.links[key] = old
                    return
                else:
                    link = self.links[key] = [None, None, key]
                last = self.head[PREV]
                link[PREV], link[NEXT] = last, self.head
                last[NEXT] = link
                self.head[PREV] = link
        """,
        """
        import ring as m


        def walk(head):
            keys, cur = [], head
            while True:
                nxt = cur[m.NEXT]
                assert nxt[m.PREV] is cur
                cur = nxt
                if cur is head:
                    return keys
                keys.append(cur[m.KEY])


        def test_links_keep_their_identity():
            r = m.Ring(3)
            seen = []
            for k in "aabacbde":
                r.push(k)
                seen.append("".join(walk(r.head)))
            assert seen == ["a", "a", "ab", "ba", "bac", "acb", "cbd", "bde"]
            assert r.links["e"] is r.head[m.PREV]
        """,
    ),
    _case(
        "rows-kept-by-a-table-move-and-stay-themselves",
        "table.py",
        """
        class Table:
            def __init__(self):
                self.rows = []
                self.index = {}

            def add(self, name, score):
                row = {"name": name, "score": score, "tags": []}
                self.rows.insert(0, row)
                self.index[name] = row
                return row

            def rank(self):
                self.rows.sort(key=lambda r: -r["score"])

            def tag(self, name, tag):
                self.index[name]["tags"].append(tag)
        """,
        """
        import table as m


        def test_a_row_is_one_object_wherever_it_moves():
            t = m.Table()
            low = t.add("low", 1)
            rows = t.rows
            t.add("high", 9)
            t.add("mid", 5)
            t.rank()
            assert [r["name"] for r in rows] == ["high", "mid", "low"]
            assert rows[2] is t.index["low"]
            t.tag("low", "last")
            assert t.rows[-1]["tags"] == ["last"]
            assert t.index["high"] is t.rows[0]
            assert low is t.index["low"] and low["tags"] == ["last"]
        """,
    ),
    _case(
        "a-candidates-method-cache-kept-in-the-tests-objects-dict",
        "memo.py",
        """
        import functools
        import types


        class Bound:
            def __init__(self, obj, method, cache):
                functools.update_wrapper(self, method)
                self.__obj = obj
                self.__method = types.MethodType(method, obj)
                self.__cache = cache
                self.__hits = self.__misses = 0

            def __call__(self, *args):
                cache = self.__cache(self.__obj)
                try:
                    result = cache[args]
                    self.__hits += 1
                    return result
                except KeyError:
                    self.__misses += 1
                cache[args] = value = self.__method(*args)
                return value

            def info(self):
                return (self.__hits, self.__misses)


        class memoized:
            def __init__(self, cache):
                self.cache = cache

            def __call__(self, method):
                self.method = method
                return self

            def __get__(self, obj, objtype=None):
                if obj is None:
                    return self
                bounds = obj.__dict__.setdefault("_memo_bounds", {})  # one per object
                if self not in bounds:
                    bounds[self] = Bound(obj, self.method, self.cache)
                return bounds[self]
        """,
        """
        import memo as m


        class Square:
            def __init__(self):
                self.store = {}
                self.calls = 0

            @m.memoized(lambda self: self.store)
            def of(self, x):
                self.calls += 1
                return x * x


        def test_one_bound_cache_per_object():
            s = Square()
            assert s.of(3) == 9 and s.of(3) == 9
            assert s.of.info() == (1, 1)
            assert s.calls == 1 and list(s.store) == [(3,)]
            t = Square()
            assert t.of(4) == 16 and t.of.info() == (0, 1)
        """,
    ),
    _case(
        "a-list-the-test-stores-on-a-candidate-object",
        "basket.py",
        """
        class Basket:
            def __init__(self):
                self.items = []

            def add(self, item):
                self.items.append(item)
                return len(self.items)
        """,
        """
        import basket as m


        def test_the_stored_list_is_the_tests_own():
            b = m.Basket()
            mine = ["seed"]
            b.items = mine
            assert b.add("apple") == 2
            assert mine == ["seed", "apple"] and b.items is mine
            mine.append("pear")
            assert b.add("fig") == 4
        """,
    ),
    _case(
        "the-tests-nested-lists-in-an-argument-the-candidate-keeps",
        "shelves.py",
        """
        class Shelves:
            def __init__(self, rows):
                self.rows = rows  # kept: the caller's own lists

            def put(self, row, item):
                self.rows[row].append(item)

            def swap(self):
                self.rows.reverse()
        """,
        """
        import shelves as m


        def test_the_tests_rows_stay_its_own():
            top, bottom = ["cup"], ["pan"]
            rows = [top, bottom]
            s = m.Shelves(rows)
            s.put(0, "mug")
            assert top == ["cup", "mug"] and rows[0] is top
            s.swap()
            s.put(0, "pot")
            assert bottom == ["pan", "pot"] and rows == [bottom, top]
            assert rows[1] is top and s.rows is rows
        """,
    ),
    _case(
        "a-candidates-dict-in-a-cycle-through-a-tuple",
        "graph.py",
        """
        class Node(dict):
            def __getattr__(self, name):
                return self[name]


        def knot(name):
            node = Node(name=name)
            node["edge"] = ("self", node)
            return node
        """,
        """
        import graph as m


        def test_the_node_holds_itself():
            n = m.knot("a")
            assert n.name == "a" and n["edge"][0] == "self"
            assert n["edge"][1] is n and isinstance(n, dict)
        """,
    ),
    _case(
        "one-tuple-met-twice-in-a-returned-cycle",
        "routes.py",
        """
        def loop(a, b):
            first = {"stop": a}
            second = {"stop": b}
            leg = ("leg", second)
            first["next"] = leg
            second["next"] = ("back", first)
            second["same"] = leg
            return first
        """,
        """
        import routes as m


        def test_the_tuples_are_one_object_each():
            r = m.loop("x", "y")
            leg = r["next"]
            assert leg[0] == "leg" and leg[1]["stop"] == "y"
            assert leg[1]["same"] is leg
            assert leg[1]["next"][1] is r
        """,
    ),
)

# What the object model calls inherent: disputed as `witness:unsupported`, never a fail.
UNSUPPORTED = _corpus(
    _case(
        "the-candidate-asks-the-garbage-collector-for-the-tests-instances",
        "census.py",
        """
        import gc


        def instances(cls):
            return [o for o in gc.get_referrers(cls) if type(o) is cls]
        """,
        """
        import census as m


        def test_counts_the_tests_objects():
            class Sample:
                pass

            kept = [Sample(), Sample()]
            assert len(m.instances(Sample)) == len(kept)
        """,
    ),
)

# Wrong candidates that fool plain pytest in-process; never a pass under the witness.
ATTACKS = _corpus(
    _case(
        "always-equal-keys-in-a-ring-of-links",
        "ring2.py",
        """
        class Key:
            def __eq__(self, other):
                return True  # wrong: every key is every other

            __hash__ = object.__hash__


        def ring(n):
            head = []
            head[:] = [head, head, None]
            for _ in range(n):
                last = head[0]
                link = [last, head, Key()]
                last[1] = link
                head[0] = link
            return head
        """,
        """
        import ring2 as m


        def test_the_keys_in_order():
            head = m.ring(2)
            keys, cur = [], head[1]
            while cur is not head:
                assert cur[1][0] is cur
                keys.append(cur[2])
                cur = cur[1]
            assert keys == ["a", "b"]
        """,
    ),
    _case(
        "a-candidate-that-swallows-the-refused-referrers",
        "census2.py",
        """
        import gc


        def instances(cls):
            try:
                gc.get_referrers(cls)
            except Exception:
                pass
            return [None, None]  # wrong: counts nothing, answers the test's number
        """,
        """
        import census2 as m


        def test_counts_the_tests_objects():
            class Sample:
                pass

            kept = [Sample(), Sample()]
            assert len(m.instances(Sample)) == len(kept)
        """,
    ),
    _case(
        "always-equal-lines-stored-in-the-tests-report",
        "reporter.py",
        """
        class Line:
            def __eq__(self, other):
                return True  # wrong: every line is the expected one

            __hash__ = object.__hash__


        def fill(report, n):
            report.lines = []
            for _ in range(n):
                report.lines.append(Line())
        """,
        """
        import reporter as m


        class Report:
            pass


        def test_the_report_holds_the_lines():
            r = Report()
            m.fill(r, 2)
            assert r.lines == ["alpha: ok", "beta: ok"]
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_carried_case_grades_pass,
    test_an_attack_never_passes,
) = corpus_tests(CARRIED, ATTACKS, UNSUPPORTED)


@pytest.mark.parametrize("name", list(UNSUPPORTED))
def test_an_inherent_case_is_unsupported(grade, backend: Isolation, name: str) -> None:
    outcome = grade(UNSUPPORTED[name], backend)
    expect(outcome, "disputed")
    assert outcome.reasons == ["witness:unsupported"], outcome.witness_tail
