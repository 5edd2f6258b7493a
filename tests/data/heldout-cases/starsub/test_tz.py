from tz import *  # noqa: F403


def test_star_import():
    assert first([3, 4]) == 3  # noqa: F405
