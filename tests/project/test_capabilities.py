"""`EVALPIN_REQUIRE` (tests/capabilities.py) holds in the suite's own pytest workers: a
missing capability it claims fails, a stray skip fails, one it does not claim skips
saying why; the same in one process (`-n 0`) and on two workers (the suite's `-n 2`)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # pytest sessions of their own (tests/lanes.py)

REPO = Path(__file__).resolve().parents[2]

# A project of its own that loads the suite's conftest (its hooks and plugins).
TESTS = textwrap.dedent(
    """\
    import pytest

    from tests.capabilities import need


    def test_a_stray_skip():
        pytest.skip("nothing claims this")


    def test_a_claimed_capability_missing():
        need("bwrap", "pretended missing")


    def test_an_unclaimed_capability_missing():
        need("chromium", "pretended missing")


    def test_a_pass():
        pass
    """
)
MODULE_SKIP = 'import pytest\n\npytest.skip("skipped whole", allow_module_level=True)\n'


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_switch_fails_what_it_claims_on_every_worker(tmp_path: Path, workers: str) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.conftest"]\n')
    (tmp_path / "test_claims.py").write_text(TESTS)
    (tmp_path / "test_whole.py").write_text(MODULE_SKIP)
    env = {**os.environ, "EVALPIN_REQUIRE": "bwrap", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-n", workers]
    command += ["--continue-on-collection-errors", "test_claims.py", "test_whole.py"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    out = done.stdout
    assert done.returncode == 1, out
    assert "FAILED test_claims.py::test_a_stray_skip" in out
    assert "FAILED test_claims.py::test_a_claimed_capability_missing" in out
    assert "PASSED test_claims.py::test_a_pass" in out
    assert "ERROR test_whole.py" in out  # a whole module's skip fails too
    skipped = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1, out
    assert "test_claims.py" in skipped[0] and "not claimed here: chromium" in skipped[0]
    assert "1 skipped" in out.splitlines()[-1], out
