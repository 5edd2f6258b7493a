"""`evalpin seal` and `evalpin seal --check`: the lock beside a fixture set.

Through the real command line (tests/clirun.py): seal, check matched; an edit to a test
file under an unchanged version named file and case (exit 1); a bump passes with a note
and re-seals; a garbage, truncated or foreign lock is exit 3 with one line and nothing
written; re-sealing an edited same-version set needs --force; odd ids and paths
round-trip. The examples' own commands run in a copy of a set, and the bundled sets are
checked against their committed locks.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.instrument.seal import (
    BUMPED,
    EDITED,
    MATCHED,
    UNSEALED,
    lock_path,
    lock_state,
    quote,
    read_lock,
    render_lock,
    write_lock,
)
from tests.clirun import cli

ROOT = Path(__file__).parents[2]
ODD_IDS = ["plain", "with space", "café ünïcode", 'quote " and \\ slash', "tab\tand\nnewline"]
HOSTILE = "evil\u202ereversed\x1b[31m\u2028sep\u200bzw"


def coding_set(folder: Path, version: str = "1", ids: tuple[str, ...] = ("alpha", "beta")) -> Path:
    """A small coding-eval/v1 set: one prompt and one test file per item."""
    (folder / "prompts").mkdir(parents=True, exist_ok=True)
    (folder / "tests").mkdir(exist_ok=True)
    items = []
    for n, item_id in enumerate(ids):
        prompt, test = f"prompts/p{n} {item_id[:3]}.md", f"tests/test_m{n}.py"
        (folder / prompt).write_text(f"Fix module m{n}.\n")
        (folder / test).write_text(f"from m{n} import f\n\ndef test_f():\n    assert f() == {n}\n")
        items.append(
            {
                "id": item_id,
                "language": "python",
                "prompt_file": prompt,
                "test_file": test,
                "timeout_s": 10,
                "forbidden_imports": ["socket"],
                "expected_files": [f"m{n}.py"],
            }
        )
    doc = {
        "schema": "coding-eval/v1",
        "dataset_id": "demo",
        "dataset_version": version,
        "frozen_at": "2026-11-01",
        "holdout_policy": "sealed",
        "items": items,
    }
    path = folder / "coding.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))
    return path


def golden_set(path: Path, ids: list[str]) -> Path:
    lines = [json.dumps({"id": i, "user": f"about {i}", "require_tools": []}) for i in ids]
    path.write_text("\n".join(lines) + "\n")
    return path


def bump(path: Path, version: str) -> None:
    doc = yaml.safe_load(path.read_text())
    doc["dataset_version"] = version
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# -- sealing and checking -----------------------------------------------------------


def test_seal_writes_the_lock_beside_the_set_and_check_matches(tmp_path, capsys):
    fixtures = coding_set(tmp_path)
    assert lock_path(fixtures) == tmp_path / "coding.yaml.lock"

    done = cli(capsys, "seal", "--check", str(fixtures))
    assert done.code == 1
    assert "no lock: run evalpin seal" in done.out
    assert not lock_path(fixtures).exists()

    done = cli(capsys, "seal", str(fixtures))
    assert done.code == 0, done.err
    fs = load_fixtures(fixtures)
    assert f"sealed {fixtures} -> {fixtures}.lock" in done.out
    assert f"envelope {fs.envelope_hash}, 5 files, 2 cases" in done.out

    text = lock_path(fixtures).read_text()
    assert text.startswith('# evalpin seal: the envelope of "coding.yaml"; re-seal after')
    lines = text.splitlines()
    assert lines[1:8] == [
        "format: evalpin-lock/v1",
        'fixture: "coding.yaml"',
        'kind: "coding"',
        'dataset_id: "demo"',
        'dataset_version: "1"',
        'frozen_at: "2026-11-01"',
        f"envelope_hash: {fs.envelope_hash}",
    ]
    assert lines[-1] == "end 5 files 2 cases"
    file_lines = [line for line in lines if line.startswith("file ")]
    assert file_lines == sorted(file_lines) and len(file_lines) == 5
    assert f'case "alpha" {fs.cases[0].fixture_hash}' in lines

    done = cli(capsys, "seal", "--check", str(fixtures))
    assert done.code == 0, done.out + done.err
    assert done.out.count("\n") == 1
    assert f"{fixtures}: matched its lock" in done.out

    # Sealing a matched set again leaves the very same bytes.
    assert cli(capsys, "seal", str(fixtures)).out.startswith("unchanged ")
    assert lock_path(fixtures).read_text() == text
    assert render_lock(load_fixtures(fixtures)) == text


def test_an_edited_test_file_under_the_same_version_is_named_with_its_case(tmp_path, capsys):
    fixtures = coding_set(tmp_path)
    assert cli(capsys, "seal", str(fixtures)).code == 0
    yaml_before = fixtures.read_bytes()
    test = tmp_path / "tests" / "test_m1.py"
    test.write_text(test.read_text().replace("== 1", "== 2"))
    assert fixtures.read_bytes() == yaml_before

    done = cli(capsys, "seal", "--check", str(fixtures))
    assert done.code == 1
    lines = done.out.splitlines()
    assert lines[0].startswith(f"{fixtures}: edited without a dataset_version bump")
    assert '  changed file "tests/test_m1.py"' in lines
    assert '  changed case "beta"' in lines
    assert not any("alpha" in line for line in lines)
    assert "bump dataset_version" in lines[-1] and "--force" in lines[-1]

    state = lock_state(load_fixtures(fixtures))
    assert state.status == EDITED
    assert (state.files_changed, state.cases_changed) == (["tests/test_m1.py"], ["beta"])

    done = cli(capsys, "seal", "--check", "--json", str(fixtures))
    assert done.code == 1
    payload = json.loads(done.out)
    assert payload["exit"] == 1
    (entry,) = payload["sets"]
    assert entry["status"] == "edited"
    assert entry["files_changed"] == ["tests/test_m1.py"]
    assert entry["cases_changed"] == ["beta"]
    assert entry["locked_version"] == entry["dataset_version"] == "1"


def test_added_and_removed_cases_and_files_are_named(tmp_path, capsys):
    fixtures = coding_set(tmp_path, ids=("alpha", "beta"))
    assert cli(capsys, "seal", str(fixtures)).code == 0
    shutil.rmtree(tmp_path / "prompts")
    shutil.rmtree(tmp_path / "tests")
    coding_set(tmp_path, ids=("alpha", "gamma"))  # same version, beta gone, gamma new
    state = lock_state(load_fixtures(fixtures))
    assert state.status == EDITED
    assert state.cases_added == ["gamma"] and state.cases_removed == ["beta"]
    assert state.files_added == ["prompts/p1 gam.md"]
    assert state.files_removed == ["prompts/p1 bet.md"]
    done = cli(capsys, "seal", "--check", str(fixtures))
    assert done.code == 1
    assert '  added case "gamma"' in done.out and '  removed case "beta"' in done.out
    assert '  added file "prompts/p1 gam.md"' in done.out
    assert '  removed file "prompts/p1 bet.md"' in done.out


def test_a_bump_passes_with_a_note_and_a_reseal_matches(tmp_path, capsys):
    fixtures = coding_set(tmp_path)
    assert cli(capsys, "seal", str(fixtures)).code == 0
    test = tmp_path / "tests" / "test_m0.py"
    test.write_text(test.read_text() + "# a fix\n")
    bump(fixtures, "2")

    done = cli(capsys, "seal", "--check", str(fixtures))
    assert done.code == 0, done.out + done.err
    assert 'bumped: dataset_version "1" -> "2" since its lock' in done.out
    assert f"re-seal with evalpin seal {fixtures}" in done.out
    assert lock_state(load_fixtures(fixtures)).status == BUMPED

    done = cli(capsys, "seal", str(fixtures))
    assert done.code == 0, done.err
    assert done.out.startswith('re-sealed (dataset_version "1" -> "2")')
    assert 'dataset_version: "2"' in lock_path(fixtures).read_text()
    assert cli(capsys, "seal", "--check", str(fixtures)).code == 0
    assert lock_state(load_fixtures(fixtures)).status == MATCHED


def test_reseal_of_an_edited_same_version_set_needs_force(tmp_path, capsys):
    fixtures = coding_set(tmp_path)
    assert cli(capsys, "seal", str(fixtures)).code == 0
    lock_before = lock_path(fixtures).read_bytes()
    (tmp_path / "prompts" / "p0 alp.md").write_text("Fix it differently.\n")

    done = cli(capsys, "seal", str(fixtures))
    assert done.code == 1
    assert "refused" in done.out
    assert "bump dataset_version" in done.out and "--force" in done.out
    assert '  changed file "prompts/p0 alp.md"' in done.out
    assert lock_path(fixtures).read_bytes() == lock_before

    done = cli(capsys, "seal", "--force", str(fixtures))
    assert done.code == 0, done.err
    assert "re-sealed with --force" in done.out
    assert lock_path(fixtures).read_bytes() != lock_before
    assert cli(capsys, "seal", "--check", str(fixtures)).code == 0

    assert cli(capsys, "seal", "--check", "--force", str(fixtures)).code == 3


def test_a_golden_set_has_no_version_to_bump(tmp_path, capsys):
    fixtures = golden_set(tmp_path / "golden.jsonl", ["a", "b"])
    assert cli(capsys, "seal", str(fixtures)).code == 0
    text = lock_path(fixtures).read_text()
    assert "dataset_version: null\nfrozen_at: null\n" in text
    assert "re-seal after any edit" in text.splitlines()[0]
    golden_set(fixtures, ["a", "b", "c"])
    done = cli(capsys, "seal", "--check", str(fixtures))
    assert done.code == 1
    assert '  added case "c"' in done.out
    assert '  changed file "golden.jsonl"' in done.out
    assert "no dataset_version" in done.out
    assert cli(capsys, "seal", str(fixtures)).code == 1
    assert cli(capsys, "seal", "--force", str(fixtures)).code == 0
    assert cli(capsys, "seal", "--check", str(fixtures)).code == 0


# -- bad inputs: exit 3, one line, nothing written ----------------------------------


def _sealed(tmp_path: Path) -> tuple[Path, bytes]:
    fixtures = coding_set(tmp_path)
    write_lock(load_fixtures(fixtures))
    return fixtures, lock_path(fixtures).read_bytes()


def _garbled(good: bytes) -> dict[str, bytes]:
    lines = good.decode().splitlines(keepends=True)
    file_at = next(n for n, line in enumerate(lines) if line.startswith("file "))
    case_at = next(n for n, line in enumerate(lines) if line.startswith("case "))
    swapped = lines[:]
    swapped[file_at], swapped[file_at + 1] = swapped[file_at + 1], swapped[file_at]
    hand_edited = lines[:]
    name, _digest = hand_edited[file_at].rsplit(" ", 1)
    hand_edited[file_at] = f"{name} {'0' * 64}\n"
    return {
        "garbage": b"\x00\x01 not a lock at all\n",
        "not utf-8": b"format: evalpin-lock/v1\n\xff\xfe\n",
        "empty": b"",
        "unknown format": good.replace(b"evalpin-lock/v1", b"evalpin-lock/v9"),
        "yaml instead": b"format: evalpin-lock/v1\nfixture: !!python/object:os.system x\n",
        "cut mid-line": good[: len(good) // 2],
        "cut at a line": "".join(lines[:case_at]).encode(),
        "no end line": "".join(lines[:-1]).encode(),
        "end counts lie": good.replace(b"end 5 files 2 cases", b"end 5 files 3 cases"),
        "after end": good + b'case "x" 0123456789abcdef\n',
        "out of order": "".join(swapped).encode(),
        "duplicate case": "".join([*lines[:-1], lines[case_at], lines[-1]]).encode(),
        "hand-edited hash": "".join(hand_edited).encode(),
        "short case hash": good.replace(lines[case_at].split()[-1].encode(), b"abc"),
        "unquoted id": good.replace(b'case "alpha"', b"case alpha"),
        "crlf": good.replace(b"\n", b"\r\n"),
    }


GARBLES = [
    "garbage",
    "not utf-8",
    "empty",
    "unknown format",
    "yaml instead",
    "cut mid-line",
    "cut at a line",
    "no end line",
    "end counts lie",
    "after end",
    "out of order",
    "duplicate case",
    "hand-edited hash",
    "short case hash",
    "unquoted id",
    "crlf",
]


def test_every_garble_is_tested(tmp_path):
    assert list(_garbled(_sealed(tmp_path)[1])) == GARBLES


@pytest.mark.parametrize("how", GARBLES)
@pytest.mark.parametrize("check", [True, False])
def test_a_bad_lock_is_exit_3_one_line_nothing_written(tmp_path, capsys, how, check):
    fixtures, good = _sealed(tmp_path)
    bad = _garbled(good)[how]
    lock_path(fixtures).write_bytes(bad)
    before = folder_bytes(tmp_path)

    args = ["seal", "--check", str(fixtures)] if check else ["seal", "--force", str(fixtures)]
    done = cli(capsys, *args)
    assert done.code == 3, (how, done.out, done.err)
    assert done.out == ""
    assert done.err.count("\n") == 1
    assert done.err.startswith(f"evalpin: error: {lock_path(fixtures)}")
    assert folder_bytes(tmp_path) == before
    with pytest.raises(InputError) as caught:
        lock_state(load_fixtures(fixtures))
    assert caught.value.path == str(lock_path(fixtures))


def test_the_lock_of_another_set_is_exit_3(tmp_path, capsys):
    one, two = tmp_path / "one", tmp_path / "two"
    a = coding_set(one)
    b = coding_set(two)
    doc = yaml.safe_load(b.read_text())
    doc["dataset_id"] = "other"
    b.write_text(yaml.safe_dump(doc))
    write_lock(load_fixtures(a))
    shutil.copy(lock_path(a), lock_path(b))  # copied beside a set with another id
    before = folder_bytes(tmp_path)
    for args in (["seal", "--check", str(b)], ["seal", "--force", str(b)]):
        done = cli(capsys, *args)
        assert done.code == 3
        assert done.err.count("\n") == 1
        assert 'dataset_id "demo", not "other"' in done.err
        assert str(lock_path(b)) in done.err
    assert folder_bytes(tmp_path) == before

    # A lock naming another fixture file, put beside this one by hand.
    golden = golden_set(tmp_path / "demo.jsonl", ["a"])
    write_lock(load_fixtures(golden))
    renamed = golden_set(tmp_path / "other.jsonl", ["a"])
    shutil.copy(lock_path(golden), lock_path(renamed))
    done = cli(capsys, "seal", "--check", str(renamed))
    assert done.code == 3
    assert 'fixture file "demo.jsonl", not "other.jsonl"' in done.err


def test_a_bad_fixture_or_referenced_file_is_exit_3_and_no_set_is_sealed(tmp_path, capsys):
    good = coding_set(tmp_path / "good")
    bad = coding_set(tmp_path / "bad")
    (tmp_path / "bad" / "tests" / "test_m1.py").unlink()
    before = folder_bytes(tmp_path)
    done = cli(capsys, "seal", str(good), str(bad))
    assert done.code == 3
    assert done.err.count("\n") == 1 and str(bad) in done.err
    assert folder_bytes(tmp_path) == before  # not even the good set's lock

    done = cli(capsys, "seal", "--check", str(tmp_path / "missing.yaml"))
    assert done.code == 3 and done.err.count("\n") == 1

    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    link = tmp_path / "good" / "tests" / "test_m0.py"
    link.unlink()
    link.symlink_to(outside)
    done = cli(capsys, "seal", str(good))
    assert done.code == 3 and done.err.count("\n") == 1
    assert not lock_path(good).exists()


def test_a_lock_that_is_a_symlink_or_a_folder_is_refused(tmp_path, capsys):
    fixtures, good = _sealed(tmp_path)
    elsewhere = tmp_path / "elsewhere.lock"
    elsewhere.write_bytes(good)
    lock_path(fixtures).unlink()
    lock_path(fixtures).symlink_to(elsewhere)
    assert cli(capsys, "seal", "--check", str(fixtures)).code == 3
    lock_path(fixtures).unlink()
    lock_path(fixtures).mkdir()
    assert cli(capsys, "seal", str(fixtures)).code == 3


# -- odd names ----------------------------------------------------------------------


def test_ids_with_spaces_quotes_and_unicode_round_trip(tmp_path, capsys):
    fixtures = golden_set(tmp_path / "odd set é.jsonl", [*ODD_IDS, HOSTILE])
    assert cli(capsys, "seal", str(fixtures)).code == 0, capsys.readouterr()
    text = lock_path(fixtures).read_text(encoding="utf-8")
    fs = load_fixtures(fixtures)
    lock = read_lock(lock_path(fixtures), fs)
    assert lock.cases == {c.id: c.fixture_hash for c in fs.cases}
    assert lock.fixture == "odd set é.jsonl"
    assert 'case "café ünïcode" ' in text  # readable Unicode stays readable
    assert 'case "tab\\tand\\nnewline" ' in text
    # Nothing a terminal or a diff would act on or hide is written raw.
    for ch in "\u202e\x1b\u2028\u200b\t\r":
        assert ch not in text
    assert text.count("\n") == len(text.splitlines()) == 8 + 1 + len(ODD_IDS) + 1 + 1
    assert cli(capsys, "seal", "--check", str(fixtures)).code == 0

    # An edit names the odd id in the same quoting, one line.
    golden_set(fixtures, [*ODD_IDS[:-1], HOSTILE])
    done = cli(capsys, "seal", "--check", str(fixtures))
    assert done.code == 1
    assert f"  removed case {quote(ODD_IDS[-1])}" in done.out.splitlines()
    assert "\x1b" not in done.out and "\u202e" not in done.out


def test_file_paths_with_spaces_and_unicode_round_trip(tmp_path, capsys):
    fixtures = coding_set(tmp_path / "set ü", ids=("größe", "a b"))
    assert cli(capsys, "seal", str(fixtures)).code == 0
    lock = read_lock(lock_path(fixtures), load_fixtures(fixtures))
    assert "prompts/p0 grö.md" in lock.files and "prompts/p1 a b.md" in lock.files
    assert set(lock.cases) == {"größe", "a b"}
    assert cli(capsys, "seal", "--check", str(fixtures)).code == 0


def test_quote_escapes_what_a_terminal_would_act_on():
    assert quote("plain é") == '"plain é"'
    assert json.loads(quote(HOSTILE)) == HOSTILE
    assert json.loads(quote("astral \U000e0001 tag")) == "astral \U000e0001 tag"
    assert "\U000e0001" not in quote("astral \U000e0001 tag")
    assert quote("nbsp\u00a0") == '"nbsp\\u00a0"'


# -- the examples and the bundled sets ----------------------------------------------


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def _project(tmp_path: Path) -> Path:
    """A copy of the bundled sets, sealed afresh (the example's commands name them)."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "fixtures", project / "fixtures")
    for lock in (project / "fixtures").rglob("*.lock"):
        lock.unlink()
    for rel in ("fixtures/repairs/coding.yaml", "fixtures/orders/golden.jsonl"):
        write_lock(load_fixtures(project / rel))
    return project


def test_the_pre_commit_hook_entry_runs(tmp_path):
    hooks = yaml.safe_load((ROOT / "examples" / "pre-commit-hooks.yaml").read_text())
    (hook,) = hooks["repos"][0]["hooks"]
    assert hook["pass_filenames"] is False and hook["language"] == "system"
    project = _project(tmp_path)
    argv = shlex.split(hook["entry"])
    assert argv[:3] == ["evalpin", "seal", "--check"]

    def run() -> subprocess.CompletedProcess:
        return subprocess.run(
            argv, cwd=project, env=_env(), capture_output=True, text=True, check=False
        )

    assert run().returncode == 0
    test = project / "fixtures" / "repairs" / "tests" / "test_chunked.py"
    test.write_text(test.read_text() + "# edited\n")
    done = run()
    assert done.returncode == 1
    assert '  changed file "tests/test_chunked.py"' in done.stdout


def test_the_ci_check_step_runs(tmp_path):
    workflow = yaml.safe_load((ROOT / "examples" / "seal-check.yml").read_text())
    (step,) = [s for s in workflow["jobs"]["seal-check"]["steps"] if s.get("id") == "check"]
    project = _project(tmp_path)
    summary = project / "summary.md"

    def run() -> subprocess.CompletedProcess:
        env = {**_env(), "GITHUB_STEP_SUMMARY": str(summary)}
        return subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    done = run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matched its lock" in summary.read_text()
    (project / "fixtures" / "orders" / "golden.jsonl.lock").write_text("garbage\n")
    done = run()
    assert done.returncode == 3
    assert "golden.jsonl.lock" in summary.read_text()


@pytest.mark.parametrize("rel", ["fixtures/repairs/coding.yaml", "fixtures/orders/golden.jsonl"])
def test_the_bundled_sets_match_their_locks(rel):
    """The committed locks: an edit to a bundled set without a version bump fails here
    until it is re-sealed (`evalpin seal <set>`, and --force only for a deliberate
    same-version edit)."""
    state = lock_state(load_fixtures(ROOT / rel))
    assert state.status in (MATCHED, BUMPED), state.to_json()
    assert state.status != UNSEALED
