"""numpy's values by value (issue 42): its scalars and its plain arrays cross as their
dtype and bytes, rebuilt by the receiver's own numpy, so `assert np.int64(3) == 3` and
`np.array_equal(got, want)` hold under the witness as they do in one process. Nothing
here imports numpy: a value of it arrives only where numpy is already loaded. An array of
text or bytes of a fixed length, or of a structured dtype of such plain fields (a record
array's rows), crosses the same way. An array of objects (the dates a plot's line holds)
crosses as its shape and its items, each by its own rule, as a list's do. An array of
nested or titled fields or of objects among fields, a subclass or one over the sizes
below crosses as any object does (by reference), never as a fail."""

from __future__ import annotations

import base64
import re

from .protocol import ByReference, ProtocolError, ints, string

MAX_ARRAY_BYTES = 8 * 1024 * 1024  # bigger arrays cross by reference
MAX_OBJECT_ITEMS = 100_000  # so do arrays of more objects than this
_OBJECTS = "|O"  # an array of objects' dtype: its items cross each by its own rule
# A plain dtype's `str`: byte order, kind, size and, for dates and durations, the unit.
# Text and bytes of a fixed length too (`<U10`, `|S5`).
_DTYPE = re.compile(r"[<>|=]([biufcMm]\d{1,2}(\[\d{0,3}[A-Za-z]{1,2}\])?|[US]\d{1,7})")
_SCALARS = [
    "bool",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "longlong",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "ulonglong",
    "float16",
    "float32",
    "float64",
    "longdouble",
    "complex64",
    "complex128",
    "clongdouble",
    "datetime64",
    "timedelta64",
]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(payload) -> bytes:
    return base64.b64decode(string(payload).encode("ascii"), validate=True)


def _dtype(form):
    """A plain dtype from its `str`, or a structured one (a record array's) from its
    fields' names, plain dtypes and offsets, and its item size."""
    import numpy

    if type(form) is list and len(form) == 2 and type(form[0]) is list and type(form[1]) is int:
        fields = form[0]
        if not fields or any(type(f) is not list or len(f) != 3 for f in fields):
            raise ProtocolError("malformed structured dtype")
        names = [string(f[0]) for f in fields]
        offsets = ints([f[2] for f in fields], len(fields))
        if len(set(names)) != len(names) or not 0 < form[1] <= MAX_ARRAY_BYTES:
            raise ProtocolError("malformed structured dtype")
        formats = [_dtype(f[1]) for f in fields]
        spec = {"names": names, "formats": formats, "offsets": offsets, "itemsize": form[1]}
        return numpy.dtype(spec)
    if type(form) is not str or not _DTYPE.fullmatch(form):
        raise ProtocolError("not a plain numpy dtype")
    return numpy.dtype(form)


def _plain(dtype) -> bool:
    return dtype.names is None and not dtype.hasobject and _DTYPE.fullmatch(dtype.str) is not None


def _form(dtype):
    """A dtype's wire form (`_dtype`), or ByReference: one of objects, of nested or
    titled fields, or of any other kind."""
    if _plain(dtype):
        return dtype.str
    if dtype.names is None or dtype.hasobject:
        raise ByReference
    fields = []
    for name in dtype.names:
        entry = dtype.fields[name]
        if len(entry) != 2 or not _plain(entry[0]):
            raise ByReference
        fields.append([name, entry[0].str, entry[1]])
    return [fields, dtype.itemsize]


def _scalar(v, e) -> list:
    if not _plain(v.dtype):
        raise ByReference
    return [v.dtype.str, _b64(v.tobytes())]


def _unscalar(p, d, c):
    import numpy

    if type(p) is not list or len(p) != 2:
        raise ProtocolError("malformed numpy scalar")
    dtype, data = _dtype(p[0]), _unb64(p[1])
    if len(data) != dtype.itemsize:
        raise ProtocolError("a numpy scalar of the wrong size")
    got = numpy.frombuffer(data, dtype)[0]
    return got if type(got) is c else c(got)  # an alias (longlong) of the same dtype


def _array(v, e) -> list:
    if v.dtype.str == _OBJECTS:
        if v.size > MAX_OBJECT_ITEMS:
            raise ByReference
        items = v.ravel().tolist()  # (an object array's `tolist`: its items themselves)
        if _nests_objects(items, type(v)):
            raise ByReference
        return [_OBJECTS, list(v.shape), [e(x) for x in items], bool(v.flags.writeable)]
    if v.nbytes > MAX_ARRAY_BYTES:
        raise ByReference
    return [_form(v.dtype), list(v.shape), _b64(v.tobytes()), bool(v.flags.writeable)]


def _nests_objects(items: list, kind: type) -> bool:
    """Whether an array of objects stands among `items` or in the lists, tuples, dicts
    and sets they hold: it may hold the array being written (a cycle, which no value
    spells: the receiver makes an array after its items), so that one crosses by
    reference. Past 100,000 things looked at, taken to be so."""
    stack, looked = list(items), 0
    while stack:
        x = stack.pop()
        looked += 1
        if looked > MAX_OBJECT_ITEMS:
            return True
        if type(x) is kind and x.dtype.hasobject:
            return True
        if type(x) in (list, tuple, set, frozenset):
            stack.extend(x)
        elif type(x) is dict:
            stack.extend(x.values())
    return False


def _unarray(p, d, c):
    import numpy

    if type(p) is not list or len(p) != 4 or type(p[1]) is not list or type(p[3]) is not bool:
        raise ProtocolError("malformed numpy array")
    shape = ints(p[1], len(p[1]))
    if any(n < 0 for n in shape) or len(shape) > 32:
        raise ProtocolError("a numpy array of an impossible shape")
    count = 1
    for n in shape:
        count *= n
    if p[0] == _OBJECTS:
        return _unobjects(p, d, shape, count)
    dtype, data = _dtype(p[0]), _unb64(p[2])
    if count * dtype.itemsize != len(data):
        raise ProtocolError("a numpy array whose bytes do not fill its shape")
    made = numpy.frombuffer(data, dtype).reshape(shape).copy()
    made.flags.writeable = p[3]
    return made


def _unobjects(p, d, shape: list, count: int):
    """An array of objects: its items, each rebuilt by its own rule (a date by value, a
    candidate's object as its stand-in), set one by one (a list item stays one item)."""
    import numpy

    if type(p[2]) is not list or len(p[2]) != count or count > MAX_OBJECT_ITEMS:
        raise ProtocolError("a numpy array whose items do not fill its shape")
    made = numpy.empty(count, dtype=object)
    for i, item in enumerate(p[2]):
        made[i] = d(item)
    made = made.reshape(shape)
    made.flags.writeable = p[3]
    return made


def _refill_array(obj, new) -> None:
    """The candidate filled the test's array in place: the same, in the test's array."""
    import numpy

    if obj.shape == new.shape:
        numpy.copyto(obj, new, casting="unsafe")
    else:  # resized over there (`ndarray.resize`): the same here, where numpy allows
        obj.resize(new.shape, refcheck=False)
        numpy.copyto(obj, new, casting="unsafe")


def _text(v, e):
    return str(v)


VALUES: dict[str, tuple] = {
    **{f"numpy.{name}": ("numpy", name, _scalar, _unscalar) for name in _SCALARS},
    "numpy.str_": ("numpy", "str_", _text, lambda p, d, c: c(string(p))),
    "numpy.bytes_": ("numpy", "bytes_", lambda v, e: _b64(bytes(v)), lambda p, d, c: c(_unb64(p))),
    "numpy.ndarray": ("numpy", "ndarray", _array, _unarray),
}
REFILL = {"numpy.ndarray": _refill_array}
