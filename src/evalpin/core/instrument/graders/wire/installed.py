"""An installed library's class, as the judge finds it itself (issue 48, item 7): a
candidate's object whose class a library defines (matplotlib's `Axes` and `Figure`, a
pandas frame that crosses by reference, a stdlib class the wire does not carry by value)
presents that class to `isinstance`, `issubclass(x.__class__, ...)` and `__class__`
here, so `isinstance(ax, matplotlib.axes.Axes)` holds as in one process. Its stand-in's
behaviour stays the wire's: attributes and methods are the worker's, comparisons, truth
and hashing the judge's rules (`classes._decide`), set on the proxy class, which the
presented class never is.

The worker's description only names a class (its module and qualified name); nothing of
it is believed. The judge looks the name up itself, in that module as it has it or
imports it (as it imports a module the worker names by name: only from the
interpreter's own folders, `stdlib.trusted_module`), and only where that module's file
is the interpreter's own (stdlib or site-packages, links resolved: never the work
folder, a stand-in, a file the candidate or the test wrote). A worker that lies gains nothing:
a real instance of that class could cross by reference with whatever answers the
candidate likes (its process holds the object and the library's code there), so a class
whose instances never cross by reference is never presented:

- a builtin or a class deriving from one (the values the wire carries by value, their
  subclasses, exceptions, metaclasses): their stand-ins have rules of their own. But a
  class deriving from exactly one of the builtins a stand-in holds its value in (a
  tuple, str, bytes, frozenset, list, dict or set: matplotlib's `BarContainer`, a
  `Markup`) is presented by such a stand-in (`holds`): it is a real instance of that
  builtin here, holding the value the judge decoded itself, so all that reads it as
  the builtin (its length, items, comparisons, hashing) reads the judge's own value,
  and a forged one gains only what the candidate's real instance would have (its
  methods are the worker's either way);
- a value kind the wire always carries by value (the stdlib's `Fraction`, `UUID`,
  `Namespace`..., numpy's scalars); numpy's arrays, pandas' frames and scipy's sparse
  matrices do cross by reference (an object dtype, a categorical column), so they are
  presented;
- a number (`numbers.Number`, `Decimal`: `pytest.approx` and the like judge a number's
  closeness through its own arithmetic, which here would be the candidate's);
- a class no instance can have: abstract (its abstract methods unset), a protocol, an
  enum (its members cross as members);
- the tests' machinery (`unittest`, pytest, pluggy) and evalpin's own."""

from __future__ import annotations

import enum
import sys
import types

from .frames import CLASSES
from .stdlib import STDLIB, installed_module, trusted_module
from .values import value_name

# The wire's value kinds some of whose instances cross by reference (`ByReference`).
_ALSO_BY_REFERENCE = frozenset(["numpy.ndarray", *CLASSES])
_MACHINERY = frozenset(["unittest", "pytest", "_pytest", "pluggy", "evalpin", "evalpin_wire"])


def presenting(module, qualname, holds: type | None = None) -> type | tuple | None:
    """What a stand-in of the class named `module`.`qualname` presents: the installed
    class the judge finds under that name (its module imported here as the worker has
    it, from the interpreter's own folders alone, as a module the worker names by name
    is: `matplotlib.axes` is then there for the test, as in one process); None where it
    may present none; the name itself, to look up at the first `__class__` asked, where
    that module is being imported (the test's own, still running its imports). `holds`:
    the builtin the stand-in holds its value in (a tuple subclass's items), if any."""
    if type(module) is not str or type(qualname) is not str:
        return None
    if module.partition(".")[0] in _MACHINERY:
        return None
    found = sys.modules.get(module) or _imported(module)
    if found is None:
        return None
    if not isinstance(found, types.ModuleType) or not installed_module(found, module):
        return None
    loading = getattr(vars(found).get("__spec__"), "_initializing", False) is True
    for part in qualname.split("."):
        # through the namespaces themselves: no module `__getattr__` (a lazy import)
        space = getattr(found, "__dict__", None)
        found = space.get(part) if part.isidentifier() and type(space) is dict else None
        if found is None:
            return (module, qualname, holds) if loading else None
    if not isinstance(found, type):
        return None
    named = (found.__module__, found.__qualname__)
    return found if named == (module, qualname) and _presentable(found, holds) else None


def _imported(name: str) -> types.ModuleType | None:
    """The interpreter's own module `name`, imported here (None: not one, or it fails);
    never one of the stdlib's that act on import (`antigravity`, `this`, `turtle`), nor a
    submodule of a package that is not the interpreter's (the candidate's stand-in: an
    import of it while a class is being described would run its stub mid-message)."""
    if name.partition(".")[0] in set(sys.stdlib_module_names) - STDLIB:
        return None
    try:
        return trusted_module(name)
    except Exception:  # not found, not the interpreter's own, or its import failed
        return None


def presented_class(self) -> type:
    """`__class__` of a stand-in whose class presents another (an installed library's
    class, a function's kind): that class for an instance of exactly that proxy class,
    the proxy class itself for a subclass's (a candidate's `MyAxes(Axes)` is not an
    `Axes` by its own word), and where the judge finds none."""
    kind = type(self)
    own = kind.__dict__.get("_evalpin_presents")
    if type(own) is tuple:  # looked up now, and kept once it is decided
        own = presenting(*own)
        if type(own) is not tuple:
            type.__setattr__(kind, "_evalpin_presents", own)
    return own if isinstance(own, type) else kind


PRESENTED = property(presented_class)


def _holds(builtins: list, holds: type | None) -> bool:
    """Whether a stand-in holding its value in the builtin `holds` is a real instance of
    each builtin a class derives from (`builtins`, in its MRO): that class is then
    presentable, by such a stand-in alone (a matplotlib `BarContainer`, a tuple; a
    `Markup`, a str). Never a number's (`pytest.approx` judges through its arithmetic)."""
    return holds in _VALUE_HOLDERS and builtins == list(holds.__mro__[:-1])


_VALUE_HOLDERS = frozenset([tuple, str, bytes, frozenset, list, dict, set])


def interpreters_own(module) -> str | None:
    """The name of `module` when it is the interpreter's own (the stdlib's or an installed
    library's, never a stand-in of the candidate's): a test's patches of it follow into
    the worker (`judge.follow`)."""
    if not isinstance(module, types.ModuleType) or vars(module).get("_evalpin_stub"):
        return None
    name = vars(module).get("__name__")
    if type(name) is not str:
        return None
    return name if name.split(".")[0] in STDLIB or installed_module(module, name) else None


def _presentable(cls: type, holds: type | None) -> bool:
    mro = cls.__mro__
    builtins = [k for k in mro[:-1] if k.__module__ == "builtins"]
    if mro[-1] is not object or (builtins and not _holds(builtins, holds)):
        return False
    if isinstance(cls, enum.EnumMeta) or getattr(cls, "__abstractmethods__", None):
        return False
    if vars(cls).get("_is_protocol") is True:
        return False
    name = value_name(cls)
    if name is not None and name not in _ALSO_BY_REFERENCE:
        return False
    # (a class registered as a number has `numbers` imported: nothing to import here)
    kinds = tuple(
        kind
        for module, attr in (("numbers", "Number"), ("decimal", "Decimal"))
        if isinstance(kind := getattr(sys.modules.get(module), attr, None), type)
    )
    return not (kinds and issubclass(cls, kinds))
