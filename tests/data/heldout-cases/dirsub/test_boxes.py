from boxes import Box


class Child(Box):
    pass


def test_instance_dir_covers_class_dir():
    b = Child(a=1)
    missing = [n for n in dir(Child) if n not in dir(b)]
    assert missing == []
