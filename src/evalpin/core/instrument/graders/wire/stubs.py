"""The candidate's modules in the pytest process: stand-ins that forward to the worker,
and the hooks that make the test's doings reach it (patches of stdlib modules, reloads,
`runpy`, `doctest`, the random generator's seed)."""

from __future__ import annotations

import builtins
import contextlib
import importlib
import json
import os
import sys
import types

from . import inherent, process, registries, unpickle
from .imports import SharedFolders
from .judge import Judge
from .protocol import GONE, ProtocolError
from .proxies import Ref, ref_of
from .stdlib import after_import, trusted_module

_client: Judge | None = None


def client() -> Judge:
    """The pytest process's end, from the descriptors the grader passed it."""
    global _client
    if _client is None:
        fds = [int(x) for x in os.environ["EVALPIN_RPC_FDS"].split(",")]
        modules = [m for m in os.environ.get("EVALPIN_MODULES", "").split(",") if m]
        notes = os.environ.get("EVALPIN_NOTES", "")
        _client = Judge(fds, notes=notes, modules=modules)
        _follow_patches(_client)
        after_import("random", _client.state.follow_random)
        after_import("doctest", lambda doctest: _follow_doctest(_client, doctest))
        after_import("pickle", lambda pickle: unpickle.follow(_client, pickle))
        after_import("yaml.representer", registries.follow_yaml_dumps)
        after_import("yaml.constructor", lambda c: registries.follow_yaml_loads(c, modules))
    return _client


def guard_imports() -> None:
    """Before pytest imports anything from the folders the worker writes too: what it
    may load from them (`imports.py`), as the grader's `EVALPIN_SHARED` says. Also
    before the tests import anything: the moves of the working folder counted
    (`process.follow_moves`), whatever name a test calls `os.chdir` by."""
    process.follow_moves()
    told = os.environ.get("EVALPIN_SHARED")
    if told:
        shared = json.loads(told)
        folders = SharedFolders(
            shared["roots"], shared["placed"], shared["devices"], lambda what: client().refuse(what)
        )
        folders.install()


def _follow_patches(judge: Judge) -> None:
    """Make what a test patches on a standard-library module (`monkeypatch.setattr(time,
    "sleep", ...)`, `mock.patch("random.random")`, `monkeypatch.setattr(sys, "argv",
    ...)`) hold in the worker too, and its undoing undo it there."""
    try:
        from _pytest.monkeypatch import MonkeyPatch
    except ImportError:
        MonkeyPatch = None
    if MonkeyPatch is not None:
        setattr_, delattr_, undo = MonkeyPatch.setattr, MonkeyPatch.delattr, MonkeyPatch.undo

        def patched_setattr(self, target, name, value=GONE, raising=True):
            where = _split_target(target, name) if value is GONE else (target, name)
            judge.remember(*where)
            if value is GONE:
                setattr_(self, target, name, raising=raising)
            else:
                setattr_(self, target, name, value, raising=raising)
            judge.follow(*where)

        def patched_delattr(self, target, name=GONE, raising=True):
            where = _split_target(target, None) if name is GONE else (target, name)
            judge.remember(*where)
            if name is GONE:
                delattr_(self, target, raising=raising)
            else:
                delattr_(self, target, name, raising=raising)
            judge.follow(*where)

        def patched_undo(self):
            undo(self)
            judge.follow_all()

        MonkeyPatch.setattr, MonkeyPatch.delattr = patched_setattr, patched_delattr
        MonkeyPatch.undo = patched_undo
    after_import("unittest.mock", lambda mock: _follow_mock_patches(judge, mock))


def _follow_mock_patches(judge: Judge, mock) -> None:
    enter, exit_ = mock._patch.__enter__, mock._patch.__exit__

    def patched_enter(self):
        with contextlib.suppress(Exception):
            judge.remember(self.getter(), self.attribute)
        result = enter(self)
        judge.follow(self.getter(), self.attribute)
        return result

    def patched_exit(self, *exc_info):
        result = exit_(self, *exc_info)
        judge.follow(self.getter(), self.attribute)
        return result

    mock._patch.__enter__, mock._patch.__exit__ = patched_enter, patched_exit


def _follow_doctest(judge: Judge, doctest) -> None:
    """`doctest.testmod(m)` and `run_docstring_examples(m.f, ...)` on the candidate's
    module run its examples where its code is: they are the candidate's code."""
    testmod, run_examples = doctest.testmod, doctest.run_docstring_examples

    def patched_testmod(m=None, *args, **kwargs):
        if isinstance(m, StubModule) and not args:
            ref = m.__dict__["_evalpin_module"].ref
            found = judge.request("doctest", obj=ref.ident, name="testmod", kwargs=kwargs)
            if type(found) is not tuple or len(found) != 2:
                raise ProtocolError("malformed doctest results")
            return doctest.TestResults(*found)
        return testmod(m, *args, **kwargs)

    def patched_run(f, globs, *args, **kwargs):
        ref = ref_of(f)
        if ref is not None and ref.peer is judge and not args:
            return judge.request("doctest", obj=ref.ident, name="run", kwargs=kwargs)
        return run_examples(f, globs, *args, **kwargs)

    doctest.testmod, doctest.run_docstring_examples = patched_testmod, patched_run


def _split_target(target, name):
    """monkeypatch's `setattr("pkg.mod.attr", value)` form: (module, "attr")."""
    if not isinstance(target, str):
        return target, name
    module, _, attr = target.rpartition(".")
    try:  # as monkeypatch resolves it: `"pkg.mod.time.time"` is the `time` module's
        from _pytest.monkeypatch import resolve

        return resolve(module), attr
    except Exception:
        try:
            return importlib.import_module(module), attr
        except Exception:
            return None, attr


# A module's own names, the import system's business: never asked of the worker.
_MACHINERY = frozenset(
    ["__path__", "__file__", "__cached__", "__loader__", "__spec__", "__package__", "__builtins__"]
)


class StubModule(types.ModuleType):
    """A candidate module in the pytest process: functions and classes as described at
    import (kept current), every other name read from the worker when asked for, and a
    name the test sets (monkeypatch) set in the worker's module too."""

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        if name == "__all__":
            return _star_names(self)
        if name in _MACHINERY or name.startswith("_evalpin"):
            raise AttributeError(name)
        known = self.__dict__["_evalpin_known"]
        if name in known:
            return known[name]
        return self.__dict__["_evalpin_module"].__getattr__(name)

    def __setattr__(self, name: str, value) -> None:
        if name.startswith("__") or name.startswith("_evalpin") or isinstance(value, StubModule):
            # (a submodule's stand-in, bound by the import system: the worker's package
            # has its own submodule bound by its own import)
            return super().__setattr__(name, value)
        self.__dict__["_evalpin_known"].pop(name, None)
        inherent.set_by_test(self.__name__, name, sys._getframe(1))
        self.__dict__["_evalpin_module"].__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name.startswith("__") or name.startswith("_evalpin"):
            return super().__delattr__(name)
        self.__dict__["_evalpin_known"].pop(name, None)
        inherent.set_by_test(self.__name__, name, sys._getframe(1))
        self.__dict__["_evalpin_module"].__delattr__(name)

    def __dir__(self):
        return sorted(set(self.__dict__) | set(self.__dict__["_evalpin_names"]))


def _star_names(module: StubModule) -> list[str]:
    """What `from m import *` binds: the worker's public names, but only those plain
    Python could bind from the candidate's source (read statically by the grader: a name
    bound only at run time, `globals()["all"] = ...`, never is); and never one that would
    replace what the importing test decides with (`shadowed`)."""
    names = module.__dict__["_evalpin_names"]
    static = module.__dict__["_evalpin_static"]
    importer = sys._getframe(2).f_globals  # the module running `from m import *`
    allowed = set(names)
    if static is not None:
        allowed = set(static.get("names") or ()) | set(static.get("all") or ())
        for other in static.get("star") or ():
            with contextlib.suppress(Exception):
                found = trusted_module(other)
                public = getattr(found, "__all__", None)
                if not isinstance(public, (list, tuple)):
                    public = [n for n in vars(found) if not n.startswith("_")]
                allowed.update(n for n in public if type(n) is str)
        dropped = [n for n in names if n not in allowed]
        if dropped:
            client().refuse(
                f"`from {module.__name__} import *` of names bound at run time: {dropped}"
            )
    shadows = shadowed(module, [n for n in names if n in allowed], importer)
    if shadows:
        client().refuse(
            f"`from {module.__name__} import *` replaces what the test decides with: {shadows}",
            kind="shadowed",
        )
    return [n for n in names if n in allowed and n not in shadows]


def shadowed(module: StubModule, names: list[str], importer: dict) -> list[str]:
    """The names a star import of the candidate's module would bind over a builtin the
    importing test's code uses (`all`, `len`, `sorted`) or over a name the test already
    has (its own `approx`), to something else: the candidate's code would then decide the
    test's asserts. A name the test imports from the module by name is the candidate's
    to define (`from m import sum`: the task's own entry point)."""
    used, by_name = _test_names(importer.get("__file__"), module.__name__)
    found = []
    for name in names:
        if name in by_name:
            continue
        if name in importer:
            before = importer[name]
        elif name in used and hasattr(builtins, name):
            before = getattr(builtins, name)
        else:
            continue
        try:
            if getattr(module, name) is before:
                continue  # the same object (a stdlib function crosses as itself)
        except Exception:  # unreadable there: refused like any other
            pass
        found.append(name)
    return found


def _test_names(path, module: str) -> tuple[set[str], set[str]]:
    """The names a test file's code reads, and those it imports from `module` by name,
    read from its source (the tests' own file, never the candidate's)."""
    import ast

    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, TypeError, ValueError, SyntaxError):
        return set(), set()
    used: set[str] = set()
    by_name: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.ImportFrom) and node.module == module and not node.level:
            by_name.update(a.asname or a.name for a in node.names if a.name != "*")
    return used, by_name


def stub(remote_name: str, namespace: dict, static: dict | None = None) -> None:
    """Make a module (the generated stand-in for a candidate file) forward to the
    worker's real module; run as `__main__` (runpy), run the candidate's as that."""
    peer = client()
    if namespace.get("__name__") == "__main__":
        module = sys.modules.get(remote_name) or importlib.import_module(remote_name)
        peer.request("main", obj=module.__dict__["_evalpin_module"].ref.ident)
        return
    reloading = namespace.get("_evalpin_stub") is True
    info = peer.request("reload" if reloading else "import", name=remote_name)
    if type(info) is not dict or type(info.get("id")) is not int:
        raise ProtocolError("malformed import reply")
    module_ref = Ref(peer, info["id"])
    namespace["_evalpin_names"] = [n for n in info.get("names", []) if type(n) is str]
    namespace["_evalpin_static"] = static
    namespace["_evalpin_stub"] = True
    namespace["_evalpin_known"] = dict(info.get("known") or {})
    namespace["_evalpin_module"] = _ModuleRef(module_ref)
    namespace.pop("__all__", None)
    if type(info.get("doc")) is str:
        namespace["__doc__"] = info["doc"]
    module = _module_of(namespace)
    module.__class__ = StubModule
    peer.stubs[info["id"]] = module


def _module_of(namespace: dict) -> types.ModuleType:
    """The module whose globals these are, also when a test loaded the file itself
    (`spec_from_file_location` + `exec_module`, never put in sys.modules)."""
    module = sys.modules.get(namespace.get("__name__", ""))
    if getattr(module, "__dict__", None) is namespace:
        return module
    import gc

    for referrer in gc.get_referrers(namespace):
        if isinstance(referrer, types.ModuleType) and referrer.__dict__ is namespace:
            return referrer
    raise ProtocolError("the stand-in is not a module")


class _ModuleRef:
    """The worker's module itself: attribute reads, writes and deletes go there."""

    __slots__ = ("ref",)

    def __init__(self, ref: Ref) -> None:
        self.ref = ref

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        return self.ref.peer.request("getattr", obj=self.ref.ident, name=name)

    def __setattr__(self, name: str, value) -> None:
        if name == "ref":
            return object.__setattr__(self, name, value)
        self.ref.peer.request("setattr", obj=self.ref.ident, name=name, args=[value])

    def __delattr__(self, name: str) -> None:
        self.ref.peer.request("delattr", obj=self.ref.ident, name=name)
