"""How to install an optional extra (`serve`, `cluster`), said so that it works here.

No release of evalpin is on a package index, so asking one for evalpin's extra by name
finds nothing (or, worse, a package someone else published under the name). From a checkout
(an editable or source install), the extra installs from that folder; from a wheel, the
folder is unknown, so the extra's own packages are named, as its metadata lists them.
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
from pathlib import Path

_EXTRA = re.compile(r"""^(?P<req>[^;]+);\s*extra\s*==\s*["'](?P<extra>[\w-]+)["']\s*$""")


def checkout() -> Path | None:
    """The source checkout this evalpin runs from (src layout), or None (a wheel)."""
    root = Path(__file__).resolve().parents[3]
    project = root / "pyproject.toml"
    if project.is_file() and 'name = "evalpin"' in project.read_text(encoding="utf-8"):
        return root
    return None


def extra_packages(extra: str) -> list[str]:
    """The requirements `extra` adds, from the installed metadata."""
    try:
        requires = importlib.metadata.requires("evalpin") or []
    except importlib.metadata.PackageNotFoundError:
        requires = []
    found = (_EXTRA.match(r) for r in requires)
    return [m["req"].strip() for m in found if m and m["extra"] == extra]


def install_hint(extra: str) -> str:
    """A pip command that installs `extra` into this environment."""
    root = checkout()
    if root is not None:
        return f"pip install {shlex.quote(f'{root}[{extra}]')}"
    packages = extra_packages(extra)
    if not packages:  # no metadata: say where the extra comes from
        return f"pip install '/path/to/evalpin[{extra}]' (from your checkout's folder)"
    return "pip install " + " ".join(shlex.quote(r) for r in packages)
