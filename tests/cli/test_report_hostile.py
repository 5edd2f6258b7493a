"""Hostile case ids, reasons, completions and tails in the Markdown, JUnit and HTML reports.

Each output is checked the way its reader would take it: the Markdown rendered as
CommonMark with raw HTML on (as GitHub's step summary does), the JUnit parsed as XML,
the HTML parsed for tags. Nothing may become a link, image, tag, mention, or a control
or bidi character; the text itself must still be there to read.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.builders import case, header, write_run
from tests.clirun import cli
from tests.pages import md_html, tags_of

HOSTILE_ID = (
    "x](javascript:alert(1)) <script>alert(1)</script> <img src=x onerror=alert(1)> "
    "@octocat \u202eevil\u202c \x1b[31mred\x1b[0m |**b**| `tick` www.evil.example \uffff"
)
HOSTILE_REASONS = [
    "missing_text:<img src=x onerror=alert(2)>",
    "forbidden_text:[click](javascript:alert(document.cookie))",
    "missing_tool:@here",
    "forbidden_text:![i](https://evil.example/p.png)",
]
HOSTILE_TAIL = (
    '<script>alert("tail")</script>\n\x1b]52;c;ZXZpbA==\x07 \u202e\n'
    "![x](https://evil.example/p.png) <a href=javascript:alert(3)>go</a> @team"
)
HOSTILE_TEXT = "<script>alert('completion')</script> [x](javascript:alert(4))"
DANGEROUS_CHARS = ("\x1b", "\x07", "\u202e", "\u202c")


def pair(tmp_path: Path, refused: bool = False) -> tuple[Path, Path]:
    left = write_run(
        tmp_path / "left.jsonl",
        [case(HOSTILE_ID, True, text=HOSTILE_TEXT), case("plain", True)],
    )
    over = {}
    if refused:
        over = {"model_slot": "slot <script>x</script> @octocat \u202e", "reported_model": "m"}
    right = write_run(
        tmp_path / "right.jsonl",
        [
            case(
                HOSTILE_ID,
                False,
                reasons=HOSTILE_REASONS,
                tail=HOSTILE_TAIL,
                text=HOSTILE_TEXT,
                **over,
            ),
            case("plain", True, **over),
        ],
        head=header(**({"model_slot": over["model_slot"]} if refused else {})),
    )
    return left, right


@pytest.mark.parametrize("refused", [False, True])
def test_markdown_keeps_hostile_text_inert(capsys, tmp_path, refused):
    left, right = pair(tmp_path, refused)
    out = tmp_path / "r.md"
    result = cli(capsys, "diff", str(left), str(right), "--markdown", str(out))
    assert result.code == (2 if refused else 1)
    text = out.read_text()
    for raw in ("](javascript:", "<script>", "<img", "@octocat", "@here", "](https:"):
        assert raw not in text
    for char in DANGEROUS_CHARS:
        assert char not in text
    rendered = md_html(text)
    parsed = tags_of(rendered)
    assert not [t for t, _ in parsed.tags if t in ("a", "img", "script", "iframe")]
    shown = "".join(parsed.text)
    assert "<script>alert(1)</script>" in shown.replace("\u2060", "")  # readable as text
    assert "\\u202e" in shown  # the override shown, not obeyed
    if refused:
        assert "slot <script>x</script> @\u2060octocat \\u202e" in shown
    else:
        assert "[click](javascript:alert(document.cookie))" in shown


@pytest.mark.parametrize("refused", [False, True])
def test_junit_keeps_hostile_text_inert(capsys, tmp_path, refused):
    left, right = pair(tmp_path, refused)
    out = tmp_path / "j.xml"
    cli(capsys, "diff", str(left), str(right), "--junit", str(out))
    raw = out.read_text()
    assert "<script>" not in raw and "<img" not in raw
    for char in DANGEROUS_CHARS:
        assert char not in raw
    root = ET.fromstring(raw.encode())  # well-formed XML despite the control bytes
    failures = root.iter("failure")
    text = "".join((f.get("message") or "") + (f.text or "") for f in failures)
    assert "\\x1b" in text
    if refused:
        assert "slot <script>x</script> @octocat \\u202e" in text
    else:
        assert "missing_text:<img src=x onerror=alert(2)>" in text
        assert '<script>alert("tail")</script>' in text


@pytest.mark.parametrize("refused", [False, True])
def test_html_keeps_hostile_text_inert(capsys, tmp_path, refused):
    left, right = pair(tmp_path, refused)
    out = tmp_path / "r.html"
    cli(capsys, "diff", str(left), str(right), "--html", str(out))
    page = out.read_text()
    for char in DANGEROUS_CHARS:
        assert char not in page
    parsed = tags_of(page)
    assert not [t for t, _ in parsed.tags if t in ("a", "img", "script", "iframe", "link")]
    assert not [a for _, attrs in parsed.tags for a in attrs if a.startswith("on")]
    shown = "".join(parsed.text)
    assert "<script>alert(1)</script>" in shown
    if not refused:
        assert '<script>alert("tail")</script>' in shown
        assert "<img src=x onerror=alert(2)>" in shown


def test_an_unreadable_run_writes_no_report(capsys, tmp_path):
    """A run the reader refuses (here a lone surrogate escape) exits 3 and leaves no
    report file for CI to publish: nothing is written half-way."""
    left = write_run(tmp_path / "l.jsonl", [case("ok", True)])
    right = tmp_path / "r.jsonl"
    write_run(right, [case("ok", False, reasons=["PLACEHOLDER"])])
    right.write_text(right.read_text().replace("PLACEHOLDER", "bad\\ud800"))
    outs = [tmp_path / "out" / name for name in ("r.md", "r.xml", "r.html")]
    flags = ["--markdown", str(outs[0]), "--junit", str(outs[1]), "--html", str(outs[2])]
    result = cli(capsys, "diff", str(left), str(right), *flags)
    assert result.code == 3
    assert "r.jsonl:2" in result.err
    assert not (tmp_path / "out").exists()
