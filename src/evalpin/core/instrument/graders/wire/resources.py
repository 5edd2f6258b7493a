"""The tests' handles on process resources (a socket, an sqlite3 connection or cursor)
handed to the candidate (issue 48): each is one object that lives in the test's process
(its descriptor, its database), so the candidate uses it by reference, through the
documented API of its class and nothing else, every call made on the test's own object.

Left out is what would carry a descriptor or a process's memory across: `sendmsg` and
`recvmsg` (descriptors ride along), `dup`, `detach`, `share`, `sendfile` (a file of the
worker's), an sqlite3 extension or a database image (`load_extension`, `deserialize`).
The judge's calls on a socket reach only the network the worker has itself (the
witness's two processes share one network namespace): nothing new is reachable."""

from __future__ import annotations

_SOCKET = frozenset(
    [
        "accept",
        "bind",
        "close",
        "connect",
        "connect_ex",
        "family",
        "fileno",
        "getblocking",
        "getpeername",
        "getsockname",
        "getsockopt",
        "gettimeout",
        "listen",
        "proto",
        "recv",
        "recv_into",
        "recvfrom",
        "recvfrom_into",
        "send",
        "sendall",
        "sendto",
        "setblocking",
        "setsockopt",
        "settimeout",
        "shutdown",
        "timeout",
        "type",
    ]
)
_CURSOR = frozenset(
    [
        "arraysize",
        "close",
        "connection",
        "description",
        "execute",
        "executemany",
        "executescript",
        "fetchall",
        "fetchmany",
        "fetchone",
        "lastrowid",
        "rowcount",
        "setinputsizes",
        "setoutputsize",
    ]
)
_CONNECTION = frozenset(
    [
        "close",
        "commit",
        "cursor",
        "execute",
        "executemany",
        "executescript",
        "in_transaction",
        "isolation_level",
        "iterdump",
        "rollback",
        "total_changes",
    ]
)
# By the class's own module and name: a subclass (the tests' own, `ssl.SSLSocket`) is
# not one of these.
_APIS = {
    ("socket", "socket"): _SOCKET,
    ("sqlite3", "Cursor"): _CURSOR,
    ("sqlite3", "Connection"): _CONNECTION,
}


def api_of(value) -> frozenset | None:
    """The names the candidate may use of a tests' handle, None when it is none."""
    cls = type(value)
    return _APIS.get((cls.__module__, cls.__qualname__))


def read(target, name: str):
    """An attribute of a tests' handle the candidate reads: one of its class's API."""
    api = api_of(target)
    if api is None or name not in api:
        raise AttributeError(
            f"{name!r}: a {type(target).__qualname__} of the tests' is used by its API"
        )
    return getattr(target, name)
