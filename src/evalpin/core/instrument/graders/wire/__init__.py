"""The wire between a process-isolated candidate and the pytest process that judges it.

Standard library only: this package is copied into both sandboxes as `evalpin_wire`
(never imported from the repository there), so its modules import each other
relatively. The candidate's end is a `Worker`, the
pytest process's end a `Judge`; messages are strict, tagged JSON lines over two pipes.
Nothing is ever unpickled, and no code of the other side runs on either side.

What crosses, and how (the docs' isolation page says the same for users):

- Plain data (None, bool, int, float, str, bytes, list, tuple, dict, set, frozenset) and
  the standard library's value types (collections' Counter, OrderedDict, defaultdict,
  deque; datetime, date, time, timedelta, timezone; Decimal, Fraction, UUID, pathlib's
  paths, complex, range, slice, dict views) cross *by value*, of their exact type, and
  are rebuilt with the receiver's own stdlib classes.
- Any other object of the candidate's stays in the worker. The judge sees it as an
  instance of a local proxy class named after the candidate's class, with the same
  bases (so `isinstance`, `issubclass`, `type(x).__name__` and exception hierarchies
  hold), the dunders the class defines forwarded (operators, containers, iteration,
  context managers, `repr`, `str`, `format`, `hash`), its methods and attributes
  forwarded, its dataclass fields and enum members described as data. A candidate
  class derived from an immutable builtin (int, str, tuple: named tuples) is a local
  subclass of that builtin holding a copy of the value; an exception carries its args.
- Who decides a comparison: between two candidate objects, the candidate (its
  `__eq__`, `__lt__`...), as in-process. Between a candidate object and anything of
  the tests, never candidate code: a value-backed object compares as its value (a
  mutable one, a list or dict subclass, as a fresh copy of it) with the builtin's own
  comparison; any other object is equal only to itself and not ordered.
- What the tests hand the candidate is a capability by kind (`_kind`): a function is
  called, an iterator iterated, a file object read and written through its public
  methods, an instance of the tests' own classes used through its public attributes
  (and given new ones), a unittest.mock double used as its code under test would use
  it (its own API, `assert_*`, `reset_mock`, `configure_mock`, `return_value`..., is
  the test's). Anything else is refused as `Unsupported`, recorded for the grader.
- The test's environment follows each call into the worker: its working directory,
  environment variables and the attributes it sets on a candidate module; the files
  under a path it hands over (or chdirs into) are mirrored both ways, nothing above
  them; what the candidate prints comes back into the test's captured output;
  `input()` and `sys.stdin` read the test's.

A malformed message is a `ProtocolError` on the receiving side: the test fails, nothing
the sender wrote is executed.
"""
