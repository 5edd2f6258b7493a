"""What a message may be: the wire's limits, its errors, and the checks every received
value goes through before it is used."""

from __future__ import annotations

MAX_MESSAGE = 64 * 1024 * 1024
MAX_DEPTH = 100
MAX_SHARED_ITEMS = 10_000  # a container bigger than this crosses as a copy, not shared
MAX_SHARED = 512  # containers kept in step at once (checked at every message)
SPIN_READS = 100  # non-blocking reads, each followed by sched_yield, before select
BUSY_YIELD_NS = 50_000  # a sched_yield this long: another process ran (the machine is busy)
BUSY_READS = 256  # reads that then block at once, before spinning is tried again
SCALARS = (type(None), bool, int, float, str)


class ProtocolError(RuntimeError):
    """The other side sent something that is not a well-formed message."""


class RemoteGone(RuntimeError):
    """The other side closed the pipe or died."""


class ByReference(Exception):
    """This value of a by-value type holds something that does not cross by value."""


class Unsupported(TypeError):
    """An operation the wire cannot carry: the grader's limit, never the candidate's."""


# The wire's own errors: none is ever the error of the code an answer came from.
WIRE_ERRORS = (ProtocolError, RemoteGone, ByReference, Unsupported)


class Gone:
    """The marker of an attribute that is not there (set back by deleting it)."""

    def __repr__(self) -> str:
        return "<gone>"


GONE = Gone()


def is_ident(name: object) -> bool:
    return type(name) is str and name.isidentifier()


def string(value) -> str:
    if type(value) is not str:
        raise ProtocolError("expected a string")
    return value


def number(value) -> int | float:
    if type(value) not in (int, float):
        raise ProtocolError("expected a number")
    return value


def ints(payload, n: int) -> list:
    if type(payload) is not list or len(payload) != n or any(type(x) is not int for x in payload):
        raise ProtocolError("malformed value fields")
    return payload


def pairs(items, d) -> list:
    if type(items) is not list or not all(type(p) is list and len(p) == 2 for p in items):
        raise ProtocolError("malformed pairs")
    return [(d(k), d(v)) for k, v in items]


def exact(value, kind: type):
    if type(value) is not kind:
        raise TypeError(f"the other side returned {type(value).__name__}, not {kind.__name__}")
    return value


def text_of(exc: BaseException) -> str:
    try:
        return str(exc)[:4000]
    except Exception:
        return type(exc).__name__


def name_of(message: dict) -> str:
    name = message.get("name")
    if type(name) is not str:
        raise ProtocolError("attribute name must be a string")
    return name
