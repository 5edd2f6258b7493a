"""The candidate's modules in the pytest process: stand-ins that forward to the
worker, and the hooks that make a test's patches of stdlib modules hold there too."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types

from .judge import Judge
from .proxies import _Ref
from .values import _GONE, ProtocolError, after_import

_client: Judge | None = None


def client() -> Judge:
    """The pytest process's end, from the descriptors the grader passed it."""
    global _client
    if _client is None:
        rfd, wfd = (int(x) for x in os.environ["EVALPIN_RPC_FDS"].split(","))
        sync = os.environ.get("EVALPIN_MIRROR") == "1"
        _client = Judge(rfd, wfd, sync_files=sync, notes=os.environ.get("EVALPIN_NOTES", ""))
        _follow_patches(_client)
    return _client


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

        def patched_setattr(self, target, name, value=_GONE, raising=True):
            where = _split_target(target, name) if value is _GONE else (target, name)
            judge.remember(*where)
            if value is _GONE:
                setattr_(self, target, name, raising=raising)
            else:
                setattr_(self, target, name, value, raising=raising)
            judge.follow(*where)

        def patched_delattr(self, target, name=_GONE, raising=True):
            where = _split_target(target, None) if name is _GONE else (target, name)
            judge.remember(*where)
            if name is _GONE:
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


def _split_target(target, name):
    """monkeypatch's `setattr("pkg.mod.attr", value)` form: (module, "attr")."""
    if not isinstance(target, str):
        return target, name
    module, _, attr = target.rpartition(".")
    try:
        return importlib.import_module(module), attr
    except Exception:
        return None, attr


class _StubModule(types.ModuleType):
    """A candidate module in the pytest process: functions and classes as described at
    import (kept current), every other name read from the worker when asked for, and a
    name the test sets (monkeypatch) set in the worker's module too."""

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        known = self.__dict__["_evalpin_known"]
        if name in known:
            return known[name]
        return self.__dict__["_evalpin_module"].__getattr__(name)

    def __setattr__(self, name: str, value) -> None:
        if name.startswith("__") or name.startswith("_evalpin"):
            return super().__setattr__(name, value)
        self.__dict__["_evalpin_known"].pop(name, None)
        self.__dict__["_evalpin_module"].__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name.startswith("__") or name.startswith("_evalpin"):
            return super().__delattr__(name)
        self.__dict__["_evalpin_known"].pop(name, None)
        self.__dict__["_evalpin_module"].__delattr__(name)

    def __dir__(self):
        return sorted(set(self.__dict__) | set(self.__dict__["__all__"]))


def stub(remote_name: str, namespace: dict) -> None:
    """Make a module (the generated stand-in for a candidate file) forward to the
    worker's real module."""
    peer = client()
    info = peer.request("import", name=remote_name)
    if type(info) is not dict or type(info.get("id")) is not int:
        raise ProtocolError("malformed import reply")
    module_ref = _Ref(peer, info["id"])
    namespace["__all__"] = [n for n in info.get("names", []) if type(n) is str]
    namespace["_evalpin_stub"] = True
    namespace["_evalpin_known"] = dict(info.get("known") or {})
    namespace["_evalpin_module"] = _ModuleRef(module_ref)
    module = _module_of(namespace)
    module.__class__ = _StubModule
    peer._stubs[info["id"]] = module


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

    def __init__(self, ref: _Ref) -> None:
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
