"""typing's type variables and new types by value, their identity kept (issue 48;
wire/typed.py), checked on the codec's own forms in one process: one side's object
crosses as a key it gives it, the other side's copy of it goes home as that very
object, and a key this side never gave names nothing."""

from __future__ import annotations

import typing

import pytest

from evalpin.core.instrument.graders.wire import typed
from evalpin.core.instrument.graders.wire.protocol import ProtocolError

_TV = typed.VALUES["typing.TypeVar"]
_NT = typed.VALUES["typing.NewType"]


def _same(value):
    return value


def test_a_variable_goes_and_comes_home_as_itself() -> None:
    mine = typing.TypeVar("Mine", int, str, covariant=True)
    form = _TV[2](mine, _same)
    assert form[0] == 1  # ours, under a key we gave it
    theirs = _TV[3](form, _same, typing.TypeVar)  # what the other side makes of it
    assert theirs is not mine and theirs.__constraints__ == (int, str)
    assert theirs.__covariant__ and theirs.__name__ == "Mine"
    assert _TV[3](form, _same, typing.TypeVar) is theirs  # one copy per key
    back = _TV[2](theirs, _same)
    assert back == [0, form[1]]  # a copy goes home by the sender's key
    assert _TV[3](back, _same, typing.TypeVar) is mine


def test_a_new_type_keeps_its_supertype_and_identity() -> None:
    kind = typing.NewType("Kind", float)
    form = _NT[2](kind, _same)
    theirs = _NT[3](form, _same, typing.NewType)
    assert theirs.__supertype__ is float and theirs.__name__ == "Kind"
    assert _NT[3](_NT[2](theirs, _same), _same, typing.NewType) is kind


def test_a_key_never_given_names_nothing() -> None:
    with pytest.raises(ProtocolError):
        _TV[3]([0, 10**9], _same, typing.TypeVar)
    with pytest.raises(ProtocolError):
        _TV[3]([1, 10**9 + 1, "not an identifier", None, [], False, False, "m"], _same,
               typing.TypeVar)  # fmt: skip
    with pytest.raises(ProtocolError):
        _TV[3](["0", 1], _same, typing.TypeVar)
