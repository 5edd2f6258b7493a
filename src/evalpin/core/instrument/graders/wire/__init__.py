"""The wire between a process-isolated candidate and the pytest process that judges it.

Standard library only: this package is copied into both sandboxes as `evalpin_wire`
(never imported from the repository there), so its modules import each other
relatively. The candidate's end is a `Worker`, the pytest process's end a `Judge`;
messages are strict, tagged JSON lines over two pairs of pipes (the main threads', and
a side channel for other threads'). The wire itself never unpickles, and no code of
the other side runs on either side. One concept a module, each with a public surface:

- `protocol`: limits, the wire's errors, checks on received values;
- `stdlib`: the standard library as both ends know it (trusted imports, by-name forms);
- `values`: the stdlib's value types, crossing by value (`numeric`: numpy's;
  `frames`: pandas' frames and scipy's sparse matrices); `exceptions`: exceptions by
  value, with their chain and notes; `shares`: containers kept in step both ways;
- `installed` (judge): the installed library's class a stand-in presents to `isinstance`;
- `rules`: what a proxy may forward and what a value-backed stand-in answers as its
  value; `describe` (worker): a candidate class as data; `classes` (judge): a proxy
  class from that data, whatever it claims; `proxies`: the proxies' roots;
- `kinds` (judge): what a test's object may be used for; `handles` (worker): the
  stand-ins of the tests' objects (`iterators`: what an iterator's lacks);
- `codec`: the wire form of values and the identity maps both ends share (`plain`: the
  one-pass forms of containers of plain values; `crossed`: immutable values keep their
  identity both ways); `peer`: the message loop over it; `channel`: the side channel;
- `functions`: a candidate's plain function as a real function in the judge;
  `registries` (judge): an installed library's registry the candidate filled, named;
- `imports` (judge): what pytest never loads from the folders both processes write;
- `process`: environment variables and the working folder, in step both ways;
- `lifetimes`: the tests' objects held across the wire as long as the test holds
  them; `copies` (worker): the candidate's objects copied where they live;
  `running` (worker): a candidate module's doctests, and the module as `__main__`;
  `twins` (worker) and `tests_own` (judge): the classes the tests derive from the
  candidate's, made there too, and what of the tests' classes the worker cannot carry;
- `logs`: log records and warnings; `state`: the test's random and decimal state;
- `tasks` (worker): the candidate's awaitables in its own event loop; `unpickle`
  (judge): a pickle the test loads, here only when it names no code;
- `judge`, `worker`: the two ends; `stubs`: the candidate's modules in pytest;
  `notes`: why the witness could not confirm a case, as the grader reads it.

What crosses, how, and who decides a comparison is documented for users in
docs/concepts/isolation.md. A malformed message is a `ProtocolError` on the receiving
side: the test fails, nothing the sender wrote is executed. An operation the wire
cannot carry is recorded (`Judge.unsupported`) and the case is not judged.
"""
