def test_alias_modules():
    import qlz

    assert qlz.__name__ == "qlz"
    assert qlz.funcs.__name__ == "qlz.funcs"
    import qlz.funcs as m2

    assert qlz.funcs is m2
    assert qlz.identity(3) == 3
