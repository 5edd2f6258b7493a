"""Python as an unprivileged user, for the non-root half of the suite (a pytest plugin).

The fixture `unprivileged` gives a `Unprivileged`: `argv(*args)` is a command that runs
this environment's Python with `args` as a user who is not root, and `uid` that user.
Not root already: this Python, as this user. Root: `nobody`, through `setpriv`, with a
venv of the system's Python of this version (this one may live under root's home, out
of nobody's reach) whose site-packages are this environment's, bound over its own in a
mount namespace the command makes (so nothing on the host is mounted), and evalpin itself
as a copy nobody can read, bound over the site-packages' `evalpin` folder: an editable
install points at the checkout, which may sit in a folder nobody cannot enter (root's
0700 home), so the suite passes wherever a user cloned it (issue 50). Where that
cannot be made, the test skips, or fails under `EVALPIN_REQUIRE` (tests/capabilities.py).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import evalpin
from evalpin.run.sandbox.box import remove_tree
from tests.capabilities import need

NOBODY = 65534


@dataclass(frozen=True)
class Unprivileged:
    uid: int
    python: str
    # The mounts that give the venv this environment's packages and a copy of evalpin
    # anyone may read (the checkout may sit in a folder only root enters), or none.
    mounts: list[list[str]]

    def argv(self, *args: str) -> list[str]:
        if not self.mounts:
            return [self.python, *args]
        drop = ["setpriv", "--reuid", str(self.uid), "--regid", str(self.uid), "--clear-groups"]
        command = shlex.join([*drop, self.python, *args])
        inner = " && ".join([*map(shlex.join, self.mounts), f"exec {command}"])
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner]


@pytest.fixture(scope="session")
def unprivileged() -> Iterator[Unprivileged]:
    if os.geteuid() != 0:
        yield Unprivileged(os.geteuid(), sys.executable, [])
        return
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    python = f"/usr/bin/python{version}"
    if not all(map(shutil.which, ("setpriv", "unshare"))):
        need("unprivileged", "root needs setpriv and unshare to become nobody")
    if not os.path.exists(python):
        need("unprivileged", f"no system {python} for nobody to run")
    ours = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
    if not Path(ours, "evalpin").is_dir():
        need("unprivileged", f"no evalpin folder in {ours} to show nobody a readable copy")
    top = Path(tempfile.mkdtemp(prefix="evalpin-test-venv-"))
    top.chmod(0o755)
    try:
        venv = top / "venv"
        subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
        theirs = venv / "lib" / f"python{version}" / "site-packages"
        copy = top / "evalpin"
        for part in evalpin.__path__:  # the package, and the folder holding its demo runs
            shutil.copytree(part, copy, dirs_exist_ok=True, ignore=_NOT_COPIED)
        for folder, _, _ in os.walk(top):
            Path(folder).chmod(0o755)
        mounts = [
            ["mount", "--bind", ours, str(theirs)],
            ["mount", "--bind", str(copy), str(theirs / "evalpin")],
        ]
        yield Unprivileged(NOBODY, str(venv / "bin" / "python"), mounts)
    finally:
        remove_tree(top)


_NOT_COPIED = shutil.ignore_patterns("__pycache__")


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary folder anyone may enter (pytest's own is its user's alone), for what
    an unprivileged user must read or write."""
    folder = Path(tempfile.mkdtemp(prefix="evalpin-test-"))
    folder.chmod(0o755)
    yield folder
    remove_tree(folder)
