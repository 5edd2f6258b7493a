"""Objects made another way than the usual one, across the wire (issue 48): a module a
candidate's code builds itself (`types.ModuleType` filled in and put in `sys.modules`,
as a meta-path loader or a compatibility shim does), a tests' subclass of a candidate
class whose `__new__` takes the fields and that has no `__init__` of its own (as
Python's `object.__init__` lets extra arguments through when `__new__` is overridden),
and a tests' generator or builtin iterator the candidate asks about its special methods
(`hasattr(it, "__len__")`). Each correct case passes plain `python -m pytest`
in-process and must grade `pass` under `isolation: process`; a submodule only a
candidate's loader can import is disputed with the import's own error, never an
internal protocol error."""

from __future__ import annotations

import pytest

from evalpin.run.sandbox import Isolation
from tests.harness import _case, _corpus, corpus_tests, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (`backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-module-the-candidate-builds-read-through-its-package",
        "units.py",
        """
        import sys
        import types


        def _build(name, **members):
            made = types.ModuleType(f"{__name__}.{name}", "built at import")
            made.__dict__.update(members)
            sys.modules[made.__name__] = made
            return made


        metric = _build("metric", km=lambda m: m / 1000, BASE="m")
        """,
        """
        import units


        def test_the_built_module_answers():
            assert units.metric.__name__ == "units.metric"
            assert units.metric.BASE == "m"
            assert units.metric.km(2500) == 2.5
            assert units.metric.__doc__ == "built at import"
        """,
    ),
    _case(
        "a-tests-subclass-of-a-value-class-built-by-new",
        "money.py",
        """
        class Money:
            __slots__ = ("amount", "currency")

            def __new__(cls, amount, currency="EUR"):
                self = object.__new__(cls)
                object.__setattr__(self, "amount", amount)
                object.__setattr__(self, "currency", currency)
                return self

            def __setattr__(self, name, value):
                raise AttributeError("money is immutable")

            def doubled(self):
                return type(self)(self.amount * 2, self.currency)
        """,
        """
        import pytest

        from money import Money


        class Fee(Money):
            __slots__ = ()


        class Plain:
            pass


        def test_the_fields_reach_new():
            fee = Fee(7, currency="USD")
            assert (fee.amount, fee.currency) == (7, "USD")
            assert isinstance(fee, Money)
            assert Fee(3).currency == "EUR"
            with pytest.raises(AttributeError):
                fee.amount = 1


        def test_a_class_without_new_still_refuses_arguments():
            with pytest.raises(TypeError):
                Plain(1)
        """,
    ),
    _case(
        "the-candidate-asks-a-generator-what-it-has",
        "probe.py",
        """
        def shape(items):
            traits = [n for n in ("__len__", "__getitem__", "__contains__", "__enter__")
                      if hasattr(items, n)]
            total = len(items) if hasattr(items, "__len__") else sum(1 for _ in items)
            return traits, total
        """,
        """
        from probe import shape


        def squares(n):
            for i in range(n):
                yield i * i


        def test_a_generator_and_an_iterator_lack_what_they_lack():
            assert shape(squares(5)) == ([], 5)
            assert shape(iter([4, 5])) == ([], 2)
            assert shape(map(str, range(3))) == ([], 3)
        """,
    ),
)

DISPUTED = _corpus(
    _case(
        "a-submodule-only-the-candidates-loader-imports",
        "alias.py",
        """
        import sys
        import types
        from importlib.machinery import ModuleSpec


        class _Finder:
            def find_spec(self, fullname, path=None, target=None):
                if fullname == "alias.extra":
                    return ModuleSpec(fullname, self)
                return None

            def create_module(self, spec):
                return types.ModuleType(spec.name)

            def exec_module(self, module):
                module.answer = 42


        __path__ = []  # a package: its submodules are the finder's
        sys.meta_path.append(_Finder())
        """,
        """
        def test_the_loader_made_submodule():
            import alias.extra

            assert alias.extra.answer == 42
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass (no attacks here).
test_the_corpus_passes_in_plain_pytest, test_a_carried_case_grades_pass, _ = corpus_tests(
    CARRIED, {}, DISPUTED
)


@pytest.mark.parametrize("name", list(DISPUTED))
def test_a_loader_made_module_is_disputed_plainly(grade, backend: Isolation, name: str) -> None:
    outcome = grade(DISPUTED[name], backend)
    expect(outcome, "disputed")
    assert "ProtocolError" not in outcome.witness_tail, outcome.witness_tail
