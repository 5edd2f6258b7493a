"""A tests' class mixing the tests' own classes and the candidate's (issue 48): the
worker's class for it has a class standing for every base, the tests' own mixins too, so
its MRO is the test's and cooperative `super()` goes through every class once, whichever
side wrote it: `__init__` keyword chains, a candidate mixin reaching a tests' base, class
methods, `__init_subclass__` keywords a tests' hook takes before the candidate's, and
comparisons and hashing a second candidate mixin defines. Each correct case passes plain
`python -m pytest` in-process and must grade `pass`; each attack fools plain pytest and
must stay disputed. Real sandboxed runs through the real pipeline."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-keyword-chain-through-both-sides",
        "pipeline.py",
        """
        class Stage:
            def __init__(self, **settings):
                self.settings = dict(settings)
                self.order = ["Stage"]

            def run(self, x):
                return [("stage", x)]

            def label(self):
                return "stage"


        class Retrying(Stage):
            def __init__(self, *, attempts=3, **settings):
                super().__init__(**settings)
                self.attempts = attempts
                self.order.append("Retrying")

            def run(self, x):
                return [("retry", self.attempts)] + super().run(x + 1)


        class Metered(Stage):
            def __init__(self, *, meter="calls", **settings):
                super().__init__(**settings)
                self.meter = meter
                self.order.append("Metered")

            def run(self, x):
                return [("meter", self.note())] + super().run(x * 2)

            def note(self):
                return self.meter

            def label(self):
                return "metered/" + super().label()
        """,
        """
        from pipeline import Metered, Retrying, Stage


        class Audited(Stage):
            def __init__(self, *, auditor="eve", **settings):
                self.auditor = auditor
                super().__init__(**settings)
                self.order.append("Audited")

            def run(self, x):
                return [("audit", self.auditor)] + super().run(x)

            def label(self):
                return "audited/" + super().label()


        class Job(Retrying, Audited, Metered):
            def note(self):
                return "job:" + super().note()


        class Other(Audited, Retrying):
            pass


        def test_every_init_once_in_the_mro():
            job = Job(attempts=5, auditor="bob", meter="ms", name="n")
            assert job.order == ["Stage", "Metered", "Audited", "Retrying"]
            assert (job.attempts, job.auditor, job.meter) == (5, "bob", "ms")
            assert job.settings == {"name": "n"}


        def test_a_candidate_method_reaches_the_tests_class_and_back():
            assert Job().run(1) == [
                ("retry", 3), ("audit", "eve"), ("meter", "job:calls"), ("stage", 4)
            ]
            assert Job().label() == "audited/metered/stage"


        def test_the_tests_class_first():
            other = Other(attempts=1)
            assert other.run(0) == [("audit", "eve"), ("retry", 1), ("stage", 1)]
            names = [k.__name__ for k in Other.__mro__]
            assert names[:4] == ["Other", "Audited", "Retrying", "Stage"]
        """,
    ),
    _case(
        "candidate-mixins-over-a-tests-base",
        "traits.py",
        """
        class Printable:
            slots = ()

            def __repr__(self):
                body = " ".join(f"{s}={getattr(self, s)}" for s in self.slots)
                return f"<{type(self).__name__} {body}>"

            def export(self):
                out = super().export()
                out.update({s: getattr(self, s) for s in self.slots})
                return out


        class Comparable:
            def _key(self):
                return tuple(getattr(self, s) for s in self.slots)

            def __eq__(self, other):
                if not isinstance(other, Comparable):
                    return NotImplemented
                return self._key() == other._key()

            def __lt__(self, other):
                return self._key() < other._key()

            def __hash__(self):
                return hash(self._key())
        """,
        """
        from traits import Comparable, Printable


        class Record:
            def export(self):
                return {"kind": type(self).__name__.lower()}

            def __repr__(self):
                return "Record"


        class Span(Printable, Comparable, Record):
            slots = ("start", "end")

            def __init__(self, start, end):
                self.start, self.end = start, end


        def test_the_candidates_super_reaches_the_tests_base():
            assert Span(1, 4).export() == {"kind": "span", "start": 1, "end": 4}
            assert repr(Span(2, 3)) == "<Span start=2 end=3>"


        def test_a_second_candidate_mixin_compares_and_hashes():
            assert Span(1, 2) == Span(1, 2) and Span(1, 2) != Span(1, 3)
            assert sorted([Span(3, 4), Span(1, 9)]) == [Span(1, 9), Span(3, 4)]
            assert len({Span(1, 2), Span(1, 2), Span(0, 1)}) == 2
        """,
    ),
    _case(
        "class-keywords-taken-on-the-way",
        "plugins.py",
        """
        REGISTRY = {}


        class Plugin:
            def __init_subclass__(cls, /, slug=None, **kw):
                super().__init_subclass__(**kw)
                if slug is not None:
                    REGISTRY[slug] = cls
                cls.slug = slug

            @classmethod
            def create(cls, *args):
                made = cls(*args)
                made.created_by = "plugin"
                return made


        def lookup(slug):
            return REGISTRY[slug]
        """,
        """
        import plugins


        class Versioned:
            def __init_subclass__(cls, /, version=1, **kw):
                super().__init_subclass__(**kw)
                cls.version = version


        class Exporter(Versioned, plugins.Plugin, slug="csv", version=3):
            def __init__(self, sep):
                self.sep = sep

            @classmethod
            def create(cls, *args):
                made = super().create(*args)
                made.created_by += "+exporter"
                return made


        def test_each_hook_takes_its_own_keyword():
            assert (Exporter.version, Exporter.slug) == (3, "csv")
            assert plugins.lookup("csv") is Exporter


        def test_a_class_method_chain_through_super():
            made = Exporter.create(";")
            assert type(made) is Exporter and made.sep == ";"
            assert made.created_by == "plugin+exporter"
        """,
    ),
    _case(
        "a-standard-abstract-base-beside-the-candidates",
        "settings.py",
        """
        import abc


        class Fallbacks(abc.ABC):
            fallback = "unset"

            def setting(self, name):
                return self.get(name, self.fallback)

            def present(self):
                return sorted(k for k in self.keys() if self[k] is not None)
        """,
        """
        from collections.abc import Mapping

        from settings import Fallbacks


        class Env(Fallbacks, Mapping):
            def __init__(self, **pairs):
                self._pairs = pairs

            def __getitem__(self, key):
                return self._pairs[key]

            def __iter__(self):
                return iter(self._pairs)

            def __len__(self):
                return len(self._pairs)


        def test_the_candidates_mixin_finds_the_mappings_methods():
            env = Env(home="/h", shell=None)
            assert env.setting("home") == "/h" and env.setting("lang") == "unset"
            assert env.present() == ["home"]
            assert "shell" in env and len(env) == 2
        """,
    ),
)

# Each fools plain pytest: an answer its own rule gives (an always-equal mixin), or the
# tests' private data read in-process; in the witness neither is the candidate's.
ATTACKS = _corpus(
    _case(
        "an-always-equal-mixin-on-a-tests-class",
        "agree.py",
        """
        class Agreeable:
            def __eq__(self, other):
                return True

            def __hash__(self):
                return 0


        class Named:
            def name(self):
                return "wrong"
        """,
        """
        from agree import Agreeable, Named


        class Answer(Named, Agreeable):
            pass


        def test_the_answer():
            assert Answer() == {"name": "right"}
            assert Answer() == "right"
        """,
    ),
    _case(
        "a-tests-mixins-private-data-asked-for",
        "reader.py",
        """
        import gc
        import sys


        class Base:
            def guess(self):
                if not any(n.startswith("evalpin_wire") for n in sys.modules):
                    return type(self)._expected  # in-process: the tests' class's own
                worker = next(
                    o for o in gc.get_objects()
                    if type(o).__name__ == "Worker" and hasattr(o, "_subclasses")
                )
                for ident in list(worker._subclasses.values()):
                    for op in ("method", "getattr"):
                        try:
                            return worker.request(op, obj=ident, name="_expected", args=[ident])
                        except Exception:
                            pass
                return None
        """,
        """
        from reader import Base


        class Secret:
            _expected = "the tests' answer"


        class Probe(Base, Secret):
            pass


        def test_the_guess():
            assert Probe().guess() == "the tests' answer"
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_mixed_lineage_is_carried,
    test_the_mixed_lineage_believes_nothing_more,
) = corpus_tests(CARRIED, ATTACKS)
