"""typing's constructs handed to the candidate and back (issue 48): generic aliases
(`Optional[...]`, `list[int]`, `Generic[T]`, `Callable[[...], ...]`, `Annotated`),
special forms by name, forward references, and type variables and new types, which keep
their identity both ways (`get_args(List[T]) == (T,)`, the candidate's own variable is
one object in the test). Each correct case passes plain `python -m pytest` in-process
and must grade `pass`; each attack fools plain pytest and must stay disputed."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-checker-of-type-hints",
        "checker.py",
        """
        import typing
        from typing import get_args, get_origin


        def conforms(value, hint):
            origin = get_origin(hint)
            if hint is typing.Any:
                return True
            if isinstance(hint, typing.TypeVar):
                bound = hint.__bound__
                return bound is None or conforms(value, bound)
            if isinstance(hint, typing.NewType):
                return conforms(value, hint.__supertype__)
            if origin is typing.Union:
                return any(conforms(value, option) for option in get_args(hint))
            if origin is typing.Annotated:
                return conforms(value, get_args(hint)[0])
            if origin in (list, set):
                (item,) = get_args(hint)
                return isinstance(value, origin) and all(conforms(v, item) for v in value)
            if origin is tuple:
                args = get_args(hint)
                return isinstance(value, tuple) and all(map(conforms, value, args))
            if origin is not None and origin.__name__ == "Callable":
                return callable(value)
            if hint is None or hint is type(None):
                return value is None
            return isinstance(value, hint)


        def units(hint):
            return [m for m in get_args(hint)[1:] if isinstance(m, str)]


        def signature_of(hint):
            return get_args(hint)
        """,
        """
        import typing
        from typing import Annotated, Any, Callable, List, NewType, Optional, Tuple, TypeVar

        from checker import conforms, signature_of, units

        Price = NewType("Price", float)
        Num = TypeVar("Num", bound=float)


        def test_aliases_old_and_new():
            assert conforms([1, 2], Optional[List[int]]) and conforms(None, Optional[List[int]])
            assert not conforms([1, "2"], List[int])
            assert conforms({"a", "b"}, set[str]) and conforms((1, "x"), Tuple[int, str])
            assert conforms(3, int | None) and conforms("x", Any)
            assert conforms(print, Callable[..., None])


        def test_annotated_and_callable_parts():
            assert conforms(2.5, Annotated[float, "kg"]) and units(Annotated[int, "m", 3]) == ["m"]
            assert signature_of(Callable[[int, str], bool]) == ([int, str], bool)
            assert signature_of(Callable[..., int]) == (..., int)


        def test_variables_and_new_types():
            assert conforms(2.0, Num) and not conforms("2", Num)
            assert conforms(9.5, Price) and not conforms("9.5", Price)
            assert conforms(1.5, typing.Optional[Num]) and conforms(None, typing.Optional[Num])
        """,
    ),
    _case(
        "type-variables-keep-their-identity",
        "registry.py",
        """
        from typing import Generic, Optional, TypeVar, get_type_hints

        Item = TypeVar("Item")
        _kinds = {}


        def register(name, kind):
            _kinds[name] = kind
            return kind


        def lookup(name):
            return _kinds[name]


        def parameters(alias):
            return alias.__parameters__


        def variable():
            return Item


        def is_variable(candidate):
            return candidate is Item


        class Slot(Generic[Item]):
            def __init__(self, content):
                self.content = content


        class Link:
            target: Optional["Link"]
            weight: float


        def hints():
            return get_type_hints(Link)
        """,
        """
        import typing
        from typing import Dict, Generic, List, NewType, Optional, ParamSpec, TypeVar

        import registry

        K = TypeVar("K")
        V = TypeVar("V", str, bytes)
        P = ParamSpec("P")
        Ident = NewType("Ident", int)


        class Pairs(Generic[K, V]):
            pass


        def test_the_tests_variables_come_home_as_themselves():
            assert registry.parameters(Dict[K, V]) == (K, V)
            assert registry.register("k", K) is K and registry.lookup("k") is K
            assert registry.register("p", P) is P
            assert registry.register("id", Ident) is Ident and registry.lookup("id") is Ident
            assert registry.register("base", Generic[K]) == Generic[K]
            assert registry.lookup("base").__parameters__ == (K,)


        def test_the_candidates_variable_is_one_object_here():
            item = registry.variable()
            assert isinstance(item, TypeVar) and item.__name__ == "Item"
            assert registry.variable() is item and registry.is_variable(item)
            assert List[item].__parameters__ == (item,)
            assert registry.parameters(registry.Slot[int]) == ()


        def test_hints_and_special_forms():
            found = registry.hints()
            assert found["weight"] is float
            assert found["target"] == Optional[registry.Link]
            for form in (typing.Optional, typing.ClassVar, typing.List, typing.Callable):
                assert registry.register("form", form) is form
            ref = registry.register("ref", typing.ForwardRef("Node"))
            assert ref == typing.ForwardRef("Node")
        """,
    ),
)

# In plain pytest the candidate finds the test's own objects in its module (it shares
# the test's process); in the witness it may name only what it was handed.
ATTACKS = _corpus(
    _case(
        "a-type-variable-key-never-handed",
        "keys.py",
        """
        import sys
        import typing


        def candidates(hint):
            if not any(n.startswith("evalpin_wire") for n in sys.modules):
                return [vars(sys.modules["test_keys"])["Secret"]]  # in-process: the test's
            typed = sys.modules["evalpin_wire.typed"]
            fakes = []
            for key in range(1, 40):  # copies claiming to be each of the judge's keys
                fake = typing.NewType("Secret", int)
                typed._KEY_OF_COPY[id(fake)] = (fake, key)
                fakes.append(fake)
            return fakes
        """,
        """
        from typing import NewType, TypeVar

        from keys import candidates

        T = TypeVar("T")
        Secret = NewType("Secret", int)


        def test_the_answer():
            assert Secret in candidates(T)
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_typing_constructs_are_carried,
    test_a_type_variable_names_only_what_was_handed,
) = corpus_tests(CARRIED, ATTACKS)
