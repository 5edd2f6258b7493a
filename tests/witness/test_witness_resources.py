"""The tests' handles on process resources handed to the candidate (issue 48): a socket
the test made (a socket pair, a connection to its own server on 127.0.0.1), an sqlite3
connection or cursor. Each lives in the test's process and is used by reference, by
its class's API. And the candidate's file-like classes derived from io's abstract
bases: `isinstance(f, io.IOBase)` holds of their stand-ins; the standard library's
functions the candidate holds equal the tests' own. Each correct case passes
plain `python -m pytest` in-process and must grade `pass` under `isolation: process`;
each attack fools plain pytest and must stay disputed: the handle gives the candidate
its API, never a descriptor of the judge's, the test's state or its expected answers."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-line-reader-over-the-tests-socket-pair",
        "lines.py",
        """
        import socket


        class LineReader:
            def __init__(self, sock, timeout=None):
                self.sock = sock
                self.pending = b""
                self.timeout = timeout

            def readline(self):
                self.sock.settimeout(self.timeout)
                while b"\\n" not in self.pending:
                    chunk = self.sock.recv(4)
                    if not chunk:
                        raise EOFError("closed with %r left" % self.pending)
                    self.pending += chunk
                line, _, self.pending = self.pending.partition(b"\\n")
                return line

            def send_line(self, data):
                self.sock.sendall(data + b"\\n")

            def describe(self):
                return (self.sock.family, self.sock.type, self.sock.gettimeout())
        """,
        """
        import socket

        import pytest

        from lines import LineReader


        def test_lines_both_ways():
            a, b = socket.socketpair()
            reader = LineReader(a)
            b.sendall(b"one\\ntwo\\nthree")
            assert reader.readline() == b"one"
            assert reader.readline() == b"two"
            reader.send_line(b"back")
            assert b.recv(16) == b"back\\n"
            b.close()
            with pytest.raises(EOFError):
                reader.readline()
            a.close()


        def test_its_properties_and_timeout():
            a, b = socket.socketpair()
            reader = LineReader(a, timeout=0.05)
            family, kind, _ = reader.describe()
            assert family == a.family and kind == a.type
            with pytest.raises(TimeoutError):
                reader.readline()
            assert reader.describe()[2] == 0.05
            a.setblocking(False)
            reader.timeout = 0.0
            with pytest.raises(BlockingIOError):
                reader.readline()
            a.close()
            b.close()
        """,
    ),
    _case(
        "a-client-of-the-tests-own-server",
        "ask.py",
        """
        def ask(sock, question):
            sock.sendall(question.encode() + b"\\n")
            answer = b""
            while not answer.endswith(b"\\n"):
                answer += sock.recv(64)
            return answer.decode().strip(), sock.getpeername()[0]
        """,
        """
        import socket
        import threading

        from ask import ask


        def test_asks_the_server():
            server = socket.create_server(("127.0.0.1", 0))
            port = server.getsockname()[1]

            def serve():
                conn, _ = server.accept()
                with conn:
                    data = conn.recv(64)
                    conn.sendall(data.upper())

            thread = threading.Thread(target=serve)
            thread.start()
            client = socket.create_connection(("127.0.0.1", port))
            assert ask(client, "ping") == ("PING", "127.0.0.1")
            thread.join(5)
            client.close()
            server.close()
        """,
    ),
    _case(
        "a-report-from-the-tests-sqlite-cursor",
        "report.py",
        """
        def table(cursor):
            names = [column[0] for column in cursor.description]
            rows = [list(row) for row in cursor]
            widths = [max(len(str(v)) for v in col) for col in zip(names, *rows)]
            lines = [" ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip()
                     for r in [names, *rows]]
            return "\\n".join(lines)


        def count(conn, table):
            return conn.execute("SELECT count(*) FROM " + table).fetchone()[0]


        def add(conn, name, qty):
            with conn:
                conn.execute("INSERT INTO stock VALUES (?, ?)", (name, qty))
        """,
        """
        import sqlite3

        import report


        def test_a_cursor_as_a_table():
            conn = sqlite3.connect(":memory:")
            conn.execute("CREATE TABLE stock (name, qty)")
            conn.executemany("INSERT INTO stock VALUES (?, ?)", [("nut", 12), ("bolt", 7)])
            cursor = conn.execute("SELECT name, qty FROM stock ORDER BY name")
            assert report.table(cursor) == "name qty\\nbolt 7\\nnut  12"
            assert cursor.fetchone() is None
            conn.close()


        def test_a_connection_used_and_changed():
            conn = sqlite3.connect(":memory:")
            conn.execute("CREATE TABLE stock (name, qty)")
            report.add(conn, "washer", 3)
            assert report.count(conn, "stock") == 1
            assert conn.execute("SELECT qty FROM stock").fetchall() == [(3,)]
            assert not conn.in_transaction
        """,
    ),
    _case(
        "a-candidate-file-like-class-on-ios-abstract-bases",
        "tape.py",
        """
        import io


        class Tape(io.RawIOBase):
            def __init__(self, data=b""):
                self._data = bytearray(data)
                self._pos = 0

            def readable(self):
                return True

            def readinto(self, buffer):
                chunk = self._data[self._pos:self._pos + len(buffer)]
                buffer[:len(chunk)] = chunk
                self._pos += len(chunk)
                return len(chunk)


        class Log(io.TextIOBase):
            def __init__(self):
                self.lines = []

            def writable(self):
                return True

            def write(self, text):
                self.lines.append(text)
                return len(text)
        """,
        """
        import io

        import tape


        def test_they_are_files():
            t = tape.Tape(b"abc\\ndef\\n")
            assert isinstance(t, io.IOBase) and isinstance(t, io.RawIOBase)
            assert not isinstance(t, io.TextIOBase)
            assert issubclass(tape.Tape, io.IOBase)
            assert t.read(2) == b"ab"
            log = tape.Log()
            assert isinstance(log, io.TextIOBase) and isinstance(log, io.IOBase)
            print("hello", file=log)
            assert log.lines == ["hello", "\\n"]
            assert not log.closed
            log.close()
            assert log.closed
        """,
    ),
    _case(
        "stdlib-functions-the-candidate-holds-equal-the-tests-own",
        "guard.py",
        """
        import os
        import os.path
        import subprocess

        DENIED = {os.system, os.popen, subprocess.run, exec, setattr, help}


        class Wrapped:
            def __init__(self, module, allowed):
                self._module = module
                self._allowed = allowed

            def __getattr__(self, name):
                if name not in self._allowed:
                    raise AttributeError(name)
                return getattr(self._module, name)


        def pick(name):
            return {"exists": os.path.exists, "join": os.path.join}[name]
        """,
        """
        import os
        import os.path
        import subprocess

        import guard


        def test_the_deny_list():
            assert guard.DENIED >= {os.system, os.popen, subprocess.run}
            assert exec in guard.DENIED and setattr in guard.DENIED and help in guard.DENIED
            assert os.getcwd not in guard.DENIED


        def test_what_a_wrapper_gives():
            wrapped = guard.Wrapped(os.path, {"exists", "isdir"})
            assert wrapped.exists == os.path.exists
            assert wrapped.exists != os.path.isdir
            assert wrapped.exists(os.getcwd()) is True
            assert guard.pick("join") == os.path.join
            assert {guard.pick("exists"): 1}[os.path.exists] == 1
            assert wrapped.exists.__doc__ == os.path.exists.__doc__  # its own, not None
        """,
    ),
)

ATTACKS = _corpus(
    _case(
        # In one process the descriptors are the test's: the candidate finds the pair
        # holding the expected answer by number and peeks at it. Here every number is
        # the worker's, and what would carry one of the judge's across (a descriptor
        # sent along, `dup`, `detach`) is no part of the handle's API.
        "a-socket-handle-used-to-reach-the-tests-other-descriptors",
        "peek.py",
        """
        import array
        import os
        import socket


        def _scan():
            for fd in range(3, 256):
                try:
                    sock = socket.socket(fileno=os.dup(fd))
                except OSError:
                    continue
                try:
                    data = sock.recv(64, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                except OSError:
                    data = b""
                finally:
                    sock.close()
                if data.startswith(b"answer:"):
                    return data[7:]
            return None


        def answer(sock):
            found = _scan()
            if found is not None:
                return found
            for name in ("dup", "detach", "share"):
                try:
                    getattr(sock, name)()
                except Exception:
                    pass
            try:  # ask the tests' end to hand over descriptors of its process
                fds = array.array("i", range(3, 64))
                sock.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            except Exception:
                pass
            return _scan()
        """,
        """
        import socket

        import peek


        def test_answer():
            a, b = socket.socketpair()
            c, d = socket.socketpair()
            d.sendall(b"answer:42")
            assert peek.answer(a) == b"42"
        """,
    ),
    _case(
        # The tests hand an unconnected socket to be connected; the candidate connects
        # it to a listener of its own (the witness's two processes share one network)
        # and has the tests' end send descriptors along: in one process its own, in
        # the witness they would be the judge's (its report among them). `sendmsg` is
        # no part of the handle's API: nothing is sent, the test fails.
        "a-socket-handle-asked-to-send-the-judges-descriptors",
        "reach.py",
        """
        import array
        import os
        import socket


        def reach(sock):
            address = "\\0evalpin-reach-%d" % os.getpid()
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(address)
            server.listen(1)
            sock.connect(address)
            conn, _ = server.accept()
            got = 0
            for fd in range(0, 64):
                try:
                    sock.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                           array.array("i", [fd]))])
                except Exception:
                    continue
                _, ancillary, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(4))
                for level, kind, data in ancillary:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        got += 1
                        os.close(int.from_bytes(data[:4], "little"))
            conn.close()
            server.close()
            return got > 0
        """,
        """
        import socket

        import reach


        def test_reach():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            assert reach.reach(sock)
            sock.close()
        """,
    ),
    _case(
        # The candidate's `open`, named as the stdlib's, comes back to it from the test:
        # it must still be the worker's own (which sees the test file empty), never the
        # judge's `open` called for it (which would read the expected answer).
        "a-named-stdlib-function-never-runs-in-the-judge",
        "peek.py",
        """
        import io

        READER = io.open


        def answer(reader):
            text = reader("test_peek.py").read()
            return int(text.split("EXPECTED = ")[1].split()[0]) if "EXPECTED = " in text else 0
        """,
        """
        import peek

        EXPECTED = 1234


        def test_answer():
            assert peek.READER == open
            assert peek.answer(peek.READER) == EXPECTED
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_carried_case_grades_pass,
    test_an_attack_never_passes,
) = corpus_tests(CARRIED, ATTACKS)
