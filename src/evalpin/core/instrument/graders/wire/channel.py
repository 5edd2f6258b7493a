"""The side channel: a second pair of pipes for calls made by threads other than each
end's main thread (a `threading.Timer` calling back into the test, a thread pool of the
candidate's calling a test's function, the test's threads calling the candidate). Each
such thread has one conversation with an id for its whole life, and the other end one
thread that serves it (as in one process, where every call a thread makes runs in that
thread: a `threading.local` the candidate fills in one call is there at the next),
ended when the calling thread ends. A reader thread per end hands each message to the
thread of its conversation, so concurrent callers never wait for each other."""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import threading

from .protocol import MAX_MESSAGE, ProtocolError, RemoteGone


class SideChannel:
    """One end of the side channel, serving and sending for `peer`."""

    def __init__(self, peer, rfd: int, wfd: int, prefix: str) -> None:
        self._peer = peer
        self._rfd, self._wfd = rfd, wfd
        os.set_blocking(rfd, True)
        self._lock = threading.Lock()
        self._waiting: dict[str, queue.SimpleQueue] = {}
        self._local = threading.local()
        self._ids = itertools.count(1)
        self._prefix = prefix
        self._gone = False
        threading.Thread(target=self._read_loop, name="evalpin-wire-side", daemon=True).start()

    @property
    def busy(self) -> bool:
        """Whether any thread's conversation is alive (this end's or the other's)."""
        return bool(self._waiting)

    def send(self, message: dict, body: dict) -> None:
        """Send a message in this thread's conversation (its body encoded under the write
        lock, so the other end reads what this end described in the order it was)."""
        if self._gone:
            raise RemoteGone("the other process closed the connection")
        message["cv"] = self._local.conv
        with self._lock:
            view = memoryview(self._peer.line(message, body))
            try:
                while view:
                    view = view[os.write(self._wfd, view) :]
            except OSError as exc:
                raise RemoteGone(f"the other process is gone ({exc})") from None

    def request(self, message: dict, body: dict) -> dict:
        """Send a request and serve the other end's nested requests until its reply."""
        inbox = self._waiting.get(self._conversation())
        if inbox is None:
            raise RemoteGone("the other process closed the connection")
        self.send(message, body)
        while True:
            reply = inbox.get()
            if reply is None:
                raise RemoteGone("the other process closed the connection")
            if "op" in reply:
                self._peer.serve(reply)
                continue
            return reply

    def _conversation(self) -> str:
        """This thread's conversation: the one it serves for the other end, or one of
        its own, begun at its first call and ended with the thread."""
        conv = getattr(self._local, "conv", None)
        if conv is None:
            conv = f"{self._prefix}{next(self._ids)}"
            self._waiting[conv] = queue.SimpleQueue()
            self._local.conv = conv
            self._local.ending = _Ending(self, conv)
        return conv

    def end(self, conv: str) -> None:
        """A thread of this end's is gone: the other end's thread serving its
        conversation ends too (a bare line, nothing riding along: it may be written
        while the thread is being torn down)."""
        self._waiting.pop(conv, None)
        if self._gone:
            return
        with self._lock:
            view = memoryview(f'{{"cv":"{conv}","end":1}}\n'.encode())
            try:
                while view:
                    view = view[os.write(self._wfd, view) :]
            except OSError:
                pass

    def _read_loop(self) -> None:
        buf = bytearray()
        try:
            while True:
                try:
                    data = os.read(self._rfd, 1 << 16)
                except OSError:
                    data = b""
                if not data:
                    return
                buf += data
                if len(buf) > MAX_MESSAGE:
                    return
                while (end := buf.find(b"\n")) >= 0:
                    line = bytes(buf[:end])
                    del buf[: end + 1]
                    self._dispatch(self._peer.parse(line))
        except (ProtocolError, RemoteGone):
            return
        finally:
            self._gone = True
            for inbox in list(self._waiting.values()):
                inbox.put(None)

    def _dispatch(self, message: dict) -> None:
        conv = message.get("cv")
        if type(conv) is not str:
            raise ProtocolError("a side message outside any conversation")
        inbox = self._waiting.get(conv)
        if inbox is None and "op" in message:  # a new conversation of the other end's
            inbox = self._waiting[conv] = queue.SimpleQueue()
            threading.Thread(
                target=self._serve, args=(conv, inbox), name="evalpin-wire-call", daemon=True
            ).start()
        if inbox is not None:
            inbox.put(message)

    def _serve(self, conv: str, inbox: queue.SimpleQueue) -> None:
        """Serve the other end's thread `conv` until it ends (or the connection does)."""
        self._local.conv = conv
        try:
            while (message := inbox.get()) is not None and "end" not in message:
                if "op" in message:
                    self._peer.serve(message)
        except RemoteGone:
            pass
        finally:
            self._waiting.pop(conv, None)
            self._local.conv = None


class _Ending:
    """Held in a thread's own `threading.local` slot: it goes when the thread ends,
    and the other end's thread serving its conversation with it."""

    __slots__ = ("channel", "conv")

    def __init__(self, channel: SideChannel, conv: str) -> None:
        self.channel, self.conv = channel, conv

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # (interpreter shutdown: nothing to end)
            self.channel.end(self.conv)
