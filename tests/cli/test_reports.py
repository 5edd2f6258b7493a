"""`diff --markdown / --junit / --html` and `diff --baseline DIR RUN` on real run files."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import msgspec
import pytest

from evalpin.core.judge.report import REFUSE_LINE, build_report
from evalpin.core.read.runfile import read_run
from tests.builders import case, grid, header, write_run
from tests.clirun import cli
from tests.pages import md_html, tags_of

RUNS = Path(__file__).parents[2] / "runs"
NIGHT1, NIGHT2 = RUNS / "demo-night-1.jsonl", RUNS / "demo-night-2.jsonl"
FREE2 = RUNS / "demo-night-2-lab_free_2.jsonl"


def test_markdown_on_the_demo_pair_has_pins_call_and_regressions(capsys, tmp_path):
    out = tmp_path / "report.md"
    result = cli(capsys, "diff", str(NIGHT1), str(NIGHT2), "--markdown", str(out))
    assert result.code == 1
    text = out.read_text()
    assert "| pin | left | right |" in text
    assert "**Clustered call: within noise**" in text
    assert "### Regressed (8)" in text
    assert "missing\\_text:sorry" in text  # the reason code, escaped for Markdown
    assert "<summary>Fixed (6) and drift (15)</summary>" in text
    rendered = md_html(text)
    assert "<table>" in rendered and "<details>" in rendered
    assert "missing_text:sorry" in rendered


def test_markdown_of_a_refusal_marks_the_pins_that_differ(capsys, tmp_path):
    out = tmp_path / "report.md"
    result = cli(capsys, "diff", str(NIGHT2), str(FREE2), "--markdown", str(out))
    assert result.code == 2
    assert result.out.splitlines()[0] == REFUSE_LINE
    text = out.read_text()
    assert "refused" in text.splitlines()[0]
    assert "| model_slot **differs** |" in text
    assert "| grader_version |" in text  # equal pins are not marked
    assert "Regressed" not in text  # a backend delta is never filed as regressions


def test_junit_has_one_case_per_pair_and_fails_the_regressed(capsys, tmp_path):
    out = tmp_path / "junit.xml"
    assert cli(capsys, "diff", str(NIGHT1), str(NIGHT2), "--junit", str(out)).code == 1
    suite = ET.parse(out).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 90 == int(suite.get("tests"))
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 8 == int(suite.get("failures"))
    names = {c.get("name") for c in failed}
    assert "status-late-apology [seed 11]" in names
    message = next(c for c in failed if c.get("name") == "status-late-apology [seed 11]")
    assert "missing_text:sorry" in message.find("failure").get("message")


def test_junit_of_a_refusal_is_one_failed_refusal(capsys, tmp_path):
    out = tmp_path / "junit.xml"
    assert cli(capsys, "diff", str(NIGHT2), str(FREE2), "--junit", str(out)).code == 2
    cases = ET.parse(out).getroot().find("testsuite").findall("testcase")
    assert [c.get("name") for c in cases] == ["REFUSE_DIFF"]
    failure = cases[0].find("failure")
    assert failure.get("message") == REFUSE_LINE
    assert "model_slot: lab_free_1 (left) vs lab_free_2 (right)" in failure.text


def test_html_is_self_contained_with_a_strict_policy(capsys, tmp_path):
    out = tmp_path / "report.html"
    assert cli(capsys, "diff", str(NIGHT1), str(NIGHT2), "--html", str(out)).code == 1
    page = out.read_text()
    parsed = tags_of(page)
    csp = [a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv")]
    assert csp and "default-src 'none'" in csp[0] and "script-src 'none'" in csp[0]
    assert not [t for t, _ in parsed.tags if t in ("script", "link", "img", "iframe")]
    assert "within noise" in page
    assert sum(1 for t, _ in parsed.tags if t == "details") == 29  # one per moved case


def test_html_of_a_refusal_shows_the_banner(capsys, tmp_path):
    out = tmp_path / "report.html"
    assert cli(capsys, "diff", str(NIGHT2), str(FREE2), "--html", str(out)).code == 2
    page = out.read_text()
    assert 'id="refusal"' in page and REFUSE_LINE in page
    assert 'id="call"' not in page


def test_report_files_are_written_atomically_and_only_whole(capsys, tmp_path):
    out = tmp_path / "sub" / "report.md"
    cli(capsys, "diff", str(NIGHT1), str(NIGHT2), "--markdown", str(out))
    assert [p.name for p in out.parent.iterdir()] == ["report.md"]  # no temp file left


def test_text_and_json_come_from_the_same_report(capsys):
    """The JSON's moves and the report's are one list (built once)."""
    report = build_report(read_run(NIGHT1), read_run(NIGHT2))
    result = cli(capsys, "diff", str(NIGHT1), str(NIGHT2), "--json")
    assert json.loads(result.out) == json.loads(json.dumps(report.to_json()))


# -- --baseline -----------------------------------------------------------------------


def night(folder: Path, name: str, started: str, **over) -> Path:
    head = header(started_at=started, **over.pop("head", {}))
    return write_run(folder / name, grid({"a": [True] * 3, "b": [True] * 3}, **over), head=head)


def test_baseline_picks_the_newest_earlier_run_on_the_same_instrument(capsys, tmp_path):
    night(tmp_path, "n1.jsonl", "2026-11-27T02:00:00Z")
    night(tmp_path, "n2.jsonl", "2026-11-28T02:00:00Z")
    other = {"model_slot": "other"}
    night(tmp_path, "n3-other-slot.jsonl", "2026-11-29T01:00:00Z", head=other, **other)
    night(tmp_path, "n5-later.jsonl", "2026-11-30T03:00:00Z")
    new = night(tmp_path, "n4.jsonl", "2026-11-29T02:00:00Z")
    result = cli(capsys, "diff", "--baseline", str(tmp_path), str(new), "--json")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["left"]["path"] == str(tmp_path / "n2.jsonl")
    assert data["baseline"]["chosen"] == str(tmp_path / "n2.jsonl")


def test_baseline_refuses_and_names_the_change_since_the_last_run(capsys, tmp_path):
    night(tmp_path, "n1.jsonl", "2026-11-27T02:00:00Z")
    new = night(tmp_path, "n2.jsonl", "2026-11-28T02:00:00Z", head={"grader_version": "g2"})
    result = cli(capsys, "diff", "--baseline", str(tmp_path), str(new))
    assert result.code == 2
    lines = result.out.splitlines()
    assert lines[0] == REFUSE_LINE
    assert "rubric change" in lines[1]
    assert any("grader_version: g1 (last) vs g2 (this run)" in line for line in lines)


def test_every_report_says_the_baseline_refusal_in_the_same_words(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a folder name that no format escapes
    folder = tmp_path / "nights"
    folder.mkdir()
    night(folder, "n1.jsonl", "2026-11-27T02:00:00Z")
    new = night(folder, "n2.jsonl", "2026-11-28T02:00:00Z", head={"grader_version": "g2"})
    paths = {kind: tmp_path / f"r.{kind}" for kind in ("md", "xml", "html")}
    args = ["--markdown", paths["md"], "--junit", paths["xml"], "--html", paths["html"]]
    result = cli(capsys, "diff", "--baseline", "nights", str(new), *map(str, args))
    assert result.code == 2
    said = "no earlier run in nights on the same instrument; since the last run"
    assert said in result.out
    for kind, path in paths.items():
        text = path.read_text()
        assert said in text, kind
        assert "version: g1 (last) vs g2 (this run)" in text, kind


def test_baseline_refuses_a_dataset_edit_even_where_shared_cases_agree(capsys, tmp_path):
    night(tmp_path, "n1.jsonl", "2026-11-27T02:00:00Z")
    edited = msgspec.structs.replace(header().fixtures, dataset_hash="f" * 64)
    new = night(tmp_path, "n2.jsonl", "2026-11-28T02:00:00Z", head={"fixtures": edited})
    md = tmp_path / "out" / "r.md"
    result = cli(capsys, "diff", "--baseline", str(tmp_path), str(new), "--markdown", str(md))
    assert result.code == 2
    assert "dataset edit" in result.out.splitlines()[1]
    assert "dataset edit" in md.read_text()


def test_baseline_with_no_earlier_run_refuses(capsys, tmp_path):
    new = night(tmp_path, "n1.jsonl", "2026-11-27T02:00:00Z")
    result = cli(capsys, "diff", "--baseline", str(tmp_path), str(new))
    assert result.code == 2
    assert result.out.splitlines()[0] == REFUSE_LINE
    assert "no earlier run on these fixtures" in result.out


def test_baseline_passes_over_unreadable_files(capsys, tmp_path):
    shutil.copy(NIGHT1, tmp_path / "n1.jsonl")
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    result = cli(capsys, "diff", "--baseline", str(tmp_path), str(NIGHT2), "--json")
    assert result.code == 1
    data = json.loads(result.out)
    assert data["baseline"]["chosen"] == str(tmp_path / "n1.jsonl")
    assert any("broken.jsonl" in s for s in data["baseline"]["skipped"])


def test_baseline_usage_errors_exit_3(capsys, tmp_path):
    assert cli(capsys, "diff", "--baseline", str(tmp_path), "a", "b").code == 3
    assert cli(capsys, "diff", str(NIGHT1)).code == 3


@pytest.mark.parametrize("seed", [11, None])
def test_junit_skips_cases_on_one_side_only(capsys, tmp_path, seed):
    left = write_run(tmp_path / "l.jsonl", [case("a", True, seed), case("gone", True, seed)])
    right = write_run(tmp_path / "r.jsonl", [case("a", True, seed), case("new", True, seed)])
    out = tmp_path / "j.xml"
    assert cli(capsys, "diff", str(left), str(right), "--junit", str(out)).code == 0
    cases = ET.parse(out).getroot().find("testsuite").findall("testcase")
    skipped = {c.get("name") for c in cases if c.find("skipped") is not None}
    suffix = "" if seed is None else f" [seed {seed}]"
    assert skipped == {f"gone{suffix}", f"new{suffix}"}


def test_the_terminal_refusal_decodes_no_case_from_disk(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    # A refused pair of big runs lists every case only where an output asks for it
    # (--json, --artifact, --html); the terminal's per-key summary needs no record.
    from evalpin.core.read.runfile import RunFile

    outcomes = {f"c{i}": [True, i % 2 == 0, True] for i in range(30)}
    left = write_run(tmp_path / "l.jsonl", grid(outcomes))
    right = write_run(tmp_path / "r.jsonl", grid(outcomes, model_slot="other"))
    decoded: list[int] = []
    records = RunFile.records

    def counting(self, indices):
        got = records(self, indices)
        decoded.append(len(got))
        return got

    monkeypatch.setattr(RunFile, "records", counting)
    got = cli(capsys, "diff", str(left), str(right))
    assert got.code == 2 and "model_slot" in got.out
    assert sum(decoded) == 0
    artifact = tmp_path / "delta.json"
    assert cli(capsys, "diff", str(left), str(right), "--artifact", str(artifact)).code == 2
    assert len(json.loads(artifact.read_text())["cases"]) == 90
    assert sum(decoded) == 180  # both sides of every common case, for the artifact


def test_a_replay_slot_says_what_pins_it_instead_of_missing_settings(tmp_path, capsys) -> None:
    """A replay records no slot settings on purpose (it asks no backend): the pins tables
    say its recording pins it, by sha256, each night its own, never `*missing*`."""
    left, right = RUNS / "demo-night-1.jsonl", RUNS / "demo-night-2.jsonl"
    md, page, junit = tmp_path / "r.md", tmp_path / "r.html", tmp_path / "r.xml"
    args = ("diff", str(left), str(right), "--markdown", str(md), "--html", str(page))
    assert cli(capsys, *args, "--junit", str(junit)).code == 1
    digests = [
        json.loads(p.read_text().splitlines()[0])["slot"]["sha256"][:12] for p in (left, right)
    ]
    row = next(r for r in md.read_text().splitlines() if r.startswith("| slot_settings"))
    assert "*missing*" not in row and "**differs**" not in row
    assert all(f"pinned by its recording \\(sha256 {d}\\)" in row for d in digests), row
    assert all(f"pinned by its recording (sha256 {d})" in page.read_text() for d in digests)
    assert "pinned by its recording" in junit.read_text()
