"""`evalpin init`: the layout it writes works at once (check, run, verdict, diff, the CI
job), a second init keeps every file, and it refuses a DIR it cannot use."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from evalpin import __version__
from evalpin.cli.commands.init import VERSION_TOKEN, templates
from evalpin.core.judge.report import REFUSE_LINE
from tests import actions
from tests.clirun import cli

LAYOUT = {
    ".gitignore",
    "README.md",
    "slots.yaml",
    "agents/agent.py",
    "ci/nightly.yml",
    "golden/assistant.jsonl",
    "coding/set.yaml",
    "coding/prompts/word_count.md",
    "coding/tests/test_word_count.py",
    "coding/reference/words.py",
    "coding/starting/words.py",
    "replay/demo.jsonl",
    "replay/night-2.jsonl",
}
GOLDEN = "golden/assistant.jsonl"
CODING = "coding/set.yaml"


@pytest.fixture
def project(tmp_path: Path, capsys, monkeypatch) -> Path:
    """A fresh `evalpin init my-evals`, with the current folder inside it."""
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("EVAL_")]:
        monkeypatch.delenv(name)
    r = cli(capsys, "init", "my-evals")
    assert r.code == 0, r.err
    root = tmp_path / "my-evals"
    monkeypatch.chdir(root)
    return root


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_init_writes_the_whole_layout_and_says_so(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = cli(capsys, "init", "my-evals")
    assert r.code == 0, r.err
    root = tmp_path / "my-evals"
    assert _files(root) == LAYOUT
    assert (root / "runs").is_dir()
    for path in LAYOUT:
        assert f"  wrote  {path}\n" in r.out
    assert "  made   runs/\n" in r.out
    assert f"{len(LAYOUT)} file(s) written, 0 kept" in r.out
    assert "cd my-evals" in r.out
    # The templates are the package's own files, byte for byte (one token filled in).
    for template in templates():
        assert (root / template.path).read_bytes() == template.data
    assert {t.path for t in templates()} == LAYOUT


def test_init_defaults_to_the_current_folder(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = cli(capsys, "init")
    assert r.code == 0, r.err
    assert _files(tmp_path) == LAYOUT
    assert "cd " not in r.out


def test_the_layout_passes_check(project: Path, capsys) -> None:
    golden = cli(capsys, "check", GOLDEN)
    assert golden.code == 0, golden.out
    assert "2 case(s) checked, 0 problem(s)" in golden.out
    coding = cli(capsys, "check", CODING, "--strict", "--json")
    assert coding.code == 0, coding.out
    assert "word_count" in coding.out


def test_a_replay_run_works_at_once_and_verdict_and_diff_read_it(project: Path, capsys) -> None:
    first = cli(
        capsys, "run", "--fixtures", GOLDEN, "--slot", "demo_replay", "--out", "runs/a.jsonl"
    )
    assert first.code == 0, first.err
    lines = (project / "runs" / "a.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    assert header["record"] == "run" and header["model_slot"] == "demo_replay"
    assert header["env"]["evalpin"] == __version__
    cases = [json.loads(line) for line in lines[1:-1]]
    assert len(cases) == 6 and all(c["pass"] for c in cases)
    assert json.loads(lines[-1])["record"] == "summary"

    # Not in git: no scorer commit, so the verdict is `internal` (exit 1), and says why.
    verdict = cli(capsys, "verdict", "runs/a.jsonl", "--json")
    assert verdict.code == 1
    assert json.loads(verdict.out)["label"] == "internal"

    again = cli(
        capsys, "run", "--fixtures", GOLDEN, "--slot", "demo_replay", "--out", "runs/b.jsonl"
    )
    assert again.code == 0, again.err
    assert cli(capsys, "diff", "runs/a.jsonl", "runs/b.jsonl").code == 0

    night_2 = "demo_replay=replay:replay/night-2.jsonl,tier=local"
    r = cli(capsys, "run", "--fixtures", GOLDEN, "--slot", night_2, "--out", "runs/c.jsonl")
    assert r.code == 0, r.err
    moved = cli(capsys, "diff", "runs/b.jsonl", "runs/c.jsonl", "--json")
    assert moved.code == 1
    kinds = {(m["case_id"], m["kind"]) for m in json.loads(moved.out)["silent_regressions"]}
    assert kinds == {("order-status", "regressed")}

    agent = cli(capsys, "run", "--fixtures", GOLDEN, "--slot", "my_agent", "--out", "runs/d.jsonl")
    assert agent.code == 0, agent.err
    refused = cli(capsys, "diff", "runs/b.jsonl", "runs/d.jsonl")
    assert refused.code == 2
    assert refused.out.splitlines()[0] == REFUSE_LINE


def test_the_coding_item_runs_on_the_replay_slot(project: Path, capsys) -> None:
    r = cli(capsys, "run", "--fixtures", CODING, "--slot", "demo_replay", "--out", "runs/c.jsonl")
    assert r.code == 0, r.err
    cases = [json.loads(line) for line in (project / "runs/c.jsonl").read_text().splitlines()]
    graded = [c for c in cases if c.get("record") == "case"]
    assert [c["case_id"] for c in graded] == ["word_count"] * 3
    assert all(c["pass"] for c in graded), graded


def test_a_second_init_keeps_every_file_and_an_edited_one_untouched(project: Path, capsys) -> None:
    edited = project / GOLDEN
    mine = '{"id": "mine", "user": "hi", "must_include": ["hello"]}\n'
    edited.write_text(mine)
    (project / "agents" / "agent.py").unlink()
    before = {p: (project / p).read_bytes() for p in LAYOUT - {"agents/agent.py"}}
    stamps = {p: (project / p).stat().st_mtime_ns for p in before}

    r = cli(capsys, "init", str(project))
    assert r.code == 0, r.err
    assert "  wrote  agents/agent.py\n" in r.out  # only what was missing
    assert f"1 file(s) written, {len(LAYOUT) - 1} kept (already there)" in r.out
    assert f"  kept   {GOLDEN} (already there, differs from the template: not changed)" in r.out
    assert "  kept   slots.yaml (already there)\n" in r.out
    assert edited.read_text() == mine
    for path, data in before.items():
        assert (project / path).read_bytes() == data
        assert (project / path).stat().st_mtime_ns == stamps[path]

    third = cli(capsys, "init", str(project))
    assert third.code == 0
    assert f"0 file(s) written, {len(LAYOUT)} kept" in third.out
    assert "next:" not in third.out


def test_a_link_or_folder_in_the_way_is_kept_not_followed(tmp_path, capsys) -> None:
    root = tmp_path / "p"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    (root / "slots.yaml").symlink_to(outside)
    (root / "README.md").mkdir()
    r = cli(capsys, "init", str(root))
    assert r.code == 0, r.err
    assert outside.read_text() == "not yours"
    assert "  kept   slots.yaml" in r.out and "  kept   README.md" in r.out


def test_dir_that_is_a_file_is_refused_with_exit_3(tmp_path, capsys) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    r = cli(capsys, "init", str(target))
    assert r.code == 3
    assert r.err.count("\n") == 1 and "is a file, not a folder" in r.err
    assert target.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_file_where_a_folder_must_go_is_refused_before_anything_is_written(
    tmp_path, capsys
) -> None:
    (tmp_path / "golden").write_text("a file\n")
    r = cli(capsys, "init", str(tmp_path))
    assert r.code == 3
    assert "golden: is a file, where the project needs a folder" in r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_dir_that_cannot_be_made_is_refused_with_exit_3(capsys) -> None:
    r = cli(capsys, "init", "/proc/evalpin-init-test/project")
    assert r.code == 3
    assert r.err.startswith("evalpin: error: ") and r.err.count("\n") == 1


def test_a_read_only_dir_is_refused_with_exit_3(open_tmp: Path, unprivileged) -> None:
    """As a user who is not root (`nobody` when the suite is root: root writes into
    read-only folders), in a folder of that user's own that only its mode closes."""
    locked = open_tmp / "locked"
    locked.mkdir()
    os.chown(locked, unprivileged.uid, unprivileged.uid)
    locked.chmod(0o555)
    argv = unprivileged.argv("-m", "evalpin", "init", str(locked / "p"))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=open_tmp)
    assert done.returncode == 3, done.stderr
    assert "not writable, nothing written" in done.stderr
    assert not (locked / "p").exists()


def test_help_says_what_it_lays_out(capsys) -> None:
    r = cli(capsys, "init", "--help")
    assert r.code == 0
    for word in ("slots.yaml", "golden/assistant.jsonl", "coding/set.yaml", "Never overwrites"):
        assert word in r.out


_KEY_VALUE = re.compile(r"\b(sk-[A-Za-z0-9_-]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|Bearer\s+\S{8,})")


def test_the_templates_hold_no_secret_value() -> None:
    for template in templates():
        text = template.data.decode("utf-8")
        assert not _KEY_VALUE.search(text), template.path
        assert VERSION_TOKEN not in text
        for line in text.splitlines():
            # An API key is only ever named (api_key_env: NAME), never given.
            assert not re.match(r"\s*api_key\s*:", line), (template.path, line)
            # In the CI job, secrets come only from the repository's secret store.
            if "KEY" in line and ":" in line and template.path.endswith(".yml"):
                key, _, value = line.partition(":")
                if value.strip() and not key.strip().startswith("#"):
                    assert value.strip().startswith("${{ secrets."), (template.path, line)
    slots = yaml.safe_load(next(t for t in templates() if t.path == "slots.yaml").data)["slots"]
    assert {s["provider"] for s in slots.values()} == {"replay", "openai", "command"}
    live = slots["my_model"]
    assert re.fullmatch(r"[A-Z_][A-Z0-9_]*", live["api_key_env"])
    assert re.fullmatch(r"[A-Z_][A-Z0-9_]*", live["base_url_env"])
    assert "api_key" not in live and "base_url" not in live


def test_the_ci_job_installs_this_evalpin_as_the_tutorial_does() -> None:
    # No release is on a package index: the job installs the wheel kept in wheels/, with
    # the very commands the tutorial gives (scripts/release_check.sh runs them), pinned,
    # and evalpin itself with --no-index (no index is asked for a package of that name).
    job = next(t for t in templates() if t.path == "ci/nightly.yml").data.decode()
    steps = yaml.safe_load(job)["jobs"]["nightly"]["steps"]
    install = next(s["run"] for s in steps if s.get("name") == "Install evalpin")
    wheel = f"wheels/evalpin-{__version__}-py3-none-any.whl"
    assert install.splitlines() == [
        f"pip install --no-index --no-deps {wheel}",
        f"pip install {wheel}",
    ]
    tutorial = (Path(__file__).parents[2] / "docs" / "tutorial.md").read_text()
    for line in install.splitlines():
        assert f"$ {line}\n" in tutorial
    assert "pip wheel --no-deps --wheel-dir wheels" in job


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_init_writes_its_files_with_the_umask(tmp_path, capsys, umask) -> None:
    old = os.umask(umask)
    try:
        assert cli(capsys, "init", str(tmp_path / "p")).code == 0
    finally:
        os.umask(old)
    written = [p for p in (tmp_path / "p").rglob("*") if p.is_file()]
    assert len(written) == len(templates())
    for path in written:
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path


def _night(project: Path, run_id: str) -> actions.Done:
    return actions.night(project / "ci/nightly.yml", project, run_id)


@pytest.mark.skipif(shutil.which("bash") is None, reason="the job's steps are bash")
def test_the_ci_job_runs_two_nights(project: Path) -> None:
    first = _night(project, "1001")
    assert first["gate"].returncode == 2  # nothing earlier: refused, saying so
    assert first["diff"].stdout.splitlines()[0] == REFUSE_LINE
    assert "no earlier run on these fixtures" in (project / "report.md").read_text()
    second = _night(project, "1002")
    assert second["gate"].returncode == 0, second["diff"].stdout
    assert (project / "junit.xml").is_file()
    assert "night-1001.jsonl" in second["diff"].stdout
