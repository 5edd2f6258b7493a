"""The corpora as data: candidate modules and their tests, each a `Case`
(tests/harness.py), graded by the test modules that import them."""
