from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.read.rundata import SHAPE_CASES, SHAPE_EVALPIN, SHAPE_REPORT
from evalpin.core.read.runfile import RunWriter, read_run, trim_torn_tail
from tests.builders import case, header, write_run


def test_round_trip_keeps_rows_offsets_and_detail(tmp_path: Path) -> None:
    cases = [case("a", True, tail="ok"), case("b", False, tail="E   assert 1 == 2")]
    run = read_run(write_run(tmp_path / "r.jsonl", cases))
    assert run.shape == SHAPE_EVALPIN
    assert run.complete is True
    assert [(r.case_id, r.passed, r.seed) for r in run.rows] == [("a", True, 11), ("b", False, 11)]
    assert run.record(1).tail == "E   assert 1 == 2"
    assert run.missing_pins == []
    assert "complete" in run.label()


def test_writer_is_ascii_one_line_per_record(tmp_path: Path) -> None:
    path = write_run(tmp_path / "r.jsonl", [case("é\u202e", True, tail="\x1b[2J ✓")])
    raw = path.read_bytes()
    raw.decode("ascii")  # ASCII-escaped JSON
    lines = raw.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4
    assert json.loads(lines[1])["tail"] == "\x1b[2J ✓"


def test_writer_refuses_to_clobber_a_new_run(tmp_path: Path) -> None:
    path = write_run(tmp_path / "r.jsonl", [])
    with pytest.raises(FileExistsError):
        RunWriter(path, new=True)


def test_missing_trailer_is_incomplete_and_torn_line_is_dropped(tmp_path: Path) -> None:
    path = write_run(tmp_path / "r.jsonl", [case("a", True), case("b", True)], finished=False)
    with open(path, "ab") as fh:
        fh.write(b'{"record":"case","case_id":"c","pass":tr')
    run = read_run(path)
    assert run.complete is False
    assert run.torn is True
    assert [r.case_id for r in run.rows] == ["a", "b"]
    assert "INCOMPLETE" in run.label() and "torn" in run.label()
    assert trim_torn_tail(path) == len(b'{"record":"case","case_id":"c","pass":tr')
    assert read_run(path).torn is False
    assert trim_torn_tail(path) == 0


def test_header_less_case_records_are_labelled(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    rows = [
        {
            "case_id": "a",
            "pass": True,
            "reasons": [],
            "tool_names": [],
            "text_digest": "x",
            "fixture_hash": "f",
            "grader_version": "g",
            "model_slot": "s",
        },
        {
            "case_id": "b",
            "pass": False,
            "reasons": ["missing_tool:t"],
            "tool_names": [],
            "text_digest": "y",
            "fixture_hash": "f2",
            "grader_version": "g",
            "model_slot": "s",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = read_run(path)
    assert run.shape == SHAPE_CASES
    assert run.complete is None
    assert run.rows[0].seed is None
    missing = run.missing_pins
    assert {"dataset_hash", "seeds", "env_digest", "scorer_commit"} <= set(missing)
    assert "fixture_hash" not in missing
    assert "without a run header" in run.label()
    assert run.record(1).reasons == ["missing_tool:t"]


def test_single_json_report_keeps_missing_pins_missing(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    report = {
        "dataset_id": "repairs",
        "dataset_version": "3",
        "dataset_hash": "h" * 64,
        "seeds": [1, 2, 3],
        "summary": {"pass_rate": 0.5},
        "rows": [
            {"id": "a", "seed": 1, "passed": True, "seconds": 1.5, "tail": "1 passed"},
            {"id": "a", "seed": 2, "passed": False, "seconds": 1.2, "tail": "1 failed"},
        ],
    }
    path.write_text(json.dumps(report, indent=2))
    run = read_run(path)
    assert run.shape == SHAPE_REPORT
    assert run.seeds == [1, 2, 3]
    assert run.rows[1].fixture_hash is None and run.rows[1].grader_version is None
    assert run.record(1).tail == "1 failed"
    assert {"fixture_hash", "grader_version", "model_slot", "env_digest"} <= set(run.missing_pins)
    assert "dataset_hash" not in run.missing_pins


BAD_LINES = [
    (b"", "empty file", None),
    (b"\n  \n", "only whitespace", None),
    (b'{"record":"run"', "not JSON", 1),
    (b"[1]\n", "not a JSON object", 1),
    (b'{"hello": 1}\n', "not a run file", 1),
    (b'{"case_id": "a", "pass": true}\n{"case_id": "b", "pass": "yes"}\n', "wrong shape", 2),
    (b'{"case_id": "a", "pass": true}\nnot json\n{"case_id": "c", "pass": true}\n', "not JSON", 2),
    (b'{"case_id": "a", "pass": true}\n{"case_id": "\xff\xfe", "pass": true}\n', "not UTF-8", 2),
]


@pytest.mark.parametrize(("content", "message", "line"), BAD_LINES)
def test_bad_run_files_name_the_line(tmp_path: Path, content: bytes, message: str, line) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as err:
        read_run(path)
    assert err.value.line == line
    assert err.value.path == str(path)


def test_structural_problems(tmp_path: Path) -> None:
    path = write_run(tmp_path / "r.jsonl", [case("a", True)])
    with open(path, "ab") as fh:
        fh.write(b'{"record":"case","case_id":"z","pass":true}\n')
    with pytest.raises(InputError, match="after the summary trailer") as err:
        read_run(path)
    assert err.value.line == 4
    other = tmp_path / "schema.jsonl"
    with RunWriter(other, new=True) as w:
        w.write(header(schema="evalpin.run/9"))
    with pytest.raises(InputError, match="unknown schema"):
        read_run(other)


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_run(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        read_run(tmp_path)


@pytest.fixture(params=[64, 1 << 22], ids=["tiny-blocks", "default-blocks"])
def block_size(request, monkeypatch) -> int:
    """Run a test with blocks far smaller than a line, and with the default."""
    import evalpin.core.read.rundata as rundata

    monkeypatch.setattr(rundata, "_CHUNK", request.param)
    return request.param


def test_blocks_give_the_same_rows_offsets_and_line_numbers(tmp_path: Path, block_size) -> None:
    cases = [case(f"c{i}", i % 3 != 0, tail="x" * (i * 7)) for i in range(200)]
    path = write_run(tmp_path / "r.jsonl", cases)
    run = read_run(path)
    assert [r.case_id for r in run.rows] == [f"c{i}" for i in range(200)]
    assert run.complete
    assert run.record(150).tail == "x" * 1050
    assert run.records([0, 199, 57])[57].case_id == "c57"
    lines = path.read_bytes().split(b"\n")
    lines[120] = b'{"record":"case","case_id":"bad","pass":"no"}'
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError, match="wrong shape") as err:
        read_run(path)
    assert err.value.line == 121


def test_blank_lines_and_torn_tail_across_blocks(tmp_path: Path, block_size) -> None:
    path = write_run(tmp_path / "r.jsonl", [case(f"c{i}", True) for i in range(50)], finished=False)
    data = path.read_bytes().replace(b"\n", b"\n\n", 10)
    path.write_bytes(data + b'{"record":"case","case_id":"torn","pa')
    run = read_run(path)
    assert len(run.rows) == 50 and run.torn
    assert run.record(49).case_id == "c49"


def test_offsets_ignore_lines_appended_after_reading(tmp_path: Path) -> None:
    path = write_run(tmp_path / "r.jsonl", [case("a", True), case("b", False)], finished=False)
    run = read_run(path)
    with open(path, "ab") as fh:
        fh.write(b'{"record":"case","case_id":"c","pass":true}\n')
    assert run.record(1).case_id == "b"
    assert run.record(0).case_id == "a"


def test_pin_values_gathered_while_reading_are_those_of_the_rows(tmp_path: Path) -> None:
    from operator import attrgetter

    from evalpin.core.shared_pins import PINS

    records = [case(f"c{i}", i % 2 == 0, 11) for i in range(30)]
    records[7] = case("c7", True, 11, reported_model=None, fixture_hash=None)
    records[12] = case("c12", False, 11, model_slot="other", slot_settings="s-2")
    run = read_run(write_run(tmp_path / "mixed.jsonl", records))
    assert "pin_values" in run.__dict__  # gathered by the reader, not counted now
    counted = {key: frozenset(map(attrgetter(key), run.rows)) for key in PINS}
    assert run.pin_values == counted
    assert run.lacks_fixture_hash and "fixture_hash" in run.missing_pins
    assert run.pin_values["model_slot"] == {"night", "other"}
