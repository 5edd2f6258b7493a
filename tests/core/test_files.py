"""The shared file helpers: one atomic write, one "not UTF-8" wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalpin.core.files import not_utf8, write_atomic


def test_write_atomic_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out" / "card.md"
    write_atomic(path, "first\n")
    write_atomic(path, "second ✓\n")
    assert path.read_text(encoding="utf-8") == "second ✓\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["card.md"]


def test_write_atomic_failure_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "delta.json"
    write_atomic(path, "{}\n", encoding="ascii")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, '{"name": "é"}\n', encoding="ascii")
    assert path.read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["delta.json"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"id": "\xe9"}', "not UTF-8: byte 0xe9 at column 9"),
        (b"schema: x\nname: caf\xc3\n", "not UTF-8: byte 0xc3 at column 10"),  # column in its line
    ],
)
def test_not_utf8_names_the_byte_and_its_column(data: bytes, message: str) -> None:
    with pytest.raises(UnicodeDecodeError) as info:
        data.decode("utf-8")
    assert not_utf8(data, info.value) == message
