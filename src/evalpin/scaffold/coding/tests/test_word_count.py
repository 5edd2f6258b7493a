from words import word_count


def test_counts_words():
    assert word_count("the cat and the hat") == {"the": 2, "cat": 1, "and": 1, "hat": 1}


def test_ignores_case_and_punctuation():
    assert word_count("Hello, hello!  HELLO?") == {"hello": 3}


def test_keeps_apostrophes():
    assert word_count("don't stop, don't") == {"don't": 2, "stop": 1}


def test_empty_text():
    assert word_count("") == {}
