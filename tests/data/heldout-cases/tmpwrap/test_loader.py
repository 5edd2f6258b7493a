import tempfile

from loader import first_line


def test_a_named_temporary_file():
    with tempfile.NamedTemporaryFile("w+") as fh:
        fh.write("x = 1\n")
        fh.seek(0)
        assert first_line(fh) == "x = 1"
