from wrappers import excepts


def test_doc_of_the_class():
    assert excepts.__doc__.splitlines()[0] == "Catch exceptions and"
