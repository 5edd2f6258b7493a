"""evalpin run by `nobody` (a grader that is not root), from a test run as root: a venv
of the system's Python whose site-packages are this environment's, bound over it in a
mount namespace of the test's own, and evalpin itself as a copy `nobody` can read.

The copy is what lets the suite pass wherever a user cloned it (issue 50): an editable
install points at the checkout, which may sit in a folder `nobody` cannot enter (root's
0700 home), and the non-root half would then fail with `ModuleNotFoundError`. The copy
is bound over the `evalpin` folder of the site-packages (the demo runs' one), found on
the path before the checkout's; where there is no such folder, the test is skipped,
saying why.

A pytest plugin of the suite's (conftest.py): the fixtures `nobodys_venv` and
`open_folder`.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalpin
from evalpin.run.sandbox.box import remove_tree

NOBODY = 65534
Venv = tuple[Path, list[list[str]]]


@contextlib.contextmanager
def nobody_venv() -> Iterator[Venv]:
    """The venv and the mounts that make it this environment's (see the module)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    python = f"/usr/bin/python{version}"
    if os.geteuid() != 0 or not all(map(shutil.which, ("setpriv", "unshare"))):
        pytest.skip("needs root, setpriv and unshare to become nobody with a venv")
    if not os.path.exists(python):
        pytest.skip(f"no system {python} for nobody to run")
    ours = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
    if not Path(ours, "evalpin").is_dir():
        pytest.skip(f"no evalpin folder in {ours} to show nobody a readable copy of evalpin")
    top = Path(tempfile.mkdtemp(prefix="evalpin-test-venv-"))
    top.chmod(0o755)
    try:
        subprocess.run([python, "-m", "venv", "--without-pip", str(top / "venv")], check=True)
        theirs = top / "venv" / "lib" / f"python{version}" / "site-packages"
        copy = top / "evalpin"
        for part in evalpin.__path__:  # the package, and the folder holding its demo runs
            shutil.copytree(part, copy, dirs_exist_ok=True, ignore=_NOT_COPIED)
        for folder, _, _ in os.walk(top):
            Path(folder).chmod(0o755)
        mounts = [
            ["mount", "--bind", ours, str(theirs)],
            ["mount", "--bind", str(copy), str(theirs / "evalpin")],
        ]
        yield top / "venv", mounts
    finally:
        remove_tree(top)


_NOT_COPIED = shutil.ignore_patterns("__pycache__")


def as_nobody(venv: Venv, *argv: str) -> list[str]:
    """`argv` run by the venv's Python as nobody, in a mount namespace of the test's own
    where the venv has this environment's packages and a readable evalpin."""
    folder, mounts = venv
    inner = " && ".join(shlex.join(m) for m in mounts)
    drop = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
    command = shlex.join([*drop, str(folder / "bin" / "python"), *argv])
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        f"{inner} && exec {command}",
    ]


@pytest.fixture(scope="module")
def nobodys_venv() -> Iterator[Venv]:
    """A venv `nobody` can run, with this environment's packages (see the module)."""
    with nobody_venv() as venv:
        yield venv


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A temporary folder anyone may read (pytest's own is its user's alone), for the
    sets and files an unprivileged grader reads too."""
    folder = Path(tempfile.mkdtemp(prefix="evalpin-test-"))
    folder.chmod(0o755)
    yield folder
    remove_tree(folder)
