from counting import count


def test_count_of_an_iterator():
    assert count(iter((1, 2, 3, 4))) == 4
