"""The tables people test with, by value (issue 48): pandas' `DataFrame`, `Series` and
`Index` (and the `Timestamp` and `Timedelta` their records hold), and scipy's sparse
matrices, cross in a declared columnar form, never a pickle:
each column a numpy array of a plain dtype (`numeric`'s dtype and bytes) or, for pandas'
`object` and string columns, a list of values that cross by value themselves, with the
dtype's name; an index its range or its values and name; a sparse matrix its format,
shape and the numpy arrays it is made of. The receiver rebuilds each with its own
library (both ends run one interpreter, so one that the sender has loaded the receiver
can import). Nothing here imports a library to send: a value of it exists only where it
is loaded. Anything else of theirs (an extension or categorical dtype, a `MultiIndex`, a
subclass, an array past `numeric`'s size) crosses by reference, as any object does."""

from __future__ import annotations

import sys

from .numeric import MAX_ARRAY_BYTES
from .protocol import ByReference, ProtocolError, ints

# pandas dtypes whose columns cross as a list of their values.
_LISTED = frozenset({"object", "str", "string"})
_SPARSE = ("csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array", "coo_array")
# Wire name -> (module it is imported from, class name): matched by identity, exact types.
CLASSES = {
    "pandas.DataFrame": ("pandas", "DataFrame"),
    "pandas.Series": ("pandas", "Series"),
    "pandas.Index": ("pandas", "Index"),
    "pandas.RangeIndex": ("pandas", "RangeIndex"),
    "pandas.Timestamp": ("pandas", "Timestamp"),
    "pandas.Timedelta": ("pandas", "Timedelta"),
    **{f"scipy.{name}": ("scipy.sparse", name) for name in _SPARSE},
}


def name_of(kind: type) -> str | None:
    """The wire name of one of these classes, when its library is loaded here."""
    for name, (module, attr) in CLASSES.items():
        loaded = sys.modules.get(module)
        if loaded is not None and getattr(loaded, attr, None) is kind:
            return name
    return None


def _numpy():
    import numpy

    return numpy


def _column(values, e) -> list:
    """A column's values (a Series, an Index): [dtype name, list] or ["np", array]."""
    numpy = _numpy()
    dtype = values.dtype
    if isinstance(dtype, numpy.dtype) and dtype.kind in "biufcmM":
        array = values.to_numpy(copy=False)
        if array.nbytes > MAX_ARRAY_BYTES or type(array) is not numpy.ndarray:
            raise ByReference
        return ["np", e(array)]
    name = str(dtype)
    if name not in _LISTED:
        raise ByReference
    items = values.tolist()
    pandas = sys.modules["pandas"]
    if any(x is pandas.NA or x is pandas.NaT for x in items):
        raise ByReference
    return [name, [e(x) for x in items]]


def _uncolumn(p, d):
    numpy = _numpy()
    if type(p) is not list or len(p) != 2 or type(p[0]) is not str:
        raise ProtocolError("malformed column")
    if p[0] == "np":
        array = d(p[1])
        if type(array) is not numpy.ndarray:
            raise ProtocolError("a column that is not an array")
        return array
    if p[0] not in _LISTED or type(p[1]) is not list:
        raise ProtocolError("malformed column")
    import pandas

    return pandas.array([d(x) for x in p[1]], dtype=p[0])


def _index(v, e) -> list:
    pandas = sys.modules["pandas"]
    name = e(v.name)
    if type(v) is pandas.RangeIndex:
        return ["range", v.start, v.stop, v.step, name]
    if type(v) is not pandas.Index and not isinstance(v, pandas.DatetimeIndex):
        raise ByReference  # a MultiIndex, a categorical or interval index...
    return ["values", _column(v, e), name]


def _unindex(p, d):
    import pandas

    if type(p) is not list or not p or p[0] not in ("range", "values"):
        raise ProtocolError("malformed index")
    if p[0] == "range":
        if len(p) != 5:
            raise ProtocolError("malformed index")
        start, stop, step = ints(p[1:4], 3)
        return pandas.RangeIndex(start, stop, step, name=d(p[4]))
    if len(p) != 3:
        raise ProtocolError("malformed index")
    return pandas.Index(_uncolumn(p[1], d), name=d(p[2]))


def _frame(v, e) -> list:
    columns = [_column(v.iloc[:, i], e) for i in range(v.shape[1])]
    return [_index(v.columns, e), columns, _index(v.index, e)]


def _unframe(p, d, c):
    if type(p) is not list or len(p) != 3 or type(p[1]) is not list:
        raise ProtocolError("malformed data frame")
    columns, index = _unindex(p[0], d), _unindex(p[2], d)
    data = [_uncolumn(x, d) for x in p[1]]
    if len(columns) != len(data) or any(len(x) != len(index) for x in data):
        raise ProtocolError("a data frame whose columns do not fit")
    frame = c(dict(enumerate(data)), index=index)
    frame.columns = columns
    return frame


def _series(v, e) -> list:
    return [_column(v, e), _index(v.index, e), e(v.name)]


def _unseries(p, d, c):
    if type(p) is not list or len(p) != 3:
        raise ProtocolError("malformed series")
    data, index = _uncolumn(p[0], d), _unindex(p[1], d)
    if len(data) != len(index):
        raise ProtocolError("a series whose values do not fit its index")
    return c(data, index=index, name=d(p[2]))


def _sparse(v, e) -> list:
    parts = (v.row, v.col) if v.format == "coo" else (v.indices, v.indptr)
    arrays = [v.data, *parts]
    if sum(a.nbytes for a in arrays) > MAX_ARRAY_BYTES:
        raise ByReference
    return [list(v.shape), *[e(a) for a in arrays]]


def _unsparse(p, d, c):
    numpy = _numpy()
    if type(p) is not list or len(p) != 4 or type(p[0]) is not list:
        raise ProtocolError("malformed sparse matrix")
    shape = tuple(ints(p[0], 2))
    data, first, second = (d(x) for x in p[1:])
    if not all(type(a) is numpy.ndarray and a.ndim == 1 for a in (data, first, second)):
        raise ProtocolError("a sparse matrix of something but arrays")
    if c.__name__.startswith("coo"):
        return c((data, (first, second)), shape=shape)
    made = c((data, first, second), shape=shape)
    made.check_format(full_check=True)
    return made


_UNITS = frozenset({"s", "ms", "us", "ns"})


def _timestamp(v, e) -> list:
    """A `Timestamp` (a frame's records hold them): its count of its unit's ticks, the
    unit, and its zone's name (a zone without one crosses by reference)."""
    key = None
    if v.tz is not None:
        key = getattr(v.tz, "key", None) or getattr(v.tz, "zone", None)  # zoneinfo, pytz
        if type(key) is not str:
            raise ByReference
    return [int(v._value), v.unit, key]


def _untimestamp(p, d, c):
    if type(p) is not list or len(p) != 3 or type(p[0]) is not int or p[1] not in _UNITS:
        raise ProtocolError("malformed timestamp")
    if p[2] is not None and type(p[2]) is not str:
        raise ProtocolError("malformed timestamp")
    try:
        made = c(p[0], unit=p[1])
        return made if p[2] is None else made.tz_localize("UTC").tz_convert(p[2])
    except (ValueError, TypeError, KeyError, OverflowError) as error:  # an unknown zone
        raise ProtocolError("malformed timestamp") from error


def _untimedelta(p, d, c):
    if type(p) is not list or len(p) != 2 or type(p[0]) is not int or p[1] not in _UNITS:
        raise ProtocolError("malformed time delta")
    return c(p[0], unit=p[1])


VALUES: dict[str, tuple] = {
    "pandas.DataFrame": ("pandas", "DataFrame", _frame, _unframe),
    "pandas.Series": ("pandas", "Series", _series, _unseries),
    "pandas.Index": ("pandas", "Index", lambda v, e: _index(v, e), lambda p, d, c: _unindex(p, d)),
    "pandas.RangeIndex": (
        "pandas",
        "RangeIndex",
        lambda v, e: _index(v, e),
        lambda p, d, c: _unindex(p, d),
    ),
    "pandas.Timestamp": ("pandas", "Timestamp", _timestamp, _untimestamp),
    "pandas.Timedelta": (
        "pandas",
        "Timedelta",
        lambda v, e: [int(v._value), v.unit],
        _untimedelta,
    ),
    **{f"scipy.{name}": ("scipy.sparse", name, _sparse, _unsparse) for name in _SPARSE},
}
