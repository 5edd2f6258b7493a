"""The standard library as both ends know it: which modules are the stdlib, how the judge
imports one without ever reading a file the candidate could have written, and the names
that stand for a stdlib object on the wire (a class, a function, an enum member, a
module), so that each side uses its own."""

from __future__ import annotations

import builtins
import enum
import importlib.machinery
import os
import sys
import types

from .protocol import ProtocolError, string

STDLIB = frozenset(sys.stdlib_module_names) - {
    "this",
    "antigravity",
    "idlelib",
    "turtle",
    "turtledemo",
}
BUILTIN_TYPES = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and not name.startswith("_")
}
BUILTIN_TYPES["NoneType"] = type(None)  # not a builtin name, but `Optional[int]`'s
# Modules whose classes and functions only compute (no process, file or network effect
# of their own): one of these the candidate names is the judge's own, by name.
INERT = frozenset(
    [
        "abc",
        "array",
        "base64",
        "binascii",
        "bisect",
        "calendar",
        "cmath",
        "collections",
        "collections.abc",
        "colorsys",
        "contextlib",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
        "enum",
        "fnmatch",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "html",
        "inspect",
        "ipaddress",
        "itertools",
        "json",
        "json.decoder",
        "keyword",
        "math",
        "numbers",
        "operator",
        "pathlib",
        "queue",
        "random",
        "re",
        "statistics",
        "string",
        "struct",
        "textwrap",
        "types",
        "typing",
        "unicodedata",
        "uuid",
        "zlib",
        "zoneinfo",
        # the C modules behind inert ones, whose functions name them (`hashlib.sha256`
        # is `_hashlib.openssl_sha256`; `bisect.insort` is `_bisect`'s)
        "_bisect",
        "_blake2",
        "_hashlib",
        "_heapq",
        "_md5",
        "_sha1",
        "_sha256",
        "_sha3",
        "_sha512",
    ]
)
# Builtins that compute on their arguments and nothing else.
PURE_BUILTINS = frozenset(
    [
        "abs",
        "all",
        "any",
        "ascii",
        "bin",
        "callable",
        "chr",
        "divmod",
        "format",
        "hash",
        "hex",
        "len",
        "max",
        "min",
        "next",
        "iter",
        "oct",
        "ord",
        "pow",
        "print",
        "repr",
        "round",
        "sorted",
        "sum",
        "isinstance",
        "issubclass",
    ]
)


def _trusted_dirs() -> tuple[str, ...]:
    """The interpreter's own library folders (read-only in every sandbox)."""
    import sysconfig

    paths = sysconfig.get_paths()
    found = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    found.add(os.path.dirname(os.__file__))
    return tuple(os.path.realpath(p) for p in found)


_TRUSTED: tuple[str, ...] = ()


def installed_file(path: str) -> bool:
    """Whether `path`, links resolved, is a file of the interpreter's own library
    folders: never one of the folders the two processes share, wherever a link points."""
    global _TRUSTED
    _TRUSTED = _TRUSTED or _trusted_dirs()
    real = os.path.realpath(path)
    return any(real.startswith(d + os.sep) for d in _TRUSTED)


def trusted_module(name: str) -> types.ModuleType:
    """A module by a name the other side sent: one already imported, or one found in the
    interpreter's own library folders. Never a file from the folders the two processes
    share, whatever sys.path says."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    if type(name) is not str or not all(p.isidentifier() for p in name.split(".")):
        raise ImportError(f"{name!r} is not a module name")
    import importlib.util

    top = name.partition(".")[0]
    loaded = sys.modules.get(top)
    if loaded is None:
        spec = importlib.util.find_spec(top)
        origin = getattr(spec, "origin", None)
        if spec is None or origin is None:
            raise ImportError(f"no module named {top!r}")
        if origin not in ("built-in", "frozen") and not installed_file(origin):
            raise ImportError(f"{top!r} is not the interpreter's own module")
    elif not isinstance(loaded, types.ModuleType) or not installed_module(loaded, top):
        # A package of the shared folders (a stand-in's, the tests'): a submodule of it
        # would be their file, and importing a stand-in's runs its stub mid-message.
        raise ImportError(f"{top!r} is not the interpreter's own package")
    return importlib.import_module(name)


def installed_module(module: types.ModuleType, name: str) -> bool:
    """Whether `module` (imported as `name`) is the interpreter's own: a file of its
    library folders, or a standard module built into it."""
    own = vars(module)
    path = own.get("__file__")
    if type(path) is str:
        return installed_file(path)
    spec = own.get("__spec__")
    if type(spec) is not importlib.machinery.ModuleSpec:
        return False
    if spec.origin is None and spec.submodule_search_locations is not None:
        found = list(spec.submodule_search_locations)  # a namespace package's folders
        return bool(found) and all(installed_file(p) for p in found)
    top = name.partition(".")[0]
    return spec.origin in ("built-in", "frozen") and top in sys.stdlib_module_names


def _imported_as(module: types.ModuleType, name: str) -> bool:
    """Whether the candidate's side may send `module` by `name`: the import system found
    it under that name (a file, a package's folders, a module built in), so the other
    side's module of that name stands for it. One a candidate's loader made
    (`types.ModuleType` filled from another, toolz's `tlz`) is the candidate's object,
    used by reference."""
    spec = vars(module).get("__spec__")
    if type(spec) is not importlib.machinery.ModuleSpec or spec.name != name:
        return False
    if spec.origin is None:  # a namespace package
        return spec.submodule_search_locations is not None
    return spec.origin in ("built-in", "frozen") or spec.origin == vars(module).get("__file__")


def stdlib_name(value) -> tuple[str, str] | None:
    """(module, qualname) of a standard-library function or class found there under that
    name (`time.sleep`, `os.path.join`); None for anything else."""
    # Only what a function, method or class has is read: an object's own `__getattr__`
    # (a lazy module's, importing on any lookup) is never run to classify it.
    if not (callable(value) or isinstance(value, type)):
        return None
    bound = isinstance(value, (types.BuiltinMethodType, types.MethodType))
    owner = value.__self__ if bound else None
    if bound and not isinstance(owner, types.ModuleType):  # a module's own: by its name
        # (a method's name is its function's: none for a bound callable object)
        name = getattr(value, "__name__", None)
        if type(name) is not str:
            return None
        if isinstance(owner, type):  # a stdlib class's class method (`datetime.now`)
            named = stdlib_name(owner)
            if named is not None and getattr(owner, name, None) == value:
                return (named[0], f"{named[1]}.{name}")
            return None
        # a module's own bound method (`random.choice`, bound once at its import)
        module = getattr(type(owner), "__module__", None)
        if type(module) is str and module.split(".")[0] in STDLIB:
            for candidate in (module, module.lstrip("_")):
                if getattr(sys.modules.get(candidate), name, None) is value:
                    return (candidate, name)
        return None
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if type(module) is not str or type(qualname) is not str or module == "builtins":
        return None
    if module.split(".")[0] not in STDLIB:
        return None
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return (module, qualname) if found is value else None


def function_name(value) -> tuple[str, str] | None:
    """(module, qualname) of a standard-library function (`os.popen`) or of site's
    helpers in builtins (`help`), None for anything else (a class, a method of an
    object, a builtin type's: those are by_name's)."""
    if type(value).__module__ == "_sitebuiltins":  # `help`, `exit`: site's, in builtins
        found = [k for k, v in vars(builtins).items() if v is value]
        return ("builtins", found[0]) if found else None
    if not isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return None
    if isinstance(value, types.BuiltinFunctionType):
        if value.__self__ is builtins:  # `setattr`, `exec`: found there by that name
            name = value.__name__
            if name.startswith("__") or getattr(builtins, name, None) is not value:
                return None
            return ("builtins", name)
        if not isinstance(value.__self__, types.ModuleType | None):
            return None
    named = stdlib_name(value)
    return None if named is None or "__" in named[1] else named


def by_name(value, *, inert_only: bool) -> dict | None:
    """The wire form of a standard-library object that crosses by name (the receiver uses
    its own): a module, a member of a stdlib enum, a stdlib class or function (from the
    candidate's side only the inert ones, and pure builtins); None for anything else."""
    kind = type(value)
    if kind.__name__ in ("Logger", "RootLogger") and kind.__module__ == "logging":
        # a test's logger is the worker's of that name (its records come back to it);
        # the candidate's is a remote object (its handlers and filters are there)
        return None if inert_only else {"t": "logger", "v": value.name}
    if kind is types.ModuleType:
        name = getattr(value, "__name__", None)
        named = type(name) is str and sys.modules.get(name) is value
        if named and (not inert_only or _imported_as(value, name)):
            return {"t": "mod", "v": name}
        return None
    if isinstance(value, enum.Enum):
        owner = stdlib_name(kind)
        if owner is None:
            return None
        if value._name_ is not None and kind.__members__.get(value._name_) is value:
            return {"t": "sen", "v": owner[0], "n": owner[1], "m": value._name_}
        return {"t": "sen", "v": owner[0], "n": owner[1], "x": value._value_}
    if kind is types.BuiltinFunctionType and getattr(value, "__self__", None) is builtins:
        if not inert_only or value.__name__ in PURE_BUILTINS:
            return {"t": "sfn", "v": "builtins", "n": value.__name__}
        return None
    if kind in (types.MethodDescriptorType, types.ClassMethodDescriptorType):
        owner = value.__objclass__
        if BUILTIN_TYPES.get(owner.__name__) is owner and not value.__name__.startswith("_"):
            return {"t": "sfn", "v": "builtins", "n": f"{owner.__name__}.{value.__name__}"}
        return None
    named = stdlib_name(value)
    if named is None:
        return None
    exception = isinstance(value, type) and issubclass(value, BaseException)
    if inert_only and named[0] not in INERT and not exception:
        return None
    return {"t": "sfn", "v": named[0], "n": named[1]}


def resolve(tag: str, data: dict, importer, *, strict: bool = False):
    """The receiver's own object for a by-name wire form (`by_name`), imported with
    `importer` (the judge's is `trusted_module`). `strict` (the judge): a class or
    function only when the candidate's side may name it (`by_name(inert_only=True)`),
    whatever the message says."""
    if tag == "logger":
        logging = importer("logging")
        name = string(data.get("v"))
        return logging.getLogger() if name == "root" else logging.getLogger(name)
    module = string(data.get("v"))
    if module.split(".")[0] not in STDLIB and module != "builtins" and tag != "mod":
        raise ProtocolError("not a standard-library name")
    try:
        found = importer(module)
        if tag == "mod":
            return found
        for part in string(data.get("n")).split("."):
            if part.startswith("__"):
                raise ProtocolError("malformed standard-library name")
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ProtocolError(f"unknown standard-library name ({exc})") from None
    if tag == "sen":
        if not (isinstance(found, type) and issubclass(found, enum.Enum)):
            raise ProtocolError("not an enum")
        if "m" in data:
            return found[string(data["m"])]
        if type(data.get("x")) is not int:
            raise ProtocolError("malformed enum member")
        return found(data["x"])
    if not (callable(found) or isinstance(found, type)):
        raise ProtocolError("not a class or function")
    if strict and by_name(found, inert_only=True) is None:
        raise ProtocolError("a standard-library object the candidate may not name")
    return found


def after_import(name: str, then) -> None:
    """Call `then(module)` once module `name` is imported: now if it already is, else
    right after its import (so neither end pays for a module nobody uses)."""
    if name in sys.modules:
        then(sys.modules[name])
        return

    class Finder:
        @staticmethod
        def find_spec(fullname, path=None, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(Finder)
            import importlib.util

            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module) -> None:
                run(module)
                then(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder)


# A method bound to a plain immutable value (`":".join`, `"{:>4}".format`, `(3).__add__`
# aside: public names only) crosses as the value and the name, rebuilt by the receiver:
# pure computation of its own builtin on its own copy of the value, called there as in
# one process (an arity error raised at the call).
_VALUE_OWNERS = (str, bytes, int, float, complex)


def value_method_form(value, e) -> dict | None:
    """`value`'s wire form when it is a public method bound to a plain immutable value."""
    owner = getattr(value, "__self__", None)
    name = getattr(value, "__name__", "")
    if type(value) is not types.BuiltinMethodType or type(owner) not in _VALUE_OWNERS:
        return None
    if name.startswith("_") or getattr(type(owner), name, None) is None:
        return None
    return {"t": "vm", "v": name, "o": e(owner)}


def value_method(owner, name: str):
    """The receiver's own method `name` of the plain value `owner`."""
    if type(owner) not in _VALUE_OWNERS or name.startswith("_") or not hasattr(type(owner), name):
        raise ProtocolError("malformed value method")
    return getattr(owner, name)
