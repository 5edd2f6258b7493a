"""numpy's values by value (issue 42): its scalars and its plain arrays cross as their
dtype and bytes, rebuilt by the receiver's own numpy, so `assert np.int64(3) == 3` and
`np.array_equal(got, want)` hold under the witness as they do in one process. Nothing
here imports numpy: a value of it arrives only where numpy is already loaded. An array of
objects, of a structured dtype, a subclass or one over the size below crosses as any
object does (by reference), never as a fail."""

from __future__ import annotations

import base64
import re

from .protocol import ByReference, ProtocolError, ints, string

MAX_ARRAY_BYTES = 8 * 1024 * 1024  # bigger arrays cross by reference
# A plain dtype's `str`: byte order, kind, size and, for dates and durations, the unit.
_DTYPE = re.compile(r"[<>|=][biufcMm]\d{1,2}(\[\d{0,3}[A-Za-z]{1,2}\])?")
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


def _dtype(text):
    import numpy

    if type(text) is not str or not _DTYPE.fullmatch(text):
        raise ProtocolError("not a plain numpy dtype")
    return numpy.dtype(text)


def _plain(dtype) -> bool:
    return dtype.names is None and not dtype.hasobject and _DTYPE.fullmatch(dtype.str) is not None


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
    if not _plain(v.dtype) or v.nbytes > MAX_ARRAY_BYTES:
        raise ByReference
    return [v.dtype.str, list(v.shape), _b64(v.tobytes()), bool(v.flags.writeable)]


def _unarray(p, d, c):
    import numpy

    if type(p) is not list or len(p) != 4 or type(p[1]) is not list or type(p[3]) is not bool:
        raise ProtocolError("malformed numpy array")
    dtype, shape, data = _dtype(p[0]), ints(p[1], len(p[1])), _unb64(p[2])
    if any(n < 0 for n in shape) or len(shape) > 32:
        raise ProtocolError("a numpy array of an impossible shape")
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize != len(data):
        raise ProtocolError("a numpy array whose bytes do not fill its shape")
    made = numpy.frombuffer(data, dtype).reshape(shape).copy()
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
