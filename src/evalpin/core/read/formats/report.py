"""A single JSON report: dataset pins and seeds at the top, `rows` of
`{id, seed, passed, seconds, tail}` below. It carries no triple, so it never compares."""

from __future__ import annotations

import msgspec

from evalpin.core.bounded import decode_json
from evalpin.core.errors import InputError
from evalpin.core.read.formats.probe import Probe, ReadOptions
from evalpin.core.read.rundata import SHAPE_REPORT, RunFile
from evalpin.core.records import SCHEMA, CaseRecord, CaseRow, FixturesInfo, Report, RunHeader

NAME = SHAPE_REPORT
_REPORT = msgspec.json.Decoder(Report)


def sniff(probe: Probe) -> bool:
    first = probe.first
    if isinstance(first, dict):
        return "rows" in first  # a report written on one line
    return "rows" in probe.keys


def read(probe: Probe, options: ReadOptions) -> RunFile:
    try:
        report = decode_json(_REPORT.decode, probe.data, probe.path)
    except msgspec.MsgspecError as exc:
        raise InputError(probe.path, f"not a valid report: {exc}") from None
    header = RunHeader(
        schema=SCHEMA,
        run_id="",
        started_at="",
        fixtures=FixturesInfo(
            path=str(probe.path),
            kind=NAME,
            dataset_id=report.dataset_id,
            dataset_version=report.dataset_version,
            dataset_hash=report.dataset_hash,
        ),
        seeds=list(report.seeds or []),
    )
    rows = [CaseRow(r.id, r.passed, seed=r.seed) for r in report.rows]
    details = [
        CaseRecord(r.id, r.passed, seed=r.seed, seconds=r.seconds, tail=r.tail) for r in report.rows
    ]
    return RunFile(
        str(probe.path),
        NAME,
        header,
        rows,
        details=details,
        what="single JSON report",
        complete=True,
    )
