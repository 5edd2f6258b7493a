"""The core and runner stay headless; commands other than `review` stay light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.builders import grid, write_run

PROBE = """
import sys, importlib, pkgutil
import evalpin.core, evalpin.run
for pkg in (evalpin.core, evalpin.run):
    for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(mod.name)
loaded = sorted(m for m in ("textual", "rich", "openai") if m in sys.modules)
print(",".join(loaded))
"""


def test_core_and_run_import_no_ui_or_sdk() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_diff_does_not_load_textual_or_openai(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r.jsonl", grid({"a": [True] * 3}))
    code = (
        "import sys\nfrom evalpin.cli import main\n"
        f"try:\n    main(['diff', {str(run)!r}, {str(run)!r}])\nexcept SystemExit:\n    pass\n"
        "print('LOADED=' + ','.join(m for m in ('textual', 'openai') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "LOADED=\n" in done.stdout
