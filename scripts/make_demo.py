"""Regenerate the bundled demo runs in runs/ with the real command line, then check them.

    python scripts/make_demo.py

Every run is made by `python -m evalpin run` from the recorded completions in fixtures/
(replay slots, so no network and no key are needed), in this order, newest last:

  runs/demo-coding-probe.jsonl          coding set, coder_a, 2 seeds       -> exploratory-probe
  runs/demo-coding-publishable.jsonl    coding set, coder_a, 3 seeds, T=0,
                                        one repair round                   -> publishable
  runs/demo-night-1.jsonl               golden set, lab_free_1, night 1    -> internal
  runs/demo-night-2.jsonl               golden set, lab_free_1, night 2    -> internal
                                                                 diff vs night 1: exit 1
  runs/demo-night-2-lab_free_2.jsonl    golden set, lab_free_2, night 2    -> internal
                                                                 diff vs night 2: exit 2

coder_a is a `dedicated` slot in slots.yaml; lab_free_1 and lab_free_2 are `free`, so the
nights are `internal` whatever else holds ("free or rotating backend: not a formal claim").

`evalpin review` with no arguments opens the newest run beside the newest earlier run on
the same fixture set, so the demo opens on the refused pair. Each run starts in a later
second than the one before, so the order holds by start time as well as by file time.

Only the five files above are deleted and rewritten; anything else in runs/ is left alone.
Afterwards the script runs `evalpin diff` and `evalpin verdict` on the runs, prints a
summary, and exits 1 when any outcome differs from the above.

`publishable` needs a clean scorer commit and the hash published before the metric: the
coding set's lock (fixtures/repairs/coding.yaml.lock) matching the set and committed
before the runs start, so commit fixtures/ (locks included) first; after an edit of the
set, `evalpin seal fixtures/repairs/coding.yaml` (with the version bumped) and commit,
then run this script. When fixtures/ has uncommitted changes (or is not in git), the lock
does not match its set, or network isolation is not enforced on this machine, the runs
are still made and that one expectation becomes a warning.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from evalpin.core.tiers import NOT_FORMAL

ROOT = Path(__file__).resolve().parent.parent

GOLDEN = "fixtures/orders/golden.jsonl"
CODING = "fixtures/repairs/coding.yaml"
NIGHT_2 = "fixtures/completions/lab_free_1-night-2.jsonl"
SEEDS = "11,29,47"

PROBE = "runs/demo-coding-probe.jsonl"
PUBLISHABLE = "runs/demo-coding-publishable.jsonl"
NIGHT_1_RUN = "runs/demo-night-1.jsonl"
NIGHT_2_RUN = "runs/demo-night-2.jsonl"
ROTATED_RUN = "runs/demo-night-2-lab_free_2.jsonl"

# (output, fixtures, slot, extra flags), in the order they must be made (newest last).
RUNS: list[tuple[str, str, str, list[str]]] = [
    (PROBE, CODING, "coder_a", ["--seeds", "11,29", "--temperature", "0"]),
    (PUBLISHABLE, CODING, "coder_a", ["--seeds", SEEDS, "--temperature", "0", "--loops", "1"]),
    (NIGHT_1_RUN, GOLDEN, "lab_free_1", ["--seeds", SEEDS, "--temperature", "0"]),
    (
        NIGHT_2_RUN,
        GOLDEN,
        f"lab_free_1=replay:{NIGHT_2},tier=free",
        ["--seeds", SEEDS, "--temperature", "0"],
    ),
    (ROTATED_RUN, GOLDEN, "lab_free_2", ["--seeds", SEEDS, "--temperature", "0"]),
]

REFUSE_LINE = "REFUSE_DIFF: triple mismatch, not a prompt regression"
PUBLISHED_RULE = "hash published before the metric"


@dataclass
class Report:
    """What the checks found: failures make the exit code, warnings only get printed."""

    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def expect(self, ok: bool, message: str) -> None:
        if not ok:
            self.failures.append(message)


def child_env() -> dict[str, str]:
    """The caller's environment without the EVAL_* control-plane variables, so the demo
    runs are made with the flags below and nothing else."""
    return {k: v for k, v in os.environ.items() if not k.startswith("EVAL_")}


def evalpin(*args: str, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalpin", *args],
        cwd=root,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def fixtures_state(root: Path) -> str | None:
    """None when fixtures/ is committed and clean, else why the scorer commit is not."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "fixtures/"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"git is not usable here ({exc})"
    if done.returncode != 0:
        return "fixtures/ is not in a git repository"
    changed = done.stdout.splitlines()
    if changed:
        shown = ", ".join(line[3:] for line in changed[:3])
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return f"fixtures/ has uncommitted or untracked files ({shown}{more})"
    tracked = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--", "fixtures/"],
        capture_output=True,
        text=True,
        check=False,
    )
    if not tracked.stdout.strip():
        return "fixtures/ is not committed"
    return None


def seal_state(root: Path) -> str | None:
    """None when the coding set matches its committed lock, else why not (the runs could
    not show their envelope hash published before the metric)."""
    done = evalpin("seal", "--check", CODING, root=root)
    if done.returncode != 0:
        said = (done.stdout + done.stderr).strip().splitlines()
        first = said[0] if said else f"exit {done.returncode}"
        return f"the coding set does not match its lock ({first}): re-seal it and commit"
    return None


def wait_for_next_second(previous_start: float | None) -> None:
    """Run headers record start times to the second: keep each run in a later second."""
    if previous_start is not None:
        delay = int(previous_start) + 1 - time.time()
        if delay > 0:
            time.sleep(delay)


def make_runs(root: Path) -> None:
    for out, _, _, _ in RUNS:
        (root / out).unlink(missing_ok=True)
    started = None
    for out, fixtures, slot, flags in RUNS:
        wait_for_next_second(started)
        started = time.time()
        args = ["run", "--fixtures", fixtures, "--slot", slot, *flags, "--jobs", "2"]
        args += ["--out", out, "--progress", "none"]
        print("$ evalpin " + " ".join(args), flush=True)
        done = evalpin(*args, root=root)
        if done.returncode != 0:
            sys.stderr.write(done.stdout + done.stderr)
            raise SystemExit(f"make_demo: evalpin run failed (exit {done.returncode}) for {out}")
        for line in done.stderr.splitlines():
            if line.startswith("warning"):
                print("  " + line)


def header(root: Path, run: str) -> dict:
    with (root / run).open(encoding="utf-8") as fh:
        return json.loads(fh.readline())


def check_night_diff(root: Path, report: Report) -> None:
    done = evalpin("diff", NIGHT_1_RUN, NIGHT_2_RUN, "--json", root=root)
    report.expect(done.returncode == 1, f"diff night-1 night-2: exit {done.returncode}, not 1")
    try:
        moved = json.loads(done.stdout)["silent_regressions"]
    except (ValueError, KeyError):
        report.failures.append("diff night-1 night-2 --json: unreadable output")
        return
    counts = {kind: 0 for kind in ("regressed", "fixed", "drift")}
    cases: dict[str, set[str]] = {kind: set() for kind in counts}
    for row in moved:
        counts[row["kind"]] += 1
        cases[row["kind"]].add(row["case_id"])
    for kind, n in counts.items():
        report.expect(n > 0, f"diff night-1 night-2: no {kind} case")
    report.lines.append(
        f"diff night-1 night-2      exit {done.returncode}: "
        + ", ".join(f"{n} {kind} ({len(cases[kind])} cases)" for kind, n in counts.items())
    )


def check_refusal(root: Path, report: Report) -> None:
    done = evalpin("diff", NIGHT_2_RUN, ROTATED_RUN, root=root)
    lines = done.stdout.splitlines()
    report.expect(done.returncode == 2, f"diff night-2 lab_free_2: exit {done.returncode}, not 2")
    report.expect(
        bool(lines) and lines[0] == REFUSE_LINE, "diff night-2 lab_free_2: REFUSE_DIFF not first"
    )
    named = [line.split(":")[0].strip() for line in lines[1:] if line.startswith("  ")]
    report.expect("model_slot" in named, "diff night-2 lab_free_2: model_slot not named")
    report.lines.append(f"diff night-2 lab_free_2   exit {done.returncode}: refused on {named}")


def check_verdict(
    root: Path,
    run: str,
    expected: str,
    report: Report,
    *,
    why_not: str | None,
    reason: str | None = None,
):
    done = evalpin("verdict", run, "--json", root=root)
    try:
        verdict = json.loads(done.stdout)
    except ValueError:
        report.failures.append(f"verdict {run}: unreadable output (exit {done.returncode})")
        return
    label = verdict["label"]
    rates = ", ".join(f"{s}: {r:.3f}" for s, r in verdict["pass_rate_by_seed"].items())
    extra = " UNSTABLE" if verdict["unstable"] else ""
    report.lines.append(
        f"verdict {Path(run).name:<29} exit {done.returncode}: {label} "
        f"(pass rate per seed {rates}; spread {verdict['spread']:.3f}{extra})"
    )
    if reason is not None and reason not in verdict["reasons"]:
        report.failures.append(f"verdict {run}: reason {reason!r} not given")
    published = [c for c in verdict["checklist"] if c["rule"] == PUBLISHED_RULE]
    if published and published[0]["ok"]:
        report.lines.append(f"  its envelope hash was published in commit {published[0]['value']}")
    if label == expected:
        if why_not:
            commit = verdict["pins"]["scorer_commit"]["value"]
            report.warnings.append(
                f"{run} is '{label}' although {why_not}: its scorer commit {commit} "
                "may not hold these fixtures"
            )
        return
    message = f"verdict {run}: '{label}', expected '{expected}' ({'; '.join(verdict['reasons'])})"
    if why_not:
        report.warnings.append(f"{message}; expected because {why_not}")
    else:
        report.failures.append(message)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="Project folder holding fixtures/, slots.yaml and runs/ (default: this repo).",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()

    dirty = fixtures_state(root) or seal_state(root)
    if dirty:
        bar = "!" * 78
        print(bar)
        print(f"WARNING: {dirty}.")
        print(f"The coding run {PUBLISHABLE} cannot be 'publishable': its scorer")
        print("commit is missing or dirty, or its seal is not the one committed. Seal and")
        print("commit fixtures/ first, then run this script again.")
        print(bar, flush=True)

    make_runs(root)

    report = Report()
    network = header(root, PUBLISHABLE).get("controls", {}).get("network")
    why_not = dirty
    if network != "off-enforced":
        note = f"network isolation is not enforced on this machine (network: {network})"
        why_not = f"{why_not}; {note}" if why_not else note
    check_night_diff(root, report)
    check_refusal(root, report)
    check_verdict(root, PROBE, "exploratory-probe", report, why_not=None)
    check_verdict(root, PUBLISHABLE, "publishable", report, why_not=why_not)
    for night in (NIGHT_1_RUN, NIGHT_2_RUN, ROTATED_RUN):
        check_verdict(root, night, "internal", report, why_not=None, reason=NOT_FORMAL)

    print()
    print("\n".join(report.lines))
    for warning in report.warnings:
        print(f"warning: {warning}")
    for failure in report.failures:
        print(f"FAILED: {failure}")
    if report.failures:
        return 1
    print(f"demo runs ready in {root / 'runs'}; open them with: evalpin review")
    return 0


if __name__ == "__main__":
    sys.exit(main())
