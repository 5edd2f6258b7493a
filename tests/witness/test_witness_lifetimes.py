"""A test's object lives as long as the test holds it, as in one process (issue 48,
docs/concepts/isolation.md's object model, row 3.1): once a call into the candidate
returns, the worker's stand-in of a test's object the candidate no longer holds lets the
judge hold it weakly at once (with the reply, not the next message), and the worker's
copy of a test's exception the candidate caught and dropped takes no frame of the
candidate's with it (`wire/lifetimes.py`). So a weak table's entry goes with its value
at the test's next `gc.collect()`. Each case passes plain `python -m pytest` in-process
and must grade `pass`."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-weak-tables-entry-goes-with-its-value",
        "interning.py",
        """
        class Interner:
            # Hands out one object per key for as long as someone holds it.
            def __init__(self, table):
                self._table = table
                self.made = 0

            def get(self, key, factory):
                try:
                    return self._table[key]
                except KeyError:
                    pass
                self.made += 1
                value = factory(key)
                self._table[key] = value
                return value
        """,
        """
        import gc
        import weakref

        import interning


        class Symbol:
            def __init__(self, name):
                self.name = name


        def test_an_entry_nobody_holds_is_made_again():
            interner = interning.Interner(weakref.WeakValueDictionary())
            assert interner.get("x", Symbol).name == "x"
            gc.collect()
            kept = interner.get("x", Symbol)
            assert interner.made == 2
            assert interner.get("x", Symbol) is kept and interner.made == 2
        """,
    ),
)

test_the_corpus_passes_in_plain_pytest, test_a_carried_case_grades_pass, _ = corpus_tests(
    CARRIED, {}
)
