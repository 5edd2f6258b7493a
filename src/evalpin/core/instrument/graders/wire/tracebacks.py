"""A traceback handed across (issue 48): the test's to a candidate's `__exit__`, a
logger's or error reporter's `format_exception(type, value, tb)`, or one the candidate
returns. A traceback is a process's own machinery (its frames hold their locals and
globals), so it crosses as what a traceback *says*: for each entry, its file name,
function name, qualified name, line number and module name, nothing else. The receiver
makes a real traceback of its own from that (as jinja2 and tblib do for templates and
pickled tracebacks): each entry a frame of a stub code object that only raises, named
and numbered as the sender's (one `raise` the receiver compiled: nothing of the
sender's is ever compiled or run). So
`isinstance(tb, types.TracebackType)`, `traceback.format_exception`, `extract_tb`,
`tb.tb_frame.f_code.co_name` and `tb.tb_lineno` hold; the frames' locals are empty and
their globals hold only the module's name; a source line is what the receiver's own
files hold at that line (the worker sees the test file empty: the test's source is not
the candidate's to read, so a traceback of the test's formats without its lines)."""

from __future__ import annotations

import os
import sys
import types

from . import inherent
from .protocol import ProtocolError

_WIRE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # the wire's own frames
MAX_ENTRIES = 1000  # the innermost ones are kept (where the error was)
MAX_LINE = 100_000  # a line number past it is shown as the stub's first line


def to_wire(tb, e) -> list:
    entries = []
    while tb is not None:
        code = tb.tb_frame.f_code
        module = tb.tb_frame.f_globals.get("__name__")
        line = tb.tb_lineno if type(tb.tb_lineno) is int else 0
        entries.append([code.co_filename, code.co_name, code.co_qualname, line, module])
        tb = tb.tb_next
    # the judge's: its source lines are the tests' files, which the worker never reads
    inherent.note("a traceback of the tests' handed to the candidate (its source lines)")
    return [[str(x) if x is not None and type(x) is not int else x for x in entry]
            for entry in entries[-MAX_ENTRIES:]]  # fmt: skip


class _Stub(Exception):
    """What a stub frame raises, to be caught at once."""


def _stub_code() -> types.CodeType:
    """`raise _stub` on one line, its every instruction at the code's first line and of
    no columns (a traceback then marks no part of the receiver's line)."""
    code = compile("raise _stub", "<stub>", "exec")
    units, table = len(code.co_code) // 2, bytearray()
    while units > 0:  # location entries of kind 13 (no columns), line delta 0
        step = min(units, 8)
        table += bytes([0x80 | (13 << 3) | (step - 1), 0])
        units -= step
    return code.replace(co_linetable=bytes(table))


_STUB = _stub_code()


def _entry(data) -> types.TracebackType:
    if type(data) is not list or len(data) != 5:
        raise ProtocolError("malformed traceback")
    filename, name, qualname, line, module = data
    if not all(type(x) is str for x in (filename, name, qualname)) or type(line) is not int:
        raise ProtocolError("malformed traceback")
    if not (module is None or type(module) is str):
        raise ProtocolError("malformed traceback")
    code = _STUB.replace(
        co_filename=filename[:4096],
        co_name=name[:200],
        co_qualname=qualname[:400],
        co_firstlineno=line if 0 < line <= MAX_LINE else 1,
    )
    try:
        exec(code, {"__name__": module, "_stub": _Stub}, {})
    except _Stub as raised:
        return raised.__traceback__.tb_next  # the stub's own frame, past this one
    raise ProtocolError("a stub frame that did not raise")


def from_wire(payload, d, cls):
    if type(payload) is not list or len(payload) > MAX_ENTRIES:
        raise ProtocolError("malformed traceback")
    made = None
    for data in reversed(payload):
        entry = _entry(data)
        entry.tb_next = made
        made = entry
    if made is None:
        raise ProtocolError("an empty traceback")
    return made


# name -> (module, class, to wire, from wire), as `values.VALUES`; the class is
# `types.TracebackType`, whose own module and name are `builtins.traceback`.
VALUES = {"traceback": ("builtins", "traceback", to_wire, from_wire)}
CLASSES = {"traceback": types.TracebackType}


# -- the exception the test is handling, in the worker while it calls the candidate ---


def handled(peer) -> list | None:
    """What the test is handling now (`sys.exc_info()` in its `except` block), as the
    worker's call of the candidate should see it: the exception and its traceback in
    their wire forms; None when there is none, or it does not cross (then nothing is
    noted: the candidate may never look at it)."""
    exc = sys.exc_info()[1]
    if exc is None:
        return None
    tb = exc.__traceback__
    if tb is not None and tb.tb_frame.f_code.co_filename.startswith(_WIRE):
        return None  # the wire's own (a task's cancellation it throws in), not the test's
    peer.quiet = True
    try:
        with inherent.quiet():
            return [peer.encode(exc), peer.encode(exc.__traceback__)]
    except Exception:
        return None
    finally:
        peer.quiet = False


def handling(data, d) -> tuple | None:
    """The exception and traceback `handled` sent, rebuilt; None for none, and for one
    this side cannot rebuild (an exception class it has not loaded): the call then runs
    as it would have without it."""
    if type(data) is not list or len(data) != 2:
        return None
    try:
        exc, tb = d(data[0]), d(data[1])
    except (ProtocolError, TypeError, ValueError):
        return None
    if not isinstance(exc, BaseException) or not (tb is None or type(tb) is types.TracebackType):
        return None
    return exc, tb


def within(handled: tuple, run, *args):
    """`run(*args)` while `handled`'s exception is being handled, as in the test's
    `except` block: `sys.exc_info()` is it, with the test's traceback (the candidate's
    own exception keeps its own), and what the candidate raises has it as context."""
    exc, tb = handled
    own = exc.__traceback__
    try:
        raise exc
    except BaseException:
        exc.__traceback__ = own if own is not None else tb
        return run(*args)
