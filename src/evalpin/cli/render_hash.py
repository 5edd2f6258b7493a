"""Terminal text for `evalpin hash`."""

from __future__ import annotations

from evalpin.cli.console import console, text
from evalpin.core.sanitize import inert_line


def print_hashes(fs, gv: str) -> None:  # fs: fixtures.FixtureSet
    out = console()
    version = f" version {fs.dataset_version}" if fs.dataset_version else ""
    out.print(text(("fixtures        ", "dim"), inert_line(str(fs.path))))
    out.print(
        text(("dataset         ", "dim"), inert_line(fs.dataset_id + version), f" ({fs.kind})")
    )
    out.print(text(("dataset_hash    ", "dim"), fs.dataset_hash, ("  the fixture file", "dim")))
    out.print(
        text(
            ("envelope_hash   ", "dim"),
            fs.envelope_hash,
            (f"  the fixture file and the {len(fs.files) - 1} file(s) its cases read", "dim"),
        )
    )
    out.print(text(("grader_version  ", "dim"), gv))
    out.print(text(("cases           ", "dim"), str(len(fs.cases))))
    for case in fs.cases:
        out.print(text((case.fixture_hash, "cyan"), "  ", inert_line(case.id)))
