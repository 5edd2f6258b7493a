"""The keys: the help screen and the docs' key table (docs/tui.md) say what the bindings say.

The docs' full keys page is generated from the bindings at build time (tests/project/test_docs.py).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from evalpin.tui.app import EvalpinApp
from evalpin.tui.screens.help import KEY_NAMES, help_table, key_label, sections
from evalpin.tui.screens.review import ReviewScreen
from evalpin.tui.screens.verdict import VerdictScreen
from evalpin.tui.widgets.case_list import CaseList
from tests.tuikit import SIZE, new_app, pair, screen_text, settle

TUI_PAGE = Path(__file__).parents[2] / "docs" / "tui.md"
# The page's words for keys that are not backticked.
PAGE_WORDS = {label: name for name, label in KEY_NAMES.items()}
MOUSE = {"click"}


def bound_keys(bindings) -> set[str]:
    return {key.strip() for b in bindings for key in b.key.split(",")}


def page_keys() -> set[str]:
    """Every key named in the TUI page's `| key | does |` table, as Textual key names."""
    text = TUI_PAGE.read_text(encoding="utf-8")
    table = text.split("| key | does |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    found: set[str] = set()
    for row in table.splitlines():
        cell = row.split("|")[1]
        for key in re.findall(r"`([^`]+)`", cell):
            found.add({"/": "slash", "?": "question_mark"}.get(key, key))
        for word in re.sub(r"`[^`]+`", " ", cell).replace(",", " ").split():
            if word not in MOUSE:
                found.add(PAGE_WORDS[word])  # a KeyError: a word on the page with no key name
        does = row.split("|")[2]
        found |= {k for k in re.findall(r"`([^`]+)`", does)}  # e.g. "`e` export"
    return found


def test_key_labels() -> None:
    assert key_label("up,k") == "↑ k"
    assert key_label("ctrl+s") == "Ctrl+S"
    assert key_label("escape,question_mark,enter") == "Esc ? Enter"


def test_docs_key_table_matches_the_bindings() -> None:
    everywhere = set().union(*(bound_keys(b) for _, b in sections(EvalpinApp.BINDINGS)))
    documented = page_keys()
    # Every key the page names is bound somewhere...
    assert documented <= everywhere, documented - everywhere
    # ...and every key of the review screen, the app and the case list is on the page.
    review = bound_keys(ReviewScreen.BINDINGS + EvalpinApp.BINDINGS + CaseList.BINDINGS)
    assert review <= documented, review - documented
    assert "e" in bound_keys(VerdictScreen.BINDINGS)


def test_help_table_lists_every_binding() -> None:
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(help_table(sections(EvalpinApp.BINDINGS)))
    text = console.export_text()
    for section, bindings in sections(EvalpinApp.BINDINGS):
        assert section in text
        for binding in bindings:
            assert f"{key_label(binding.key)}  " in text, binding
            assert (binding.tooltip or binding.description) in text, binding


async def test_help_screen_shows_the_table(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=(SIZE[0], 200)) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "Case list" in text and "Launch panel" in text
        assert "next changed case" in text  # a tooltip of the review screen's `n`
        assert "Ctrl+S" in text and "Ctrl+X" in text  # the launch panel's, from its bindings
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)
