"""examples/nightly.yml: its own commands, run here as the job would run them, two nights.

Not CI: the steps with an id (run, diff, gate) are taken from the YAML, their `${{ }}`
expressions filled in as Actions would, and run with bash in a copy of the demo project
(fixtures and slots.yaml), with `evalpin` from this environment on PATH. Night 1 has no
earlier run: a refusal saying so. Night 2 replays the same slot: compared with night 1,
no movement, the job passes.
"""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from evalpin.core.judge.report import REFUSE_LINE
from tests import actions

ROOT = Path(__file__).parents[2]
WORKFLOW = ROOT / "examples" / "nightly.yml"


def night(project: Path, run_id: str) -> actions.Done:
    return actions.night(WORKFLOW, project, run_id)


def test_the_example_workflow_runs_two_nights(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "fixtures", project / "fixtures")
    shutil.copy(ROOT / "slots.yaml", project / "slots.yaml")

    first = night(project, "1001")
    assert first["gate"].returncode == 2  # nothing earlier: refused, and says why
    assert first["diff"].stdout.splitlines()[0] == REFUSE_LINE
    assert "no earlier run on these fixtures" in (project / "report.md").read_text()

    second = night(project, "1002")
    assert second["gate"].returncode == 0, second["diff"].stdout
    summary = (project / "gh-summary.md").read_text()
    assert "## evalpin diff: no movement" in summary
    assert "Clustered call" in summary
    suite = ET.parse(project / "junit.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) == 90 and suite.get("failures") == "0"
    assert "<!DOCTYPE html>" in (project / "report.html").read_text()
    assert sorted(p.name for p in (project / "history").iterdir()) == [
        "night-1001.jsonl",
        "night-1002.jsonl",
    ]
