"""A nightly GitHub Actions job's own steps, run here as one night of it would run them.

Only the steps with an id (run, diff, gate) are taken from the YAML: checkout, install and
artifacts are Actions' own. Their `${{ }}` expressions are filled in as Actions would
(`github.run_id`, and each step's outputs from `$GITHUB_OUTPUT`), and each runs with
bash in the project, with `evalpin` from this environment on PATH and no `EVAL_*`
setting of the caller's. Every step but the gate must succeed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

_EXPR = re.compile(r"\$\{\{\s*([\w.]+)\s*\}\}")
STEP_IDS = ("run", "diff", "gate")


def night(
    workflow: Path, project: Path, run_id: str
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Each step's finished process, by its id."""
    steps = yaml.safe_load(workflow.read_text())["jobs"]["nightly"]["steps"]
    (project / "gh-output").write_text("")
    context = {"github.run_id": run_id}
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVAL_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
        GITHUB_OUTPUT=str(project / "gh-output"),
        GITHUB_STEP_SUMMARY=str(project / "gh-summary.md"),
    )
    done = {}
    for step in steps:
        if step.get("id") not in STEP_IDS:
            continue
        script = _EXPR.sub(lambda m: context[m.group(1)], step["run"])
        done[step["id"]] = result = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        for line in (project / "gh-output").read_text().splitlines():
            key, _, value = line.partition("=")
            context[f"steps.{step['id']}.outputs.{key}"] = value
        assert step["id"] == "gate" or result.returncode == 0, result.stderr
    return done
