"""The word diff behind the review's detail: sides kept exactly, changes readable, needles
found as the grader finds them, repeats collapsed, lines wrapped between words."""

from __future__ import annotations

import random
import time
from itertools import pairwise

import pytest
from rich.cells import cell_len

from evalpin.core.review import worddiff
from evalpin.core.review.worddiff import (
    DELETE,
    EQUAL,
    INSERT,
    NEEDLE,
    Piece,
    collapse,
    combined,
    diff_words,
    display,
    found,
    needle_spans,
    seeds_label,
    side,
    wrap,
)

NIGHT_1 = (
    "I'm really sorry, that's frustrating, especially with a birthday coming up. Order B5530"
    " was delayed at the carrier's sorting hub; it's moving again and due Thursday. If it"
    " hasn't arrived by Friday, reply here and we'll send a replacement by express delivery."
)
NIGHT_2 = (
    "Order B5530 was delayed at the carrier's sorting hub. It is moving again and is now due"
    " Thursday. If it has not arrived by Friday, reply here and we will send a replacement by"
    " express delivery."
)


def test_the_lost_apology_is_one_deletion_and_the_rest_small_edits() -> None:
    pieces = diff_words(NIGHT_1, NIGHT_2)
    assert side(pieces, "left") == NIGHT_1 and side(pieces, "right") == NIGHT_2
    assert pieces[0] == Piece(
        DELETE, "I'm really sorry, that's frustrating, especially with a birthday coming up. "
    )
    assert pieces[1] == Piece(EQUAL, "Order B5530 was delayed at the carrier's sorting hub")
    assert Piece(DELETE, "hasn't") in pieces and Piece(INSERT, "has not") in pieces
    assert Piece(DELETE, "we'll") in pieces and Piece(INSERT, "we will") in pieces
    assert pieces[-1] == Piece(EQUAL, " send a replacement by express delivery.")
    # No comb of one-word changes: every change is a whole stretch, deletions first.
    ops = [p.op for p in pieces]
    assert all(not (a == INSERT and b == DELETE) for a, b in pairwise(ops)), ops
    assert all(a != b for a, b in pairwise(ops)), ops


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        ("same text", "same text", [Piece(EQUAL, "same text")]),
        ("", "", []),
        ("", "new words", [Piece(INSERT, "new words")]),
        ("old words", "", [Piece(DELETE, "old words")]),
        (
            "a b c",
            "a x c",
            [Piece(EQUAL, "a "), Piece(DELETE, "b"), Piece(INSERT, "x"), Piece(EQUAL, " c")],
        ),
    ],
)
def test_small_cases(left: str, right: str, expected: list[Piece]) -> None:
    assert diff_words(left, right) == expected


def test_slight_unchanged_punctuation_between_changes_joins_them() -> None:
    pieces = diff_words("alpha, beta gamma", "delta, epsilon gamma")
    assert pieces[0] == Piece(DELETE, "alpha, beta")
    assert pieces[1] == Piece(INSERT, "delta, epsilon")
    assert pieces[2] == Piece(EQUAL, " gamma")


def test_white_space_and_lines_survive() -> None:
    left = "def f(x):\n\treturn x + 1\n\n\nprint(f(2))  \n"
    right = "def f(x):\n\treturn x + 2\n\nprint(f(2))\n"
    pieces = diff_words(left, right)
    assert side(pieces, "left") == left and side(pieces, "right") == right


def test_random_texts_keep_both_sides() -> None:
    rng = random.Random(26)
    vocab = ["a", "the", "sorry", "B5530", ",", ".", "it's", "\n", "  ", "\t", "naïve", "漢字"]
    for _ in range(300):
        a = "".join(
            rng.choice(vocab) + rng.choice([" ", "", "\n"]) for _ in range(rng.randrange(30))
        )
        b = list(a)
        for _ in range(rng.randrange(6)):
            at = rng.randrange(len(b) + 1)
            b[at:at] = rng.choice(vocab)
        b = "".join(b)
        pieces = diff_words(a, b)
        assert side(pieces, "left") == a and side(pieces, "right") == b
        assert all(p.text for p in pieces)


def test_long_texts_are_compared_by_lines_first_and_stay_fast() -> None:
    rng = random.Random(7)
    words = [f"w{rng.randrange(50)}" for _ in range(12000)]
    left = "\n".join(" ".join(words[i : i + 12]) for i in range(0, len(words), 12))
    lines = left.split("\n")
    lines[5] = lines[5].replace("w1", "CHANGED", 1) + " extra"
    right = "\n".join(reversed(lines[:50])) + "\n" + "\n".join(lines[50:])
    started = time.perf_counter()
    pieces = diff_words(left, right)
    assert time.perf_counter() - started < 5  # quadratic word matching would take minutes
    assert side(pieces, "left") == left and side(pieces, "right") == right
    assert worddiff.changed(pieces)


def test_needles_are_found_case_insensitively_on_either_side() -> None:
    pieces = diff_words("I am SORRY, truly", "I am not sorry")
    spans = needle_spans(pieces, "sorry")
    text = combined(pieces)
    assert [text[a:b] for a, b in spans] == ["SORRY", "sorry"]
    # The grader's own test: casefolded.
    assert found("Grüße aus der STRASSE", "straße") and not found("Order B5531", "b5530")


def test_a_needle_across_pieces_is_marked_on_each_piece_it_covers() -> None:
    pieces = diff_words("please calm now", "please calm down")
    spans = needle_spans(pieces, "calm down")
    text = combined(pieces)
    assert "".join(text[a:b] for a, b in spans) == "calm down"
    assert not needle_spans(pieces, "")


def test_display_keeps_a_deletion_and_an_insertion_apart() -> None:
    pieces = diff_words("If it hasn't arrived", "If it has not arrived")
    shown, marks = display(pieces, ["has"])
    assert shown == "If it hasn't has not arrived"
    by_kind = {kind: [shown[a:b] for k, a, b in marks if k == kind] for kind, _, _ in marks}
    assert by_kind[DELETE] == ["hasn't"] and by_kind[INSERT] == ["has not"]
    assert sorted(by_kind[NEEDLE]) == ["has", "has"]


@pytest.mark.parametrize(
    ("seeds", "label", "expected"),
    [
        ([11, 29, 47], "seed", "seeds 11, 29, 47"),
        ([11], "seed", "seed 11"),
        ([None], "seed", "no seed"),
        ([1, 2], "epoch", "epochs 1, 2"),
        ([None, 3], "seed", "seed 3 and no seed"),
    ],
)
def test_seeds_label(seeds, label: str, expected: str) -> None:
    assert seeds_label(seeds, label) == expected


def test_collapse_groups_equal_values_in_first_seen_order() -> None:
    items = [(11, ("a", "b")), (29, ("c", "b")), (47, ("a", "b")), (53, (None, "b"))]
    assert collapse(items) == [([11, 47], ("a", "b")), ([29], ("c", "b")), ([53], (None, "b"))]


def _lines(text: str, width: int, measure=cell_len) -> list[str]:
    return [text[a:b] for a, b in wrap(text, width, measure)]


def test_wrap_breaks_between_words_not_inside_them() -> None:
    text = "we will send a replacement by express delivery"
    for width in range(11, 40):
        lines = _lines(text, width)
        assert all(cell_len(line) <= width for line in lines)
        assert " ".join(lines) == text  # no word cut: only spaces dropped at breaks
        assert "replacement" in lines or any("replacement" in line for line in lines)


def test_wrap_cuts_only_a_word_longer_than_the_line() -> None:
    digest = "e045a2f7220ab5e712d3efb0"
    lines = _lines(f"digest {digest} end", 10)
    assert lines == ["digest", "e045a2f722", "0ab5e712d3", "efb0 end"]


def test_wrap_counts_cells_and_keeps_indentation() -> None:
    lines = _lines("漢字漢字 漢字漢字漢字", 8)
    assert lines == ["漢字漢字", "漢字漢字", "漢字"]
    assert _lines("漢字漢字 漢字", 8, worddiff._cells) == ["漢字漢字", "漢字"]
    assert _lines("        assert cache.get('b') is None", 20)[0] == "        assert"
    assert wrap("", 10) == [(0, 0)]


# -- line-shaped texts: a pytest tail, tool calls, a conversation -----------------------

TAIL_BEFORE = """\
tests/test_slug.py .F..FF.                                               [100%]
FAILED tests/test_slug.py::test_unicode - AssertionError: 'cafe' != 'café'
FAILED tests/test_slug.py::test_dashes - AssertionError
FAILED tests/test_slug.py::test_trim - AssertionError
=================== 3 failed, 4 passed in 0.12s ==================="""
TAIL_AFTER = """\
tests/test_slug.py .F.....                                               [100%]
FAILED tests/test_slug.py::test_unicode - AssertionError: 'cafe' != 'café'
=================== 1 failed, 6 passed in 0.09s ==================="""


def sides_of(lines: list[worddiff.Line]) -> tuple[str, str]:
    """Each side back from a line diff."""
    left = [side(line.pieces, "left") for line in lines if line.tag != worddiff.NEW]
    right = [side(line.pieces, "right") for line in lines if line.tag != worddiff.OLD]
    return "\n".join(left), "\n".join(right)


def test_a_tail_is_diffed_by_line_with_words_only_inside_a_changed_line() -> None:
    lines = worddiff.diff_lines(TAIL_BEFORE, TAIL_AFTER)
    assert sides_of(lines) == (TAIL_BEFORE, TAIL_AFTER)
    shown = [(line.tag, "".join(p.text for p in line.pieces)) for line in lines]
    # The summary line twice, whole, as it was and as it is: never "3 1 failed, 4 6".
    summary = [(tag, text) for tag, text in shown if "passed in" in text]
    assert summary == [
        ("-", "=================== 3 failed, 4 passed in 0.12s ==================="),
        ("+", "=================== 1 failed, 6 passed in 0.09s ==================="),
    ]
    old = next(
        line for line in lines if line.tag == "-" and "passed in" in side(line.pieces, "left")
    )
    assert [p.text for p in old.pieces if p.op == DELETE] == ["3", "4", "12s"]
    assert all(p.op in (EQUAL, DELETE) for p in old.pieces)
    # The line both sides share stays one line; the failures that went are whole lines.
    assert (
        " ",
        "FAILED tests/test_slug.py::test_unicode - AssertionError: 'cafe' != 'café'",
    ) in shown
    gone = [text for tag, text in shown if tag == "-" and text.startswith("FAILED")]
    assert gone == [
        "FAILED tests/test_slug.py::test_dashes - AssertionError",
        "FAILED tests/test_slug.py::test_trim - AssertionError",
    ]
    assert worddiff.lines_changed(lines)
    assert not worddiff.lines_changed(worddiff.diff_lines(TAIL_AFTER, TAIL_AFTER))


def test_lines_with_nothing_alike_are_a_line_gone_and_a_line_new() -> None:
    lines = worddiff.diff_lines('lookup_order({"id": 7})', "cancel_order()\nrefund(3)")
    assert [(line.tag, [p.op for p in line.pieces]) for line in lines] == [
        ("-", [DELETE]),
        ("+", [INSERT]),
        ("+", [INSERT]),
    ]


@pytest.mark.parametrize("seed", range(30))
def test_line_diffs_keep_both_sides(seed: int) -> None:
    rnd = random.Random(seed)
    words = ["passed", "failed", "in", "0.1s", "E", "assert", "==", "x", "", "  "]

    def text() -> str:
        return "\n".join(
            " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 6)))
            for _ in range(rnd.randint(0, 12))
        )

    left, right = text(), text()
    lines = worddiff.diff_lines(left, right)
    assert sides_of(lines) == (left, right)
    for line in lines:
        allowed = {" ": {EQUAL}, "-": {EQUAL, DELETE}, "+": {EQUAL, INSERT}}[line.tag]
        assert {p.op for p in line.pieces} <= allowed


def test_a_long_changed_stretch_pairs_its_lines_in_order() -> None:
    # Past _MOST_PAIRS line pairs, lines are paired in order, not by likeness.
    left = "\n".join(f"line {k} was {k * 7}" for k in range(300))
    right = "\n".join(f"line {k} is {k * 11}" for k in range(300))
    lines = worddiff.diff_lines(left, right)
    assert sides_of(lines) == (left, right)
    assert [line.tag for line in lines[:4]] == ["-", "+", "-", "+"]
    assert "".join(p.text for p in lines[2].pieces) == "line 1 was 7"
