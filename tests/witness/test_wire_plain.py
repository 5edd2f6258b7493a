"""Values of scalars and of containers of scalars cross without the table of containers
met again (the per-call path of a chatty test): what that table keeps must still hold,
on a real judge and worker in one process (test_remote's `pair`) - a container met twice
in one value stays one object, distinct ones stay distinct, floats keep their specials,
and a list the candidate changes in place is changed in the test's."""

from __future__ import annotations

import math

from tests.wirekit import pair

__all__ = ["pair"]  # the fixture


def test_a_list_twice_in_an_argument_stays_one_list(pair) -> None:
    m, _ = pair
    row = [1, 2]
    got = m.echo([row, row, 3])  # the test's own list back, as in one process
    assert got == [[1, 2], [1, 2], 3] and got[0] is got[1] is row
    apart = m.echo([[1, 2], [1, 2]])
    assert apart == [[1, 2], [1, 2]] and apart[0] is not apart[1]


def test_a_dict_holding_one_list_under_two_keys_stays_one_list(pair) -> None:
    m, _ = pair
    shared = ["x"]
    got = m.echo({"a": shared, "b": shared, 1: None})
    assert got == {"a": ["x"], "b": ["x"], 1: None} and got["a"] is got["b"]
    apart = m.echo({"a": ["x"], "b": ["x"]})
    assert apart["a"] is not apart["b"]


def test_plain_values_keep_their_types_and_special_floats(pair) -> None:
    m, _ = pair
    got = m.echo([1, 2.5, math.inf, -math.inf, math.nan, "s", None, True])
    assert got[:4] == [1, 2.5, math.inf, -math.inf] and math.isnan(got[4])
    assert got[5:] == ["s", None, True] and type(got[7]) is bool
    assert m.echo({1, 2, "a"}) == {1, 2, "a"}
    assert m.echo([[math.nan], {"k": math.inf}])[1] == {"k": math.inf}


def test_a_list_changed_in_place_is_changed_in_the_test_on_every_call(pair) -> None:
    m, _ = pair
    for i in range(50):
        xs = [i + 2, i, i + 1]
        m.sort_in_place(xs)
        assert xs == [i, i + 1, i + 2]


def test_a_list_that_holds_itself_still_crosses(pair) -> None:
    m, _ = pair
    loop: list = [1]
    loop.append(loop)
    got = m.echo(loop)
    assert got[0] == 1 and got[1] is got


def test_the_wire_form_keeps_a_list_met_twice_and_parts_distinct_ones(pair) -> None:
    _, judge = pair
    row = [1, 2]
    for value in ([row, row], [row, 3, row], {"a": row, "b": row}):
        back = judge.decode(judge.encode(value))
        first, second = (back["a"], back["b"]) if type(back) is dict else (back[0], back[-1])
        assert first == [1, 2] and first is second
    back = judge.decode(judge.encode([[1, 2], [1, 2], {3}]))
    assert back == [[1, 2], [1, 2], {3}] and back[0] is not back[1]
