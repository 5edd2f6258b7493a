"""Python as an unprivileged user, for the non-root half of the suite (a pytest plugin).

The fixture `unprivileged` gives a `Unprivileged`: `argv(*args)` is a command that runs
this environment's Python with `args` as a user who is not root, and `uid` that user.
Not root already: this Python, as this user. Root: `nobody`, through `setpriv`, with a
venv of the system's Python of this version (this one may live under root's home, out
of nobody's reach) whose site-packages are this environment's, bound over its own in a
mount namespace the command makes (so nothing on the host is mounted). Where that
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

from evalpin.run.sandbox.box import remove_tree
from tests.capabilities import need

NOBODY = 65534


@dataclass(frozen=True)
class Unprivileged:
    uid: int
    python: str
    bind: list[str]  # the mount that gives the venv this environment's packages, or []

    def argv(self, *args: str) -> list[str]:
        if not self.bind:
            return [self.python, *args]
        drop = ["setpriv", "--reuid", str(self.uid), "--regid", str(self.uid), "--clear-groups"]
        command = shlex.join([*drop, self.python, *args])
        inner = f"{shlex.join(self.bind)} && exec {command}"
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
    top = Path(tempfile.mkdtemp(prefix="evalpin-test-venv-"))
    top.chmod(0o755)
    try:
        venv = top / "venv"
        subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
        theirs = venv / "lib" / f"python{version}" / "site-packages"
        yield Unprivileged(
            NOBODY, str(venv / "bin" / "python"), ["mount", "--bind", ours, str(theirs)]
        )
    finally:
        remove_tree(top)


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary folder anyone may enter (pytest's own is its user's alone), for what
    an unprivileged user must read or write."""
    folder = Path(tempfile.mkdtemp(prefix="evalpin-test-"))
    folder.chmod(0o755)
    yield folder
    remove_tree(folder)
