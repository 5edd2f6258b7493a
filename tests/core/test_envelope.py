"""The envelope (issue 25): a hash over the fixture file and every file its cases read,
recorded in each run; an edit to a test file under an untouched YAML and version starts
a new history series with a named break, is flagged in `diff`, `history`, the verdict
and the review's banner, and after a version bump only the break stays. Real runs of a
one-item coding set on a replay slot, through the command line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.judge.envelope import edit
from evalpin.core.records import FixturesInfo
from tests.clirun import cli

TEST = textwrap.dedent(
    """\
    from chunks import chunked


    def test_chunks():
        assert chunked([1, 2, 3], 2) == [[1, 2], [3]]
    """
)
SOLUTION = "def chunked(xs, n):\n    return [xs[i : i + n] for i in range(0, len(xs), n)]\n"


def _yaml(version: str) -> str:
    return textwrap.dedent(
        f"""\
        schema: coding-eval/v1
        dataset_id: chunks
        dataset_version: "{version}"
        items:
          - id: chunked
            language: python
            prompt_file: prompt.md
            test_file: tests/test_chunks.py
            timeout_s: 20
            expected_files: [chunks.py]
        """
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "prompt.md").write_text("Write chunked(xs, n).\n")
    (tmp_path / "tests" / "test_chunks.py").write_text(TEST)
    (tmp_path / "coding.yaml").write_text(_yaml("1"))
    answer = {"case_id": "chunked", "files": {"chunks.py": SOLUTION}, "text": ""}
    (tmp_path / "answers.jsonl").write_text(json.dumps(answer) + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys, out: str) -> dict:
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "coding.yaml",
        "--slot",
        "coder=replay:answers.jsonl",
        "--seeds",
        "1",
        "--out",
        out,
        "--progress",
        "none",
    )
    assert r.code == 0, r.err
    return json.loads(Path(out).read_text().splitlines()[0])


def _edit_the_test(project: Path) -> None:
    path = project / "tests" / "test_chunks.py"
    path.write_text(path.read_text().replace("assert chunked", "assert  chunked"))


def test_the_header_records_the_envelope_and_hash_shows_it(capsys, project: Path) -> None:
    header = _run(capsys, "runs/a.jsonl")
    fs = load_fixtures("coding.yaml")
    fx = header["fixtures"]
    assert fx["envelope_hash"] == fs.envelope_hash != fx["dataset_hash"]
    assert sorted(fx["files"]) == ["coding.yaml", "prompt.md", "tests/test_chunks.py"]
    assert fx["lock"] == "unsealed"
    r = cli(capsys, "hash", "coding.yaml", "--json")
    shown = json.loads(r.out)
    assert shown["envelope_hash"] == fs.envelope_hash and "tests/test_chunks.py" in shown["files"]
    assert fs.envelope_hash in cli(capsys, "hash", "coding.yaml").out


def test_an_edit_without_a_version_bump_cannot_hide(capsys, project: Path) -> None:
    first = _run(capsys, "runs/a.jsonl")
    _edit_the_test(project)
    second = _run(capsys, "runs/b.jsonl")
    assert first["fixtures"]["dataset_hash"] == second["fixtures"]["dataset_hash"]  # YAML same
    assert first["fixtures"]["envelope_hash"] != second["fixtures"]["envelope_hash"]

    history = json.loads(cli(capsys, "history", "runs", "--json").out)
    assert len(history["series"]) == 2
    (brk,) = history["breaks"]
    assert "dataset edit" in brk["kinds"]
    assert brk["edit"] == {
        "files": ["tests/test_chunks.py"],
        "no_bump": True,
        "dataset_version": "1",
    }
    shown = cli(capsys, "history", "runs").out
    assert "fixtures edited: 1 file(s), tests/test_chunks.py" in shown
    assert "edited without a version bump" in shown

    diff = cli(capsys, "diff", "runs/a.jsonl", "runs/b.jsonl")
    assert diff.code == 2
    assert "fixture_hash: differs on 1 pair, e.g. chunked (seed 1)" in diff.out
    assert "fixtures edited: 1 file(s), tests/test_chunks.py" in diff.out
    assert "edited without a version bump" in diff.out

    verdict = json.loads(cli(capsys, "verdict", "runs/b.jsonl", "--json").out)
    failed = {c["rule"]: c for c in verdict["checklist"] if not c["ok"]}
    assert "version bump" in failed and verdict["label"] != "publishable"
    assert "tests/test_chunks.py" in failed["version bump"]["why"]
    earlier = json.loads(cli(capsys, "verdict", "runs/a.jsonl", "--json").out)
    assert "version bump" not in {c["rule"] for c in earlier["checklist"] if not c["ok"]}

    # Bumping the version: the break stays, the flag goes.
    (project / "coding.yaml").write_text(_yaml("2"))
    _run(capsys, "runs/c.jsonl")
    history = json.loads(cli(capsys, "history", "runs", "--json").out)
    assert len(history["series"]) == 3
    last = history["breaks"][-1]
    assert "dataset edit" in last["kinds"] and last["edit"]["no_bump"] is False
    verdict = json.loads(cli(capsys, "verdict", "runs/c.jsonl", "--json").out)
    assert "version bump" not in {c["rule"] for c in verdict["checklist"] if not c["ok"]}


async def test_the_review_banner_names_the_edit(capsys, project: Path) -> None:
    from evalpin.tui.app import EvalpinApp
    from evalpin.tui.screens.banner import BannerScreen
    from tests.tuikit import screen_text, settle

    _run(capsys, "runs/a.jsonl")
    _edit_the_test(project)
    _run(capsys, "runs/b.jsonl")
    app = EvalpinApp(Path("runs/a.jsonl"), Path("runs/b.jsonl"), cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app, "banner")
        assert isinstance(app.screen, BannerScreen)
        await settle(pilot, app, "diff")
        text = screen_text(app)
    assert "fixtures edited: 1 file(s), tests/test_chunks.py" in text
    assert "edited without a version bump" in text


def test_edit_names_every_file_that_moved() -> None:
    before = FixturesInfo("s.yaml", "coding", "s", "1", "d", envelope_hash="a", files={"x": "1"})
    after = FixturesInfo(
        "s.yaml", "coding", "s", "1", "d", envelope_hash="b", files={"x": "2", "y": "3"}
    )
    moved = edit(before, after)
    assert moved is not None and moved.files == ["x", "y"] and moved.no_bump
    assert edit(before, before) is None
    assert edit(FixturesInfo("s", "coding"), after) is None  # not recorded: nothing said


def test_a_run_records_whether_its_set_matched_its_lock(capsys, project: Path) -> None:
    assert cli(capsys, "seal", "coding.yaml").code == 0
    assert _run(capsys, "runs/a.jsonl")["fixtures"]["lock"] == "matched"
    sealed = json.loads(cli(capsys, "verdict", "runs/a.jsonl", "--json").out)
    assert {c["rule"]: c["ok"] for c in sealed["checklist"]}["sealed"] is True

    _edit_the_test(project)
    assert _run(capsys, "runs/b.jsonl")["fixtures"]["lock"] == "edited"
    verdict = json.loads(cli(capsys, "verdict", "runs/b.jsonl", "--json").out)
    failed = {c["rule"]: c for c in verdict["checklist"] if not c["ok"]}
    assert "does not match its lock" in failed["sealed"]["why"]
    assert verdict["label"] != "publishable"

    (project / "coding.yaml.lock").write_text("garbage\n")
    r = cli(
        capsys, "run", "--fixtures", "coding.yaml", "--slot", "coder=replay:answers.jsonl",
        "--seeds", "1", "--out", "runs/c.jsonl",
    )  # fmt: skip
    assert r.code == 3 and "coding.yaml.lock" in r.err and len(r.err.strip().splitlines()) == 1
    assert not Path("runs/c.jsonl").exists()
