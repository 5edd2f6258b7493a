"""`diff` a half per process (core/review/halves.py): the same report as one process, or none.

The split is made small here (any size, a few kilobytes searched for the cut, small read
chunks), so files of a few hundred records go through every path the 1M-record benchmark
takes. Each test compares against the one-process path on the same files.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalpin.core.judge.report import build_report
from evalpin.core.read import rundata
from evalpin.core.read.runfile import read_run
from evalpin.core.records import CaseRecord
from evalpin.core.review import halves
from evalpin.core.shared_pins import PINS
from tests.builders import case, write_run
from tests.capabilities import need
from tests.clirun import cli

SEEDS = (11, 29, 47)


@pytest.fixture(autouse=True)
def small_split(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A small split, and no helper process left behind by the test."""
    monkeypatch.setattr(halves, "SPLIT_BYTES", 1)
    monkeypatch.setattr(halves, "_WINDOW", 16 << 10)
    monkeypatch.setattr(rundata, "_CHUNK", 4096)
    if len(os.sched_getaffinity(0)) < 2:
        need("two-cores", f"{len(os.sched_getaffinity(0))} core(s) here")
    before = children()
    yield
    assert children() <= before


def records(n_cases: int, seed: int, *, moved: float = 0.0, rng_seed: int = 0) -> list[CaseRecord]:
    """`n_cases` cases on `seeds`; with `moved`, a share of flips and digest drifts."""
    rng = random.Random(rng_seed)
    out = []
    for i in range(n_cases):
        cid = f"c{i:04d}"
        for s in SEEDS[: 1 + (i % 3 if seed else 2)]:
            ok = (i * 7 + s) % 5 != 0
            digest = f"d{i}-{s}"
            if moved and rng.random() < moved:
                if rng.random() < 0.5:
                    ok = not ok
                else:
                    digest += "-moved"
            out.append(case(cid, ok, s, completion_digest=digest, tail="t" * (i % 90)))
    return out


def pair(
    tmp_path: Path, left: list[CaseRecord], right: list[CaseRecord], **kw
) -> tuple[Path, Path]:
    return (
        write_run(tmp_path / "left.jsonl", left),
        write_run(tmp_path / "right.jsonl", right, **kw),
    )


def one_process(left: Path, right: Path, detail: int | None = None):
    return build_report(read_run(left), read_run(right), detail=detail)


def children() -> set[str]:
    """This process's children, alive or unreaped."""
    tasks = Path(f"/proc/{os.getpid()}/task")
    return {pid for t in tasks.iterdir() for pid in (t / "children").read_text().split()}


@pytest.mark.parametrize("rng_seed", range(6))
def test_halves_report_what_one_process_reports(tmp_path: Path, rng_seed: int) -> None:
    rng = random.Random(rng_seed)
    n = rng.randrange(150, 400)
    left, right = pair(
        tmp_path,
        records(n, rng_seed % 2),
        records(n, rng_seed % 2, moved=rng.choice([0.0, 0.02, 0.3]), rng_seed=rng_seed),
    )
    split = halves.diff_in_halves(left, right, None)
    assert split is not None, "the split bailed out on an aligned pair"
    whole = one_process(left, right)
    assert split.to_json() == whole.to_json()
    assert split.movements == whole.movements
    assert split.stats == whole.stats


def test_detail_limit_and_every_output_match(tmp_path: Path, capsys, monkeypatch) -> None:
    left, right = pair(tmp_path, records(300, 1), records(300, 1, moved=0.2, rng_seed=3))
    outs = {}
    for name, size in (("split", 1), ("whole", 1 << 62)):
        monkeypatch.setattr(halves, "SPLIT_BYTES", size)
        md, html = tmp_path / f"{name}.md", tmp_path / f"{name}.html"
        human = cli(capsys, "diff", str(left), str(right), "--limit", "5")
        as_json = cli(capsys, "diff", str(left), str(right), "--json")
        files = cli(
            capsys, "diff", str(left), str(right), "--markdown", str(md), "--html", str(html)
        )
        outs[name] = (human, as_json, files, md.read_text(), html.read_text())
    assert outs["split"] == outs["whole"]
    assert outs["split"][0].code == 1 and "REGRESSED" in outs["split"][0].out
    monkeypatch.setattr(halves, "SPLIT_BYTES", 1)
    assert halves.diff_in_halves(left, right, 5) is not None  # the split did run above


def test_junit_lists_every_row_from_one_process(tmp_path: Path, capsys) -> None:
    left, right = pair(tmp_path, records(200, 1), records(200, 1, moved=0.1, rng_seed=1))
    junit = tmp_path / "j.xml"
    assert cli(capsys, "diff", str(left), str(right), "--junit", str(junit)).code == 1
    assert junit.read_text().count("<testcase") == len(read_run(left).rows)


def test_torn_right_run_is_labelled_as_one_process_labels_it(tmp_path: Path) -> None:
    left, right = pair(tmp_path, records(250, 1), records(250, 1, moved=0.1), finished=False)
    with open(right, "ab") as fh:
        fh.write(b'{"record": "case", "case_id": "c9')
    split = halves.diff_in_halves(left, right, None)
    assert split is not None
    assert split.to_json() == one_process(left, right).to_json()
    assert "torn last line dropped" in split.right.label


def test_rows_left_in_the_helper_are_never_answered_for(tmp_path: Path) -> None:
    left, right = pair(tmp_path, records(250, 1), records(250, 1))
    split = halves.diff_in_halves(left, right, None)
    assert split is not None
    rows = split._shared[0]
    assert len(rows) == len(read_run(left).rows)
    assert rows[0].case_id == "c0000"
    with pytest.raises(LookupError):
        rows[len(rows) - 1]
    with pytest.raises(LookupError):
        list(rows)


def bail_cases(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    base = records(300, 1)
    cases = {}

    def make(name: str, left: list[CaseRecord], right: list[CaseRecord], **kw) -> None:
        folder = tmp_path / name
        cases[name] = pair(folder, left, right, **kw)

    make("right lacks a case", base, [r for r in base if r.case_id != "c0250"])
    make("right has an extra case late", base, [*base[:-3], case("zz", True), *base[-3:]])
    late = len(base) * 2 // 3
    moved = [_with(r, grader_version="g2") for r in base[late:]]
    make("refused: grader moved late", base, base[:late] + moved)
    again = [*base, case("c0001", True, 99)]  # c0001 again, after the cut
    make("a case in both halves", again, again)
    make("no common cut", base, [_with(r, case_id="x" + r.case_id) for r in base])
    make("header lists no seeds", base, base, head=_header_without_seeds())
    reslotted = [_with(r, model_slot="other") for r in base]
    make("headers refuse", base, reslotted, head=_header(model_slot="other"))
    return cases


def _with(record: CaseRecord, **over) -> CaseRecord:
    import msgspec

    return msgspec.structs.replace(record, **over)


def _header(**over):
    from tests.builders import header

    return header(**over)


def _header_without_seeds():
    return _header(seeds=[])


# What `diff` answers for each pair the halves give up on: refused pairs exit 2, runs
# that share no case compared nothing (4, never "no movement"), the rest compare (0).
BAIL_EXITS = {
    "right lacks a case": 0,
    "right has an extra case late": 0,
    "refused: grader moved late": 2,
    "a case in both halves": 0,
    "no common cut": 4,
    "header lists no seeds": 0,
    "headers refuse": 2,
}


def test_what_the_halves_cannot_settle_goes_to_one_process(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    cases = bail_cases(tmp_path)
    assert set(cases) == set(BAIL_EXITS)
    for name, (left, right) in cases.items():
        assert halves.diff_in_halves(left, right, None) is None, name
        # The command still answers, as one process answers: the same code and report.
        got = cli(capsys, "diff", str(left), str(right), "--json")
        monkeypatch.setattr(halves, "SPLIT_BYTES", 1 << 62)
        whole = cli(capsys, "diff", str(left), str(right), "--json")
        monkeypatch.setattr(halves, "SPLIT_BYTES", 1)
        assert (got.code, got.out) == (BAIL_EXITS[name], whole.out), (name, got.err)


@pytest.mark.parametrize("where", [5, -20], ids=["first half", "second half"])
def test_a_bad_line_is_reported_as_one_process_reports_it(
    tmp_path: Path, capsys, where: int
) -> None:
    left, right = pair(tmp_path, records(300, 1), records(300, 1))
    lines = left.read_bytes().split(b"\n")
    bad = where % len(lines)
    lines[bad] = b'{"record": "case", "case_id": 5}'
    left.write_bytes(b"\n".join(lines))
    assert halves.diff_in_halves(left, right, None) is None
    got = cli(capsys, "diff", str(left), str(right))
    assert got.code == 3
    assert f":{bad + 1}:" in got.err or f"line {bad + 1}" in got.err


def test_a_summary_in_the_middle_is_an_error_either_side_of_the_cut(tmp_path: Path, capsys) -> None:
    for where in (0.3, 0.7):
        folder = tmp_path / str(where)
        left, right = pair(folder, records(300, 1), records(300, 1))
        lines = left.read_bytes().split(b"\n")
        at = int(len(lines) * where)
        lines.insert(at, b'{"record": "summary", "finished_at": "x", "records": 1, "passed": 1}')
        left.write_bytes(b"\n".join(lines))
        assert halves.diff_in_halves(left, right, None) is None
        got = cli(capsys, "diff", str(left), str(right))
        assert got.code == 3 and "summary" in got.err


def test_pins_of_both_halves_are_joined(tmp_path: Path) -> None:
    base = records(300, 1)
    late = [
        _with(r, reported_model="m-2") if i > len(base) * 0.8 else r for i, r in enumerate(base)
    ]
    left, right = pair(tmp_path, late, late)
    split = halves.diff_in_halves(left, right, None)
    assert split is not None
    assert split.right.pins["reported_model"] == "m-1, m-2"
    assert split.to_json() == one_process(left, right).to_json()
    assert set(PINS) >= {"reported_model"}


@pytest.mark.parametrize("where", ["first", "second"])
def test_a_key_twice_in_a_vouched_file_sends_the_diff_to_one_process(
    tmp_path: Path, capsys, where: str
) -> None:
    """Each half skips the per-line check on the trailer's word; the halves' CRCs joined
    must make the trailer's, or one process reads the file and checks every line."""
    left, right = pair(tmp_path, records(300, 1), records(300, 1, moved=0.1, rng_seed=2))
    assert halves.diff_in_halves(left, right, None) is not None  # vouched, and split
    lines = right.read_text().splitlines(keepends=True)
    k = 40 if where == "first" else len(lines) - 40
    lines[k] = lines[k].rstrip("\n")[:-1] + ',"pass":true}\n'
    right.write_text("".join(lines))
    assert halves.diff_in_halves(left, right, None) is None
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 3 and f":{k + 1}: duplicate key 'pass'" in r.err, r.err
    lines[k] = lines[k].replace(',"pass":true}', "}")  # a value edited, no key twice
    lines[k] = lines[k].replace('"loops":0', '"loops":1')
    right.write_text("".join(lines))
    assert halves.diff_in_halves(left, right, None) is None  # the CRC no longer holds
    assert cli(capsys, "diff", str(left), str(right)).code == 1  # read, every line checked
