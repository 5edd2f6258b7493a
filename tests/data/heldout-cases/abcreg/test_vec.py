from collections.abc import Sequence

from vec import Vec


def test_registered_abc():
    assert isinstance(Vec(1, 2), Sequence)
