from shapes import Record


class Point(Record):
    pass


def test_subclass_made_with_fields():
    p = Point(x=1, y=2)
    assert (p.x, p.y) == (1, 2)
