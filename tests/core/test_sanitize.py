from __future__ import annotations

import pytest

from evalpin.core.sanitize import cap_block, inert, inert_line

HOSTILE = [
    ("\x1b]52;c;aGVsbG8=\x07", "\\x1b]52;c;aGVsbG8=\\x07"),
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\x9b31m", "\\x9b31m"),
    ("FAILED\rPASSED", "FAILED\\x0dPASSED"),
    ("abc\u202edef", "abc\\u202edef"),
    ("x\u2066y\u2069", "x\\u2066y\\u2069"),
    ("del\x7f", "del\\x7f"),
    ("nul\x00", "nul\\x00"),
]


@pytest.mark.parametrize(("raw", "shown"), HOSTILE)
def test_controls_become_visible_escapes(raw: str, shown: str) -> None:
    assert inert(raw) == shown
    assert inert_line(raw) == shown


def test_no_dangerous_character_survives() -> None:
    everything = "".join(chr(c) for c in range(0x2100)) + "\u202a\u202b\u202c\u202d\u202e"
    out = inert(everything)
    for ch in out:
        cp = ord(ch)
        assert cp in (9, 10) or not (cp < 0x20 or 0x7F <= cp < 0xA0), hex(cp)
        assert not (0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069), hex(cp)


def test_block_keeps_newlines_and_tabs_but_line_does_not() -> None:
    assert inert("a\n\tb") == "a\n\tb"
    assert inert_line("a\n\tb") == "a\\x0a\\x09b"


def test_markup_is_left_alone_as_text() -> None:
    # Sanitising is about terminal bytes; markup safety comes from rendering plain Text.
    assert inert("[bold red]x[/] [@click=app.quit]") == "[bold red]x[/] [@click=app.quit]"


def test_cap_block_keeps_the_end_and_counts_what_was_cut() -> None:
    text = "\n".join(f"line {i}" for i in range(10)) + "\n" + "w" * 50
    shown, dropped, cut = cap_block(text, max_lines=3, max_width=20)
    assert shown.split("\n") == ["line 8", "line 9", "w" * 20]
    assert dropped == 8
    assert cut == 30
