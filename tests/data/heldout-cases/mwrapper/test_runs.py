from runs import split_by


def test_a_method_wrapper_as_predicate():
    assert split_by("aeiou".__contains__, "abcde") == ["a", "e"]
