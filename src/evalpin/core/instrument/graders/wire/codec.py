"""The tagged-JSON codec both ends share: identity maps (what each side gave an id,
what it holds a stand-in for, what it let go of), the wire form of every value, and
containers kept in step (`shares`). Each end decides what it exports (`_export`) and how
it rebuilds the other side's objects (`_decode_remote`)."""

from __future__ import annotations

import base64
import itertools
import math
import threading

from . import exceptions, named, protocol, stdlib
from .crossed import Crossed
from .plain import BIG, HEX, SCALAR_TYPES, lists_of_scalars, plain_form
from .plain import form as container_form
from .protocol import MAX_DEPTH, SCALARS, ProtocolError, Unsupported, pairs
from .shares import Shares, container_base, fingerprint, merge
from .values import (
    BY_REFERENCE,
    REFILL,
    VALUE_NAMES,
    VALUES,
    decode_value,
    encode_value,
    value_class,
    value_name,
)


class Codec:
    """The identity maps and value codec of one end."""

    def __init__(self, main_thread: int) -> None:
        self._main = main_thread
        self._objects: dict[int, object] = {}  # ids we gave out -> our objects
        self._ids: dict[int, int] = {}  # id(our object) -> the id we gave it
        self._remote: dict[int, object] = {}  # the other side's ids -> our stand-ins
        self._sent: dict[int, int] = {}  # id -> how often we sent it (for releases)
        self._received: dict[int, int] = {}  # their id -> how often we got it
        self._released: list = []  # [their id, times got] of stand-ins gone here
        self._counter = itertools.count(1)
        self._introduced: set[int] = set()  # ids described on the main channel
        self._introduced_shares: set[int] = set()  # shared containers sent there
        self._tls = threading.local()
        self._answering = 0  # threads encoding a reply to a call with containers
        self._state = threading.RLock()
        self.shares = Shares()
        self.refused: list[str] = []  # the worker's refusals, not yet told to the judge
        self.crossed = Crossed(odd=self.inert_names)  # the worker's keys odd, the judge's even

    # -- identity --------------------------------------------------------------------

    def give(self, value) -> int:
        ident = next(self._counter)
        self._objects[ident] = value
        self._ids[id(value)] = ident
        return ident

    def known(self, ident: int) -> bool:
        """Whether the other side has this id's description on this channel (and, from
        now on, that it has): the side channel always describes again."""
        if threading.get_ident() != self._main:
            return False
        if ident in self._introduced:
            return True
        self._introduced.add(ident)
        return False

    def _known_share(self, key: int) -> bool:
        """Whether the other side has this container's contents already: the side
        channel always sends them again."""
        if threading.get_ident() != self._main:
            return False
        if key in self._introduced_shares:
            return True
        self._introduced_shares.add(key)
        return False

    def release(self, ident: int) -> None:
        """A stand-in of the other side's object is gone here: let it go there too."""
        self._released.append([ident, self._received.get(ident, 0)])

    def _let_go(self, entries) -> None:
        """The other side let go of our objects: drop those not sent again since."""
        if type(entries) is not list:
            raise ProtocolError("malformed release")
        for entry in entries:
            if type(entry) is not list or len(entry) != 2:
                raise ProtocolError("malformed release")
            ident, times = entry
            if type(ident) is int and ident in self._objects and self._sent.get(ident) == times:
                obj = self._objects.pop(ident)
                if self._ids.get(id(obj)) == ident:
                    del self._ids[id(obj)]
                self._sent.pop(ident, None)
                self._introduced.discard(ident)

    # -- encoding ----------------------------------------------------------------------

    def encode(self, value, depth: int = 0, copy: bool = False):
        """The wire form of `value` (`copy`: of its contents, even when it is a container
        kept in step or an argument of the call being answered)."""
        kind = type(value)
        if kind in SCALARS:
            if kind is str:
                return self.keyed_str(value) if value else value
            if kind is float and not math.isfinite(value):
                return {"t": "float", "v": repr(value)}
            if kind is int and not -BIG < value < BIG:  # past JSON's decimal digits
                return {"t": "int", "v": format(value, "x")}
            return value
        if depth > MAX_DEPTH:
            self.unsupported("a value nested deeper than the wire carries")
        e = lambda v: self.encode(v, depth + 1)  # noqa: E731
        if not copy:
            # A container of the call being answered is the other side's own object,
            # even when this side keeps it in step from this call on (its key goes with
            # the reply's `keep`): never introduced as a second object under that key.
            if self._answering:
                arg = getattr(self._tls, "args", None)
                if arg and id(value) in arg:
                    return {"t": "arg", "v": arg[id(value)]}
            if self.shares.ids and id(value) in self.shares.ids:
                shared = self._shared_form(value, e)
                if shared is not None:
                    return shared
        if kind is list or kind is dict or kind is set:
            return self._container(value, kind, e)
        if kind is tuple:
            if SCALAR_TYPES.issuperset(map(type, value)):
                return self._keyed({"t": "tuple", "v": [e(v) for v in value]}, value)
            return self._keyed(self._tuple(value, e), value)
        if kind is frozenset:
            return self._keyed({"t": "frozenset", "v": [e(v) for v in value]}, value)
        if kind is bytes:
            return self._keyed({"t": "bytes", "v": base64.b64encode(value).decode("ascii")}, value)
        name = VALUE_NAMES.get(kind) or value_name(kind)
        if name is not None:
            form = encode_value(name, value, e)
            if form is not BY_REFERENCE:
                return {"t": "val", "n": name, "v": form}
        if value is NotImplemented:
            return {"t": "notimpl", "v": 0}
        if value is Ellipsis:
            return {"t": "ellipsis", "v": 0}
        if isinstance(value, type) and stdlib.BUILTIN_TYPES.get(value.__name__) is value:
            return {"t": "type", "v": value.__name__}
        if isinstance(value, type) and value_name(value) is not None:
            return {"t": "stype", "v": value_name(value)}
        back = self._back(value)  # first: one of the other side's, even if we gave it an id
        if back is not None:
            return back
        named = stdlib.by_name(value, inert_only=self.inert_names)
        if named is not None:
            return named
        ident = self._ids.get(id(value))
        if (
            ident is not None
            and self._objects.get(ident) is value
            and self.stable(value)
            and self.known(ident)
        ):
            form = {"t": "r", "v": ident}
        else:
            form = self._export(value, e)
        claim = stdlib.function_name(value) if self.inert_names else None
        return form if claim is None else {"t": "sfp", "v": claim[0], "n": claim[1], "p": form}

    def _container(self, value, kind: type, e):
        """A list, dict or set by value, its identity kept within the value it is part
        of: met again (`[row, row]`, a dict that holds itself), it is `{"t": "same"}` of
        a number its first wire form is marked with (only such ones are marked)."""
        memo = self._tls.__dict__.get("memo")
        if memo is None:
            # scalars, or containers of scalars each there once (a call's usual
            # arguments): nothing in it is met again, so no table of what was met
            form = plain_form(value, kind, self._encoded_apart(), self.keyed_str)
            if form is not None:
                return form
        root = memo is None
        if root:
            memo = self._tls.memo = {}
        else:
            seen = memo.get(id(value))
            if seen is not None:
                return {"t": "same", "v": _mark(seen, memo)}
        entry = memo[id(value)] = [value, None, None]  # the object, its wire form, its mark
        try:
            out = entry[1] = container_form(value, kind, e)
            if entry[2] is not None:  # met again inside itself
                _label(out, entry[2])
            return out
        finally:
            if root:
                self._tls.memo = None

    def _tuple(self, value: tuple, e) -> dict:
        """A tuple that holds containers, its identity kept within the value as a
        container's is; met again inside its own items (a cycle through a dict it
        holds), it is written there whole, and here as its items then that one (`s`),
        as pickle does: one tuple on the other side too."""
        memo = self._tls.__dict__.get("memo")
        root = memo is None
        if root:
            memo = self._tls.memo = {}
        try:
            entry = memo.get(id(value))
            if entry is not None and entry[1] is not None:
                return {"t": "same", "v": _mark(entry, memo)}
            if entry is None:
                entry = memo[id(value)] = [value, None, None]
            out = {"t": "tuple", "v": [e(v) for v in value]}
            if entry[1] is not None:  # made inside its own items: this one is that one
                out["s"] = _mark(entry, memo)
                return out
            entry[1] = out
            if entry[2] is not None:
                _label(out, entry[2])
            return out
        finally:
            if root:
                self._tls.memo = None

    def keyed_str(self, value: str):
        """A str's wire form, with its key (`crossed`): one object when it comes back."""
        key = self.crossed.key(value)
        return value if key is None else {"t": "s", "v": value, "i": key}

    def _keyed(self, form: dict, value) -> dict:
        """A tuple's, frozenset's or bytes' wire form, with its key (`crossed`)."""
        if value and form["t"] != "same" and "s" not in form:  # (met again: the one met)
            key = self.crossed.key(value)
            if key is not None:
                form["i"] = key
        return form

    def _encoded_apart(self) -> tuple:
        """The tables of containers that never cross as plain data (kept in step, or an
        argument of the call being answered), by id: those in use now."""
        apart = ()
        if self._answering:
            args = getattr(self._tls, "args", None)
            if args:
                apart = (args,)
        if self.shares.ids:
            apart = (*apart, self.shares.ids)
        return apart

    inert_names = False  # the candidate's side names only inert stdlib objects

    def stable(self, value) -> bool:
        """Whether a given object is referred to by id once described (classes)."""
        return isinstance(value, type)

    def _shared_form(self, value, e) -> dict | None:
        """A container kept in step: by its key, with its contents where the other side
        has not got them. None for one this side began keeping whose contents do not
        cross by value (a candidate's array of dates a library holds): it is not kept
        after all, and crosses by reference (the other side never had it)."""
        key = self.shares.ids[id(value)]
        data = {"t": "sh", "v": key}
        inside = self._tls.__dict__.get("sharing")
        if inside is not None and key in inside:
            return data  # met again within the value being written: by its key
        if self.introduce_shares or not self._known_share(key):
            contents = self.contents(value, e)
            if contents is BY_REFERENCE:
                self.not_kept(key, value)
                return None
            data["k"] = self.shares.entries[key][2]
            data["x"] = contents
        return data

    introduce_shares = False  # the judge always sends a shared container's contents

    def not_kept(self, key: int, value) -> None:
        """A container kept in step whose contents do not cross by value (an array of
        objects a library holds, returned by its method): one this side began keeping
        and never sent is let go of, to cross by reference (the other side never had
        it); one the other side holds a copy of cannot be kept in step: refused."""
        if key in self.shares.unsent:
            self.shares.drop(key)
            self._introduced_shares.discard(key)
            return
        self.unsupported(f"a {type(value).__name__} kept in step that no longer crosses by value")

    def contents(self, value, e=None):
        """A mutable container's contents, as the wire form of a copy of it: one value,
        so what its items share (a linked list's links, rows met twice) stays shared.
        Each container kept in step is written out once in it (then by its key).
        BY_REFERENCE for a value kind's object that does not cross by value."""
        tls = self._tls.__dict__
        key = self.shares.ids.get(id(value))
        if tls.get("sharing") is not None:
            if key is not None:
                tls["sharing"].add(key)
            return self._contents(value, e or self.encode)
        tls["sharing"] = {key}
        memo, tls["memo"] = tls.get("memo"), tls.get("memo") or {}
        try:
            form = self._contents(value, e or self.encode)
        finally:
            tls["sharing"] = None
            tls["memo"] = memo
        if form is not BY_REFERENCE:
            self.shares.unsent.discard(key)
        return form

    def _contents(self, value, e):
        kind = type(value)
        name = value_name(kind)
        if name is not None:
            return encode_value(name, value, e)
        base = container_base(kind)  # its storage, read with the builtin's own methods
        if base is list:
            items = list.copy(value)
            self._nest(items)
            return [e(v) for v in items]
        if base is dict:
            pairs = list(dict.items(value))
            self._nest([v for _, v in pairs])
            return [[e(k), e(v)] for k, v in pairs]
        return [e(v) for v in set.copy(value)]

    def _nest(self, items: list) -> None:
        """The lists and dicts a container kept in step holds are kept in step too, each
        under its own key (up to half the cap of them): the other side knows each by its
        identity, not its place (a linked list's links move; a row sorted elsewhere)."""
        shares, most = self.shares, protocol.MAX_SHARED_ITEMS
        for v in items:
            if (type(v) is list or type(v) is dict) and id(v) not in shares.ids:
                if len(shares.entries) >= protocol.MAX_SHARED // 2 or len(v) > most:
                    return
                shares.start(v)

    def _rebuilt(self, name: str, contents):
        """A shared container's contents rebuilt: one value (`contents`)."""
        if self._tls.__dict__.get("marks") is not None:
            return self._rebuilt_in(name, contents)
        self.shares.fresh.clear()  # (those of contents read before: refilled already)
        self._tls.marks = {}
        try:
            return self._rebuilt_in(name, contents)
        finally:
            self._tls.marks = None

    def _rebuilt_in(self, name: str, contents):
        d = self.decode
        if name == "list":
            if type(contents) is not list:
                raise ProtocolError("malformed list")
            return [d(v) for v in contents]
        if name == "dict":
            return dict(pairs(contents, d))
        if name == "set":
            if type(contents) is not list:
                raise ProtocolError("malformed set")
            return {d(v) for v in contents}
        if name not in VALUES or name not in REFILL:
            raise ProtocolError("not a shared kind")
        return decode_value(name, contents, d)

    quiet = False  # while trying what may cross unasked (`tracebacks.handled`): no notes

    def unsupported(self, what: str):
        """Refuse an operation the wire cannot carry, noted (`refuse`): the witness's
        grade becomes sandbox_error:unsupported, the case disputed, `witness:unsupported`,
        never a failure of the candidate's."""
        if not self.quiet:
            self.refuse(what)
        raise Unsupported(f"{what}: not supported under isolation: process")

    def refuse(self, what: str, kind: str = "unsupported") -> None:
        """Note what the wire cannot carry. The worker's end tells the judge, with the
        message it writes next (`peer.line`), which notes it: whatever the code that met
        the refusal does with it then (a library's `except TypeError` swallows it)."""
        if len(self.refused) < 50:
            self.refused.append(what[:1000])

    def _exception_came(self, exc: BaseException, data: dict) -> BaseException:
        """A builtin or stdlib exception that came by value (the worker notes the tests'
        own, to hand back as themselves)."""
        return exc

    def _back(self, value):
        """The wire form of one of the other side's objects we hold a stand-in for."""
        raise NotImplementedError

    def _export(self, value, e):
        raise NotImplementedError

    def decode(self, data, depth: int = 0):
        """Rebuild a value from its wire form; anything unexpected is a ProtocolError."""
        kind = type(data)
        if kind in SCALARS:
            return data
        if depth > MAX_DEPTH * 2:
            raise ProtocolError("nested too deeply")
        if kind is list:  # scalars and keyed strings (no mark, no container): one pass
            fast = self.crossed.items(data)
            if fast is not None:
                return fast
        if kind is list and not depth and lists_of_scalars(data):  # (a call's arguments)
            return [list(v) if type(v) is list else v for v in data]
        if not depth and self._tls.__dict__.get("marks") is None:  # a value's root
            self._tls.marks = {}  # the containers marked in it (`_container`)
            try:
                return self.decode(data, 1)
            finally:
                self._tls.marks = None
        d = lambda v: self.decode(v, depth + 1)  # noqa: E731
        if kind is list:
            if data and type(data[0]) is dict and data[0].get("t") == "id":
                return self._same(data[0].get("v"), [], lambda out: out.extend(map(d, data[1:])))
            return [d(v) for v in data]
        if kind is not dict or "t" not in data or "v" not in data:
            raise ProtocolError("malformed value")
        tag, v = data["t"], data["v"]
        if tag == "s" and type(v) is str:
            return self.crossed.came(data.get("i"), v)
        if tag in _KEYED and "i" in data:
            return self.crossed.came(data["i"], self._decoded(tag, v, data, d))
        return self._decoded(tag, v, data, d)

    def _decoded(self, tag: str, v, data: dict, d):
        try:
            if tag == "tuple" and type(v) is list:
                return self._tuple_of(data, tuple(d(x) for x in v))
            if tag == "dict" and type(v) is list:
                if "k" in data:
                    return self._same(data["k"], {}, lambda out: out.update(pairs(v, d)))
                plain = self.crossed.items([x for p in pairs(v, _raw) for x in p])
                return dict(pairs(v, d)) if plain is None else _paired(plain)
            if tag == "set" and type(v) is list and "k" in data:
                return self._same(data["k"], set(), lambda out: out.update(map(d, v)))
            if tag in ("set", "frozenset") and type(v) is list:
                return (set if tag == "set" else frozenset)(d(x) for x in v)
            if tag == "same" and type(v) is int:
                found = self._tls.__dict__["marks"].get(v)
                if found is None:
                    raise ProtocolError("a container met again before it was met")
                return found
            if tag == "bytes" and type(v) is str:
                return base64.b64decode(v.encode("ascii"), validate=True)
            if tag == "float" and v in ("nan", "inf", "-inf"):
                return float(v)
            if tag == "int" and type(v) is str and HEX.fullmatch(v):
                return int(v, 16)  # (a power-of-two base: no limit on its digits)
            if tag == "val" and data.get("n") in VALUES:
                return decode_value(data["n"], v, d)
            if tag == "notimpl":
                return NotImplemented
            if tag == "ellipsis":
                return Ellipsis
            if tag == "vm" and type(v) is str:
                return stdlib.value_method(d(data.get("o")), v)
            if tag == "type" and v in stdlib.BUILTIN_TYPES:
                return stdlib.BUILTIN_TYPES[v]
            if tag == "stype" and v in VALUES:
                return value_class(v)
            if tag == "b" and type(v) is int and v in self._objects:
                return self._objects[v]
            if tag in ("bx", "sx") and type(v) is str:
                return self._exception_came(exceptions.decode(tag, data, d, self.importer), data)
            if tag == "sfp" and self.inert_names is False:  # the candidate's `os.popen`
                return named.came(data, d, self.importer)
            if tag in ("mod", "sfn", "sen", "logger"):
                return stdlib.resolve(tag, data, self.importer, strict=self.inert_names is False)
            if tag == "r" and type(v) is int and v in self._remote:
                return self._remote[v]
            if tag == "sh" and type(v) is int:
                return self._decode_shared(v, data)
            if tag == "arg" and type(v) is int:
                mutable = getattr(self._tls, "mutable", None)
                if mutable is None or not 0 <= v < len(mutable):
                    raise ProtocolError("no such argument")
                return mutable[v]
        except ProtocolError:
            raise
        except (
            TypeError,
            ValueError,
            IndexError,
            KeyError,
            OverflowError,
            ArithmeticError,
            ImportError,
        ):
            raise ProtocolError(f"malformed {tag!r} value") from None
        return self._decode_remote(tag, data, d)

    def _same(self, mark, out, fill):
        """A container marked as met again in the value being read: known by its mark
        before its contents are read (so they may hold it), then filled."""
        marks = self._tls.__dict__.get("marks")
        if type(mark) is not int or marks is None or mark in marks:
            raise ProtocolError("malformed mark")
        marks[mark] = out
        fill(out)
        return out

    def _tuple_of(self, data: dict, made: tuple):
        """A tuple read: marked (met again later in the value), or the one its items made
        (or the one that crossed before with the same key and items: `crossed`)."""
        if "i" in data:
            made = self.crossed.came(data["i"], made)
        if "k" not in data and "s" not in data:
            return made
        marks = self._tls.__dict__.get("marks")
        if "s" in data:
            found = marks.get(data["s"]) if type(data["s"]) is int else None
            if type(found) is not tuple:
                raise ProtocolError("malformed mark")
            return found
        if type(data["k"]) is not int or data["k"] in marks:
            raise ProtocolError("malformed mark")
        marks[data["k"]] = made
        return made

    def importer(self, name: str):
        """How this end imports a standard-library module a message names."""
        import importlib

        return importlib.import_module(name)

    def _decode_shared(self, key: int, data: dict):
        entry = self.shares.entries.get(key)
        if entry is None:
            # the judge knows every key of its own: the worker never introduces one
            if "x" not in data or (self.introduce_shares and self.shares.owns(key)):
                raise ProtocolError("unknown shared container")
            name = data.get("k")
            if type(name) is not str:
                raise ProtocolError("malformed shared container")
            self.shares.fresh.add(key)
            if name in _EMPTY:  # known by its key before its contents (which may hold it)
                obj = _EMPTY[name]()
                self.shares.add(key, obj, name)
                merge(obj, self._rebuilt(name, data["x"]), self.shares.ids)
                self.shares.entries[key][1] = fingerprint(obj, 0, self.shares.ids)
                return obj
            obj = self._rebuilt(name, data["x"])
            self.shares.add(key, obj, name)
            return obj
        if "x" in data:
            self.shares.refill(key, self._rebuilt(entry[2], data["x"]))
        return entry[0]

    def _decode_remote(self, tag: str, data: dict, d):
        raise ProtocolError(f"unknown value tag {tag!r}")


_EMPTY = {"list": list, "dict": dict, "set": set}


def _raw(value):
    return value


def _paired(items: list) -> dict:
    return dict(zip(items[::2], items[1::2], strict=True))


_KEYED = frozenset({"frozenset", "bytes"})  # (a tuple's key: `_tuple_of`)


def _mark(entry: list, memo: dict) -> int:
    """The mark of a container met again (given now, and put on its first wire form
    when that is made already)."""
    if entry[2] is None:
        entry[2] = memo["#"] = memo.get("#", 0) + 1
        if entry[1] is not None:
            _label(entry[1], entry[2])
    return entry[2]


def _label(out, mark: int) -> None:
    if type(out) is list:
        out.insert(0, {"t": "id", "v": mark})
    else:
        out["k"] = mark
