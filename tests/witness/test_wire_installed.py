"""Which class a stand-in may present (`wire/installed.py`), decided by the judge alone:
an installed library's class found in a module the judge has imported from the
interpreter's own folders, of which real instances can cross by reference; never a
builtin or a class deriving from one, an exception, a value kind the wire always
carries by value, a number, an abstract class, a protocol, an enum, the tests'
machinery, nor a class of a module outside those folders (a candidate's, the tests', a
file in a temporary folder), and nothing is imported for a description."""

from __future__ import annotations

import argparse
import collections
import collections.abc
import decimal
import difflib
import fractions
import importlib
import json
import sqlite3
import sys
import typing
import unittest.mock

import pytest

from evalpin.core.instrument.graders.wire import installed, stdlib
from evalpin.core.instrument.graders.wire.installed import presented_class, presenting


@pytest.mark.parametrize(
    "cls",
    [difflib.SequenceMatcher, argparse.ArgumentParser, sqlite3.Connection, json.JSONEncoder],
)
def test_an_installed_class_is_presented(cls: type) -> None:
    assert presenting(cls.__module__, cls.__qualname__) is cls


@pytest.mark.parametrize(
    "cls, why",
    [
        (int, "a builtin"),
        (collections.OrderedDict, "derives from a builtin"),
        (json.JSONDecodeError, "an exception"),
        (argparse.Namespace, "always by value"),
        (fractions.Fraction, "always by value, a number"),
        (decimal.Decimal, "a number"),
        (collections.abc.Set, "abstract: no instance of its own"),
        (typing.SupportsInt, "a protocol"),
        (type(unittest.mock.sentinel), "the tests' machinery"),
        (unittest.mock.Mock, "the tests' machinery"),
    ],
)
def test_what_is_never_presented(cls: type, why: str) -> None:
    assert presenting(cls.__module__, cls.__qualname__) is None, why


def test_numpy_and_pandas_objects_that_cross_by_reference_are_presented(monkeypatch) -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    assert presenting(np.ndarray.__module__, "ndarray") is np.ndarray
    frame = pd.DataFrame
    assert presenting(frame.__module__, frame.__qualname__) is frame
    assert presenting(np.int64.__module__, np.int64.__qualname__) is None  # by value
    # a number whatever the value table says: `approx` would judge by its arithmetic
    monkeypatch.setattr(installed, "value_name", lambda cls: None)
    assert presenting(np.int64.__module__, np.int64.__qualname__) is None
    assert presenting(np.ndarray.__module__, "ndarray") is np.ndarray


def test_a_module_outside_the_interpreters_folders_is_never_believed(tmp_path, monkeypatch):
    (tmp_path / "lookalike_lib.py").write_text("class Plot:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("lookalike_lib")
    try:
        assert module.Plot.__module__ == "lookalike_lib"
        assert presenting("lookalike_lib", "Plot") is None
    finally:
        sys.modules.pop("lookalike_lib", None)


def test_the_name_must_be_the_classs_own() -> None:
    # `json.JSONEncoder` is `json.encoder.JSONEncoder`: re-exported, not its own name
    assert presenting("json", "JSONEncoder") is None
    assert presenting("json.encoder", "JSONEncoder.<locals>.x") is None
    assert presenting("difflib", "SequenceMatcher.__init__") is None
    assert presenting(["difflib"], "SequenceMatcher") is None


def test_a_module_is_imported_from_the_interpreters_folders_alone() -> None:
    name = "tabnanny"  # in the stdlib, imported by nothing here
    assert name not in sys.modules
    try:
        assert presenting(name, "NannyNag") is None  # an exception: imported, refused
        assert name in sys.modules
    finally:
        sys.modules.pop(name, None)
    assert presenting("no_such_library_here", "Plot") is None
    for acting in ("antigravity", "this"):  # the stdlib's that act on import: never
        assert presenting(acting, "X") is None and acting not in sys.modules


def test_no_submodule_of_a_package_outside_the_interpreters_folders_is_imported(
    tmp_path, monkeypatch
) -> None:
    """A package of the shared folders already loaded (a stand-in's, the tests'): a name
    under it the other side sends is refused, its file never runs here."""
    package = tmp_path / "shelf_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "drawer.py").write_text("import sys\nsys.drawer_opened = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("shelf_pkg")
    try:
        with pytest.raises(ImportError, match="not the interpreter's own"):
            stdlib.trusted_module("shelf_pkg.drawer")
        assert not hasattr(sys, "drawer_opened") and "shelf_pkg.drawer" not in sys.modules
        assert stdlib.trusted_module("email.mime.text").__name__ == "email.mime.text"
    finally:
        sys.modules.pop("shelf_pkg", None)
        sys.modules.pop("shelf_pkg.drawer", None)


class _Stand:
    """A stand-in's class whose presented class is looked up when first asked (its
    module was being imported when the class was described)."""

    _evalpin_presents = ("difflib", "SequenceMatcher")
    __class__ = installed.PRESENTED


def test_a_class_named_while_its_module_loads_is_looked_up_when_asked() -> None:
    stand = _Stand()
    assert isinstance(stand, difflib.SequenceMatcher)
    assert _Stand.__dict__["_evalpin_presents"] is difflib.SequenceMatcher


def test_a_subclasss_instance_presents_its_own_class() -> None:
    class Sub(_Stand):
        pass

    assert presented_class(Sub()) is Sub


def _as_installed(tmp_path, monkeypatch, name: str, source: str):
    """A module of `source`, imported and taken for an installed one, so that only its
    classes decide (the caller takes it out of `sys.modules` again)."""
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(stdlib, "installed_file", lambda path: True)
    return importlib.import_module(name)


def test_classes_no_instance_of_its_own_can_have_are_never_presented(tmp_path, monkeypatch):
    module = _as_installed(
        tmp_path,
        monkeypatch,
        "shapes_lib",
        "import enum\nimport typing\n\n\n"
        "class Named(typing.Protocol):\n    def name(self) -> str: ...\n\n\n"
        "class Colour(enum.Enum):\n    RED = 1\n\n\n"
        "class Plain:\n    pass\n",
    )
    try:
        assert not getattr(module.Named, "__abstractmethods__", None)
        assert presenting("shapes_lib", "Plain") is module.Plain
        assert presenting("shapes_lib", "Named") is None
        assert presenting("shapes_lib", "Colour") is None
    finally:
        sys.modules.pop("shapes_lib", None)


def test_a_value_class_is_presented_only_by_a_stand_in_holding_its_builtin(tmp_path, monkeypatch):
    module = _as_installed(
        tmp_path,
        monkeypatch,
        "held_lib",
        "class Pair(tuple):\n    pass\n\n\n"
        "class Safe(str):\n    pass\n\n\n"
        "class Table(dict):\n    pass\n\n\n"
        "class Meters(float):\n    pass\n\n\n"
        "class Count(int):\n    pass\n",
    )
    try:
        for name, builtin in [("Pair", tuple), ("Safe", str), ("Table", dict)]:
            assert presenting("held_lib", name, builtin) is getattr(module, name)
            assert presenting("held_lib", name) is None  # a stand-in holding no value
        assert presenting("held_lib", "Pair", str) is None  # another builtin than its own
        assert presenting("held_lib", "Table", tuple) is None
        assert presenting("held_lib", "Meters", float) is None  # numbers: never
        assert presenting("held_lib", "Count", int) is None
    finally:
        sys.modules.pop("held_lib", None)
