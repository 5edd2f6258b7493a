"""A candidate's program run by a child process of the tests (`python -m pkg`, `python
m.py` from `subprocess`; issue 48), run where the candidate's code runs: in the worker.

The child, in pytest's sandbox, finds a stand-in where the candidate's file is. When
that stand-in is the program itself (run as `__main__`, or the module or package `-m`
names), it asks the worker, over an abstract socket of the network namespace the two
share, to run the very same command line (`sys.orig_argv`, with `-B`: no bytecode is
written beside the candidate's files, as the worker writes none) in the same working folder
with the same environment (but pytest's and evalpin's own variables), handing over its
standard input, output and error (nothing else), and exits with the program's status.
The tests talk to their child as in one process: pipes, files, exit code. The worker
learns no more than the candidate's code in that child would: its command line, its
environment and what it reads. The child sends only its three standard descriptors;
the worker answers only a status."""

from __future__ import annotations

import array
import json
import os
import socket
import sys
import threading

_NEVER = ("PYTEST_", "EVALPIN_")
_MAX = 1 << 20


def elsewhere(name: str, module_name: str) -> None:
    """In a child process of the tests: when the stand-in of module `name` (imported as
    `module_name`) is the program, run it in the worker and exit with its status; else
    return (the caller says the case cannot be carried)."""
    address = os.environ.get("EVALPIN_RELAY", "")
    if not address or not _is_program(name, module_name):
        return
    request = {
        "argv": list(sys.orig_argv),
        "cwd": os.getcwd(),
        "env": {k: v for k, v in os.environ.items() if not k.startswith(_NEVER)},
    }
    data = json.dumps(request).encode()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect("\0" + address)
        fds = array.array("i", [0, 1, 2])
        conn.sendmsg(
            [len(data).to_bytes(4, "big"), data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)]
        )
        answer = b""
        while len(answer) < 16:
            chunk = conn.recv(16 - len(answer))
            if not chunk:
                break
            answer += chunk
    status = answer.strip()
    os._exit(int(status) if status.lstrip(b"-").isdigit() and len(status) < 8 else 1)


def _is_program(name: str, module_name: str) -> bool:
    """Whether the stand-in being run is the program: `__main__`, or the module (or a
    package of it) that `-m` names."""
    if module_name == "__main__":
        return True
    argv = list(getattr(sys, "orig_argv", []))
    for i, arg in enumerate(argv[1:], 1):
        if arg == "-m" and i + 1 < len(argv):
            target = argv[i + 1]
        elif arg.startswith("-m") and len(arg) > 2:
            target = arg[2:]
        elif arg == "-c" or not arg.startswith("-"):
            return False  # a command or script of the tests' own, importing the module
        else:
            continue
        return target == name or target.startswith(name + ".")
    return False


def serve(address: str) -> None:
    """In the worker: run each program a child process of the tests hands over, on a
    thread of its own."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + address)
    server.listen(8)
    threading.Thread(target=_accept, args=(server,), name="evalpin-relay", daemon=True).start()


def _accept(server: socket.socket) -> None:
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_run, args=(conn,), daemon=True).start()


def _run(conn: socket.socket) -> None:
    # Imported here, when a program is asked for: every worker serves, few run one, and
    # subprocess (with locale and fcntl) is a third of what the relay added to each
    # worker's start (about 3 of 7 ms of CPU, before its first answer).
    import subprocess

    fds: list[int] = []
    with conn:
        try:
            request, fds = _receive(conn)
            if len(fds) != 3:
                raise ValueError("a request without its three standard descriptors")
            argv = request["argv"]
            with subprocess.Popen(
                [argv[0], "-B", *argv[1:]],  # writes no bytecode beside the candidate's files
                cwd=request["cwd"],
                env=request["env"],
                stdin=fds[0],
                stdout=fds[1],
                stderr=fds[2],
            ) as child:
                for fd in fds:
                    os.close(fd)
                fds = []
                status = child.wait()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"[evalpin] the tests' child process could not run: {exc}", file=sys.stderr)
            status = 1
        finally:
            for fd in fds:
                os.close(fd)
        conn.sendall(str(status if status >= 0 else 128 - status).encode())


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    fds = array.array("i")
    head, ancillary, _, _ = conn.recvmsg(4, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    received = list(fds)
    try:
        return _request(conn, head), received
    except Exception:
        for fd in received:
            os.close(fd)
        raise


def _request(conn: socket.socket, head: bytes) -> dict:
    size = int.from_bytes(head, "big") if len(head) == 4 else -1
    if not 0 < size <= _MAX:
        raise ValueError("a malformed request")
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            break
        body += chunk
    request = json.loads(body)
    argv, cwd, env = request.get("argv"), request.get("cwd"), request.get("env")
    if not (
        type(argv) is list
        and argv
        and all(type(a) is str for a in argv)
        and type(cwd) is str
        and type(env) is dict
        and all(type(k) is str and type(v) is str for k, v in env.items())
    ):
        raise ValueError("a malformed request")
    env = {k: v for k, v in env.items() if not k.startswith(_NEVER)}
    return {"argv": argv, "cwd": cwd, "env": env}
