"""The hash published before the metric (issue 51): `evalpin run` records the seal it ran
against and the commit that published it before the run started; the verdict's rule
holds only then, checks the record against the repository at hand, and the card prints
the commit beside the hash. Real git repositories in temporary folders, real runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.clirun import cli

RULE = "hash published before the metric"
GOLDEN = "golden/assistant.jsonl"
RUN = ("--slot", "demo_replay", "--seeds", "11,29,47", "--temperature", "0")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root: Path, *args: str, when: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    if when is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = when
    config = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    config += ["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
    done = subprocess.run(
        ["git", *config, *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _later() -> str:
    """A commit time a minute after now (commit times are whole seconds: one made now
    could share the run's start second)."""
    return f"{int(time.time()) + 60} +0000"


@pytest.fixture
def project(tmp_path: Path, capsys, monkeypatch) -> Path:
    """A fresh `evalpin init` project in its own git repository, first commit made."""
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith(("EVAL_", "GIT_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    assert cli(capsys, "init", "p").code == 0
    root = tmp_path / "p"
    monkeypatch.chdir(root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the project")
    return root


def _run(capsys, out: str) -> dict:
    r = cli(capsys, "run", "--fixtures", GOLDEN, *RUN, "--out", out, "--progress", "none")
    assert r.code == 0, r.err
    return json.loads(Path(out).read_text().splitlines()[0])


def _verdict(capsys, run: str) -> tuple[dict, dict | None]:
    r = cli(capsys, "verdict", run, "--json")
    verdict = json.loads(r.out)
    rule = next((c for c in verdict["checklist"] if c["rule"] == RULE), None)
    return verdict, rule


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def test_sealed_and_committed_before_the_run_holds(project: Path, capsys) -> None:
    assert cli(capsys, "seal", GOLDEN).code == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "seal")
    commit = git(project, "rev-parse", "HEAD").strip()
    header = _run(capsys, "runs/a.jsonl")
    seal = header["seal"]
    assert seal["commit"] == commit and seal["by"] == "git" and seal["lock"] == GOLDEN + ".lock"
    assert seal["envelope_hash"] == header["fixtures"]["envelope_hash"]
    assert _when(seal["committed_at"]) <= _when(header["started_at"])  # to the second vs ms
    verdict, rule = _verdict(capsys, "runs/a.jsonl")
    assert rule is not None and rule["ok"] and rule["value"] == commit
    assert verdict["label"] == "publishable", verdict["reasons"]
    r = cli(capsys, "verdict", "runs/a.jsonl", "--card", "card.md")
    card = (project / "card.md").read_text()
    row = next(line for line in card.splitlines() if "envelope hash (publish this)" in line)
    assert header["fixtures"]["envelope_hash"] in row and commit in row, row
    assert RULE in r.out


def test_committed_after_the_run_started_reads_internal(project: Path, capsys) -> None:
    assert cli(capsys, "seal", GOLDEN).code == 0
    header = _run(capsys, "runs/a.jsonl")  # the lock is written, not committed
    assert header["seal"]["commit"] is None if "commit" in header["seal"] else True
    assert "not committed" in header["seal"]["why"]
    git(project, "add", "-A")
    git(project, "commit", "-qm", "seal, too late", when=_later())
    verdict, rule = _verdict(capsys, "runs/a.jsonl")
    assert verdict["label"] == "internal" and rule is not None and not rule["ok"]
    assert "after the run started" in rule["why"] and "evalpin seal" in rule["why"]
    card = cli(capsys, "verdict", "runs/a.jsonl", "--card", "card.md")
    assert card.code == 1 and not (project / "card.md").exists()


@pytest.mark.parametrize(
    ("break_it", "said"),
    [
        ("no lock", "no lock beside the set"),
        ("another hash", "no commit's lock names this envelope hash"),
        ("not in git", "not in a git repository"),
        ("edited", "the set was edited since it was sealed"),
    ],
)
def test_each_way_of_not_publishing_is_named(project: Path, capsys, break_it, said) -> None:
    if break_it == "another hash":  # sealed and committed, then edited and re-sealed
        assert cli(capsys, "seal", GOLDEN).code == 0
        git(project, "add", "-A")
        git(project, "commit", "-qm", "seal")
        golden = project / GOLDEN
        golden.write_text(golden.read_text() + '{"id": "late", "user": "hi", "must_not": ["x"]}\n')
        assert cli(capsys, "seal", "--force", GOLDEN).code == 0
    elif break_it == "edited":  # sealed and committed, then edited without a new seal
        assert cli(capsys, "seal", GOLDEN).code == 0
        git(project, "add", "-A")
        git(project, "commit", "-qm", "seal")
        golden = project / GOLDEN
        golden.write_text(golden.read_text().replace("Where is", "Where is now", 1))
    elif break_it == "not in git":
        assert cli(capsys, "seal", GOLDEN).code == 0
        shutil.rmtree(project / ".git")
    header = _run(capsys, "runs/a.jsonl")
    assert said in header["seal"]["why"]
    verdict, rule = _verdict(capsys, "runs/a.jsonl")
    assert verdict["label"] != "publishable" and rule is not None and not rule["ok"]
    assert said in rule["why"]


def _rewrite_header(path: Path, **seal: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["seal"].update(seal)
    lines[0] = json.dumps(header) + "\n"
    path.write_text("".join(lines))


def test_a_recorded_commit_is_checked_against_the_repository(project: Path, capsys) -> None:
    """A header is a fact: a commit it names must be in the repository, name the hash and
    have the recorded time; a record that predates nothing is refused."""
    assert cli(capsys, "seal", GOLDEN).code == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "seal", when="2026-01-02T03:04:05+00:00")
    _run(capsys, "runs/a.jsonl")
    run = project / "runs/a.jsonl"
    good = run.read_text()
    first = git(project, "rev-list", "--max-parents=0", "HEAD").strip()  # no lock in it
    for forged, said in (
        ({"committed_at": "2026-01-01T00:00:00Z"}, "is not the commit's"),
        ({"commit": first}, "names another envelope hash"),
        ({"committed_at": "2099-01-01T00:00:00Z"}, "after the run started"),
    ):
        run.write_text(good)
        _rewrite_header(run, **forged)
        verdict, rule = _verdict(capsys, str(run))
        assert verdict["label"] == "internal" and not rule["ok"] and said in rule["why"], rule
    run.write_text(good)
    _rewrite_header(run, commit="f" * 40)  # not in this clone: not checked, said
    verdict, rule = _verdict(capsys, str(run))
    assert rule["ok"] and any("not in this clone" in n for n in verdict["notes"])


def _drop_seal(run: Path) -> None:
    lines = run.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["seal"]
    run.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))


def test_a_run_that_records_no_seal_is_judged_by_the_repository(project: Path, capsys) -> None:
    """A run made before runs recorded their seal: the repository at hand decides, and
    says it looked; without one, or with the lock committed later, it is internal."""
    assert cli(capsys, "seal", GOLDEN).code == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "seal")
    _run(capsys, "runs/a.jsonl")
    run = project / "runs/a.jsonl"
    _drop_seal(run)
    verdict, rule = _verdict(capsys, str(run))
    assert rule["ok"] and rule["value"] == git(project, "rev-parse", "HEAD").strip()
    assert any("records no seal" in n for n in verdict["notes"])
    shutil.rmtree(project / ".git")
    verdict, rule = _verdict(capsys, str(run))
    assert verdict["label"] == "internal" and "no repository here shows one" in rule["why"]


def test_no_seal_recorded_and_committed_after_the_run_is_internal(project, capsys) -> None:
    assert cli(capsys, "seal", GOLDEN).code == 0
    _run(capsys, "runs/a.jsonl")
    run = project / "runs/a.jsonl"
    _drop_seal(run)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "seal, too late", when=_later())
    verdict, rule = _verdict(capsys, str(run))
    assert verdict["label"] == "internal" and "after the run started" in rule["why"]
