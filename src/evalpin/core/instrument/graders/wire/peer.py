"""What both ends of the wire share beyond the codec: the message loop (its spinning
read is what makes a call cheap; calls from other threads go over the side channel,
`channel`), arguments changed in place copied back, and what rides along with each
message."""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import time
from json.encoder import c_make_encoder, encode_basestring_ascii
from json.scanner import c_make_scanner

from .codec import Codec
from .protocol import (
    BUSY_READS,
    BUSY_YIELD_NS,
    MAX_MESSAGE,
    MAX_SHARED_ITEMS,
    SPIN_READS,
    WIRE_ERRORS,
    ProtocolError,
    RemoteGone,
    Unsupported,
    text_of,
)
from .pulls import Batches, Pulls
from .shares import merge
from .values import mutable_name


class Peer(Codec):
    """What both ends share: the codec and the message loop. Each end decides what it
    may be asked to do (`_perform`) and what rides along with each message
    (`_outgoing`, `_incoming`, `_finish`)."""

    def __init__(self, rfd: int, wfd: int, main_thread: int) -> None:
        super().__init__(main_thread)
        self.steps = 0  # requests sent: the other side may have run code since a step
        self._rfd = rfd
        os.set_blocking(rfd, False)
        self._buf = bytearray()
        self._busy = 0  # reads left that block at once (the machine was busy)
        self._wfd = wfd
        self._side = None  # the side channel, for calls from other threads
        self.pulls = Pulls()  # the judge's: candidate iterators the test drains
        self.batches = Batches()  # the worker's: what it pulls for them

    # -- messages ----------------------------------------------------------------------

    def line(self, message: dict, body: dict) -> bytes:
        """The message with what rides along, then its body, encoded in that order
        (the receiver decodes in the same order). `body` is emptied once encoded, so
        what rides along after it (`_sent_body`) sees a reply's values held by nothing
        of the sender's but what holds them once the reply is gone."""
        with self._state:
            self._outgoing(message)
            if self._released:
                message["rel"], self._released = self._released, []
            keys = list(body)
            try:
                if self.shares.entries:
                    updates = self.shares.changed(self)
                    if updates:
                        message["sh"] = updates
                for key in keys:  # in order, each value let go of once encoded
                    value = body.pop(key)
                    message[key] = (
                        self.encode(value) if key in _PLAIN_FIELDS else self._field(key, value)
                    )
                    value = None
            except Exception as exc:  # a reply's value that cannot cross: the wire's limit
                if "op" in message or isinstance(exc, RemoteGone):  # (never the session's)
                    raise
                for key in keys:
                    message.pop(key, None)
                what = f"a value the wire could not send back ({_named(exc)})"
                message["err"] = self._refusal(exc, what)
            body.clear()
            self._sent_body(message)
            if self.refused:  # the worker's refusals, this message's own among them
                message["rf"], self.refused = self.refused, []
            self._finish(message)
        return _encoded(message).encode() + b"\n"

    def _field(self, key: str, value):
        if key == "kwargs":
            return {str(k): self.encode(v) for k, v in value.items()}
        if key == "err":
            if isinstance(value, WIRE_ERRORS):  # met by the answering code, raised by no one's
                return self._refusal(value, f"the wire's own error in an answer ({_named(value)})")
            return self._error_data(value)
        if key == "back":
            return [self.encode(v, copy=True) for v in value]
        return self.encode(value)

    def _send(self, message: dict, **body) -> None:
        self._write(message, body)

    def _write(self, message: dict, body: dict) -> None:
        """Send `message` with `body` (emptied as it is encoded)."""
        if threading.get_ident() != self._main and self._side is not None:
            self._side.send(message, body)
            return
        data = self.line(message, body)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._wfd, view) :]
        except OSError as exc:
            raise RemoteGone(f"the other process is gone ({exc})") from None

    def parse(self, line: bytes) -> dict:
        try:
            message = _decoded(line.decode())
        except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
            raise ProtocolError("message is not JSON") from None
        if type(message) is not dict:
            raise ProtocolError("message is not an object")
        with self._state:
            if "rf" in message:
                self._told(message["rf"])
            self._incoming(message)
            rel = message.get("rel")
            if rel is not None:
                self._let_go(rel)
        return message

    def apply_shares(self, message: dict) -> None:
        """Containers the other side changed: refilled in place (before the body, in the
        order it was encoded)."""
        updates = message.get("sh") or []
        if type(updates) is not list:
            raise ProtocolError("malformed shared update")
        for entry in updates:
            if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not int:
                raise ProtocolError("malformed shared update")
            known = self.shares.entries.get(entry[0])
            if known is None:
                continue  # let go of here meanwhile
            self.shares.refill(entry[0], self._rebuilt(known[2], entry[1]))

    def apply_drops(self, message: dict) -> None:
        """Containers the other side let go of (a request's before it is performed, a
        reply's after its body is read)."""
        for key in message.get("drop") or []:
            if type(key) is not int:
                raise ProtocolError("malformed drop")
            self.shares.drop(key)

    def _receive(self) -> dict:
        return self.parse(self._read_line())

    def _read_line(self) -> bytes:
        """The next message line. The pipe is read without blocking for a few dozen
        microseconds first, yielding the core between reads: a reply usually comes that
        fast, and waking a process blocked on another idle core costs more than the whole
        call (about 50 us against 3; the 20,000-calls benchmark). Not on a busy machine
        (`_read`): there a yield gives the core away for a time slice."""
        buf = self._buf
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end >= 0:
                line = bytes(buf[:end])
                del buf[: end + 1]
                return line
            if len(buf) > MAX_MESSAGE:
                raise ProtocolError("message too long")
            start = len(buf)
            buf += self._read()

    def _read(self) -> bytes:
        fd = self._rfd
        if self._busy:
            self._busy -= 1
        for _ in range(0 if self._busy else SPIN_READS):
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                before = time.monotonic_ns()
                os.sched_yield()  # the other end may be waiting for this very core
                if time.monotonic_ns() - before > BUSY_YIELD_NS:
                    # Another process had the core: yielding it gives it away for a whole
                    # time slice, while a blocked reader is woken as soon as the reply
                    # comes. On a busy machine the next reads block at once.
                    self._busy = BUSY_READS
                    break
                continue
            if not data:
                raise RemoteGone("the other process closed the connection")
            return data
        while True:
            select.select([fd], [], [])
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not data:
                raise RemoteGone("the other process closed the connection")
            return data

    def _outgoing(self, message: dict) -> None:
        """Add what rides along with every message from this end."""

    def _sent_body(self, message: dict) -> None:
        """Add what rides along once the body is encoded and let go of."""

    def _finish(self, message: dict) -> None:
        """Add what the body's encoding brought about (plain data only): containers
        nobody here holds any more stop being kept in step (after their last change
        went with this message)."""
        if self.shares.entries:
            dropped = self.shares.unused()
            if dropped:
                message["drop"] = dropped

    def _incoming(self, message: dict) -> None:
        """Apply what rode along with a message from the other end."""

    def request(self, op: str, obj=None, name=None, args=(), kwargs=None):
        """Send one request and serve the other side's requests until its answer."""
        __tracebackhide__ = True  # pytest shows the test's line, not the wire's
        args = list(args)
        kwargs = kwargs or {}
        self.steps += 1
        mutable = self.mutable_args(args, kwargs) if op in CALLS or op in STORES else []
        message: dict = {"op": op}
        if obj is not None:
            message["obj"] = obj
        if name is not None:
            message["name"] = name
        body = {}
        if args:
            body["args"] = args
        if kwargs:
            body["kwargs"] = kwargs
        if threading.get_ident() != self._main and self._side is not None:
            reply = self._side.request(message, body)
        else:
            self._send(message, **body)
            while True:
                reply = self._receive()
                if "op" in reply:
                    self.serve(reply)
                    continue
                break
        try:
            return self._answer(reply, mutable)
        except ProtocolError as exc:  # a reply this end cannot read: the wire's limit, noted
            self.refuse(f"a reply the wire could not read ({text_of(exc)})")
            raise

    def _answer(self, reply: dict, mutable: list):
        __tracebackhide__ = True
        if ("ok" in reply) == ("err" in reply):
            raise ProtocolError("malformed reply")
        if mutable:  # a container kept in step may hold an argument too (`setdefault`)
            self._tls.mutable = mutable
        try:
            if "sh" in reply:
                self.apply_shares(reply)
            value = self.decode(reply["ok"]) if "ok" in reply else self._error(reply["err"])
            if mutable and "back" in reply:
                self._copy_back(mutable, reply["back"])
                if "keep" in reply:
                    self._kept(mutable, reply["keep"])
        finally:
            if mutable:
                self._tls.mutable = None
        if "drop" in reply:
            self.apply_drops(reply)
        if "err" in reply:
            try:
                raise value
            finally:  # no cycle through this frame: a caught error goes when dropped
                value = None
        return value

    def mutable_args(self, args, kwargs) -> list:
        """The arguments a call may change in place, in the order both sides list them
        (containers already kept in step are not among them)."""
        found = []
        for value in (*args, *kwargs.values()):
            if mutable_name(type(value)) and id(value) not in self.shares.ids:
                found.append(value)
        return found

    def _copy_back(self, originals: list, data) -> None:
        """Arguments travel by value; a container the other side changed in place is
        changed here too (the containers nested in it kept, refilled in place)."""
        states = self.decode(data)
        if type(states) is not list or len(states) != len(originals):
            raise ProtocolError("malformed argument states")
        for original, state in zip(originals, states, strict=True):
            if type(state) is not type(original):
                raise ProtocolError("argument state of another type")
            merge(original, state, self.shares.ids)

    def _kept(self, originals: list, keep) -> None:
        """Arguments the other side kept a hold of: kept in step from now on."""
        if keep is None:
            return
        if type(keep) is not list:
            raise ProtocolError("malformed kept arguments")
        for entry in keep:
            if type(entry) is not list or len(entry) != 2:
                raise ProtocolError("malformed kept arguments")
            index, key = entry
            if type(index) is not int or not 0 <= index < len(originals) or type(key) is not int:
                raise ProtocolError("malformed kept arguments")
            obj = originals[index]
            self.shares.add(key, obj, mutable_name(type(obj)))

    def set_main(self) -> None:
        """Make the calling thread this end's main one (the one the main pipes serve)."""
        self._main = threading.get_ident()

    def serve_forever(self) -> None:
        """Answer requests until the other side closes the connection."""
        while True:
            try:
                message = self._receive()
            except RemoteGone:
                return
            if "op" not in message:
                raise ProtocolError("expected a request")
            self.serve(message)

    def serve(self, message: dict) -> None:
        """Perform one request of the other side's and send the reply (with the states of
        the containers it was handed, changed or not, whatever happened)."""
        received: list = []
        reply: dict = {}
        try:
            if "sh" in message:
                self.apply_shares(message)
            # Before the body is performed: what the request's caller let go of is no
            # longer known there, so the reply may not name it without its contents (a
            # module's set read, dropped there, then read again).
            if "drop" in message:
                self.apply_drops(message)
            body = {"ok": self._perform(message, received)}
            keep = self._settle(body["ok"], received)
            if keep:
                reply["keep"] = keep
        except BaseException as exc:  # everything the code raised goes back as data
            body = {"err": exc}
        if not received:  # (the body itself: emptied as it is encoded)
            self._write(reply, body)
            return
        body["back"] = received
        self._tls.args = {id(v): i for i, v in enumerate(received)}
        self._answering += 1
        try:
            self._write(reply, body)
        finally:
            self._answering -= 1
            self._tls.args = None

    def _settle(self, result, received: list) -> list:
        """After a call: a container the result is, that lives on here (held by anything
        but this call: a module's list, an object's attribute, a cached result), is kept
        in step with the other side's copy; so is an argument this side kept a hold of
        ([index, key] of each, for the reply)."""
        if not received and type(result) in _PLAIN:
            return []
        # references: serve's and this frame's names, getrefcount's argument
        if (
            mutable_name(type(result))
            and sys.getrefcount(result) > 3
            and not any(result is r for r in received)
            and _small(result)
        ):
            self.shares.start(result)
        keep = []
        for i in range(len(received)):
            obj = received[i]
            # held here: by `received` (once per place in it), and, when it is the
            # result, by this frame's `result` and serve's reply; then this loop's name
            # and getrefcount's argument
            held = 2 * (result is obj) + len([r for r in received if r is obj])
            if sys.getrefcount(obj) > held + 2 and _small(obj):
                keep.append([i, self.shares.start(obj)])
        return keep

    def _arguments(self, message: dict) -> tuple[list, dict]:
        args = self.decode(message.get("args", []))
        raw = message.get("kwargs", {})
        if type(args) is not list or type(raw) is not dict:
            raise ProtocolError("malformed arguments")
        kwargs = {k: self.decode(v) for k, v in raw.items()}
        return args, kwargs

    def _target(self, message: dict):
        ident = message.get("obj")
        if type(ident) is not int or ident not in self._objects:
            raise ProtocolError("unknown object")
        return self._objects[ident]

    def _perform(self, message: dict, received: list):
        raise NotImplementedError

    # -- errors ------------------------------------------------------------------------

    def _error_data(self, exc: BaseException) -> dict:
        data = {"s": text_of(exc)}
        try:
            data["x"] = self.encode(exc)
        except Exception:
            data["x"] = None
        return data

    def _refusal(self, exc: BaseException, what: str) -> dict:
        """The error of an answer this end could not give as one process would: its
        value could not be written (what writing it raised: the wire's own signal, a
        library's error while its object was read), or the wire's own error met by the
        code that answered (`WIRE_ERRORS`). That is no error of that code's: in one
        process nothing would have raised. So it never crosses as the answer's
        exception: it is noted as the wire's refusal (the case disputed, never failed),
        which the other end raises, `Unsupported`."""
        if isinstance(exc, Unsupported):  # a refusal: noted where it was made
            what = text_of(exc)
        else:
            self.refuse(what)
        return {"s": what, "u": 1}

    def _told(self, refused) -> None:
        """The refusals the worker tells: noted (by the judge; the judge tells none)."""
        if type(refused) is not list:
            raise ProtocolError("malformed refusals")
        for what in refused[:50]:
            self.refuse(what[:1000] if type(what) is str else "a refusal")

    def _error(self, data) -> BaseException:
        if type(data) is not dict:
            return ProtocolError("malformed error")
        text = data.get("s") if type(data.get("s")) is str else ""
        if data.get("u") == 1:  # the other end could not give its answer (noted)
            return Unsupported(text)
        try:
            exc = self.decode(data.get("x"))
        except ProtocolError:
            exc = None
        if not isinstance(exc, BaseException):
            return self.uncarried_error(text)
        return exc

    def uncarried_error(self, text: str) -> BaseException:
        """An exception the other side could not send as itself."""
        return RuntimeError(text)


def _named(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {text_of(exc)}"


# json's C encoder and scanner, made once and called directly: `json.dumps` builds a new
# encoder per message, `JSONEncoder.encode` a new C one, `JSONDecoder.decode` matches
# whitespace around a message the wire never writes (the wire writes compact ASCII JSON,
# no cycle: each message is a tree of fresh lists and dicts).
_C_ENCODE = c_make_encoder(
    None, json.JSONEncoder().default, encode_basestring_ascii, None, ":", ",", False, False, True
)
_SCAN = c_make_scanner(json.JSONDecoder())


def _encoded(message: dict) -> str:
    return "".join(_C_ENCODE(message, 0))


def _decoded(text: str):
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("extra data after a message")
    return value


CALLS = frozenset({"call", "method", "special", "umethod"})  # requests whose args may change
# Requests that store their value in an object: a container stored so is one object on
# both sides from then on (the other side keeps it: `_settle`), as in one process.
STORES = frozenset({"setattr", "own", "patch"})


def _small(obj) -> bool:
    try:
        return len(obj) <= MAX_SHARED_ITEMS
    except TypeError:
        return True


_PLAIN = frozenset({type(None), bool, int, float, str, bytes})
_PLAIN_FIELDS = frozenset({"ok", "args"})  # fields encoded as plain values
