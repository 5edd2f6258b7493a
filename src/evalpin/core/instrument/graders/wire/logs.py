"""The candidate's log records and warnings, seen by the test as in-process: the worker
keeps each record as data (message and arguments, `extra=` fields, the exception, the
level changes the candidate makes to its loggers) and the judge re-emits it through the
test's own loggers and warning filters (caplog, pytest.warns, -W error). Also the bytes
it writes that are no text, written to the test's streams as bytes."""

from __future__ import annotations

from .protocol import ProtocolError

# Everything a LogRecord has of its own; anything else on a record came with `extra=`.
_STANDARD = frozenset(
    [
        "name",
        "msg",
        "args",
        "levelname",
        "levelno",
        "pathname",
        "filename",
        "module",
        "exc_info",
        "exc_text",
        "stack_info",
        "lineno",
        "funcName",
        "created",
        "msecs",
        "relativeCreated",
        "thread",
        "threadName",
        "processName",
        "process",
        "message",
        "asctime",
        "taskName",
    ]
)


class LogForwarder:
    """A logging handler (duck-typed: `logging` is imported only when the candidate
    does) that keeps each record as data for the test's own loggers."""

    def __init__(self, events: list) -> None:
        self._events = events
        self.level = 0  # logging.NOTSET
        self.filters: list = []
        self.lock = None

    def handle(self, record) -> None:
        try:
            text = record.getMessage()
        except Exception as exc:
            text = f"{record.msg!r} (unformattable: {exc})"
        exc, exc_text = None, None
        if record.exc_info and record.exc_info[0] is not None:
            import traceback

            exc = record.exc_info[1]
            exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        extra = {k: v for k, v in vars(record).items() if k not in _STANDARD}
        msg = record.msg if type(record.msg) is str else None
        self._events.append(
            (
                "l",
                str(record.name),
                int(record.levelno),
                text,
                msg,
                record.args if msg is not None else None,
                str(record.pathname),
                int(record.lineno),
                str(record.funcName),
                exc,
                exc_text,
                record.stack_info if type(record.stack_info) is str else None,
                extra,
            )
        )


def encoded(peer, event: tuple) -> list:
    """An event's wire form (the worker's); a log record whose arguments do not cross
    goes as its text, the wire's own way round: what it refused on the way is not told."""
    told = len(peer.refused)
    try:
        return [peer.encode(x) for x in event]
    except Exception:
        if event[0] != "l":
            raise
        del peer.refused[told:]
        event = (*event[:4], None, None, *event[6:9], None, event[10], event[11], {})
        return [peer.encode(x) for x in event]


def follow_levels(logging, events: list) -> None:
    """Keep the level changes the candidate makes to its loggers (`setLevel`,
    `basicConfig(level=...)`) as events, in order with its records."""
    set_level = logging.Logger.setLevel

    def setLevel(self, level) -> None:
        set_level(self, level)
        events.append(("v", str(self.name), int(self.level)))

    logging.Logger.setLevel = setLevel


def replay(event: list) -> None:
    """Re-emit one event of the worker's here (its parts already decoded)."""
    import logging
    import warnings

    from .protocol import ProtocolError

    kind = event[0] if event else None
    if kind == "l" and len(event) == 13 and type(event[2]) is int:
        _, name, level, text, msg, args, path, lineno, func, exc, exc_text, stack, extra = event
        logger = logging.getLogger(str(name)) if name != "root" else logging.getLogger()
        if not logger.isEnabledFor(level):
            return
        if type(args) not in (tuple, dict) or msg is None:
            msg, args = str(text), None
        exc_info = (type(exc), exc, None) if isinstance(exc, BaseException) else None
        fields = {}
        if type(extra) is dict:  # data fields only: never one of the record's methods
            fields = {
                k: v
                for k, v in extra.items()
                if type(k) is str and k not in _STANDARD and not hasattr(logging.LogRecord, k)
            }
        record = logger.makeRecord(
            logger.name,
            level,
            str(path),
            int(lineno),
            msg,
            args or None,
            exc_info,
            str(func),
            fields,
            stack if type(stack) is str else None,
        )
        if exc_info is not None and type(exc_text) is str:
            record.exc_text = exc_text
        logger.handle(record)
    elif kind == "v" and len(event) == 3 and type(event[2]) is int:
        logger = logging.getLogger(str(event[1])) if event[1] != "root" else logging.getLogger()
        logger.setLevel(event[2])
    elif kind == "w" and len(event) == 5:
        _, text, category, path, lineno = event
        if not (isinstance(category, type) and issubclass(category, Warning)):
            category = UserWarning
        warnings.warn_explicit(str(text), category, str(path), int(lineno))
    else:
        raise ProtocolError("malformed event")


def write_output(message: dict) -> None:
    """What the candidate wrote to its stdout and stderr (a message's `o`, `e`, or as
    bytes `ob`, `eb`), written to the test's."""
    import sys

    for field, stream in (("o", sys.stdout), ("e", sys.stderr)):
        text = message.get(field)
        if type(text) is str and text:
            stream.write(text)
            stream.flush()
        if field + "b" in message:  # bytes that are no UTF-8 text, written as bytes
            write_bytes(stream, message[field + "b"])


def write_bytes(stream, data) -> None:
    """What the candidate wrote that is no UTF-8 text, as the bytes it wrote (a binary
    capture, `capsysbinary`/`capfdbinary`, sees them); a stream with no bytes below it
    gets them decoded as its encoding would replace them."""
    import base64

    if type(data) is not str:
        raise ProtocolError("malformed output")
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    stream.flush()
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(raw.decode("utf-8", "replace"))
    else:
        buffer.write(raw)
        buffer.flush()
    stream.flush()
