"""The ways a coding item's candidate runs, as sandboxed processes and a judgement.

An `isolation: process` item (the default) runs twice: `PlainMode` first, plain pytest
with the candidate imported in-process as `python -m pytest` would, nothing added: the
truth for honest code, which alone decides a fail; then, on a pass, `ProcessMode`, the
witness (see `run/sandbox/item.py` and `graders/witness.py`).

`ProcessMode` (the witness): the candidate's files are written
only to the worker's folder and imported only by the worker, a sandbox that sees that
folder, the wire module and the system, nothing else. The pytest process runs in a
second sandbox whose copy of each candidate `.py` file is a generated stand-in that
forwards to the worker over pipes (`core/instrument/graders/wire/`): plain data and
handles only, never code, never pickles. pytest writes its JUnit report into a control
folder the worker's sandbox does not contain, and the grader reads it from there. No
process that ran candidate code can write to the report or to the pytest process.

`InProcessMode` (`isolation: in-process`): the candidate is imported by pytest, as tests
that monkeypatch its internals need. Graded with tamper checks (`judge_in_process`): a
guard plugin's snapshot and record, two canary tests it adds under random names that
are in no file the candidate can read, and the test copy's hash after the run.

Each mode prepares its folders in a `Box`, returns its process `Spec`s (the last one is
the process whose exit ends the run) and judges once they have run.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import py_compile
import secrets
import sys
import tempfile
import weakref
from pathlib import Path

from evalpin.core.instrument.fixtures import CodingItem
from evalpin.core.instrument.graders import guard, wire
from evalpin.core.instrument.graders.coding import (
    FILE_SIZE_BYTES,
    GUARDED_PYTEST_BOOT,
    IMPORTABLE_SUFFIXES,
    PLAIN_PYTEST_BOOT,
    PYTEST_BOOT,
    PYTEST_INI,
    PYTEST_INI_NAME,
    STUB,
    WORKER_BOOT,
    expected_tests,
    failed_tests,
    judge_in_process,
    judge_report,
    module_name,
    pytest_args,
)
from evalpin.core.instrument.graders.exports import star_exports
from evalpin.core.instrument.graders.outcomes import explained
from evalpin.core.instrument.graders.wire import notes as witness_notes
from evalpin.core.reasons import SANDBOX_ERROR, WITNESS
from evalpin.run.bytecode import loaded_cache
from evalpin.run.sandbox import shared
from evalpin.run.sandbox.box import Box, read_regular, write_tree
from evalpin.run.sandbox.mounts import Spec

REPORT = "report.xml"


# Where a sandbox with namespaces sees evalpin's runtime folder: one path for every box,
# so no host path of evalpin's own folders reaches a process (or a tail, or a run file).
RUNTIME_IN_BOX = Path("/evalpin")


def _runtime(box: Box, files: dict[str, bytes]) -> tuple[Path, Path]:
    """A read-only-bound folder with evalpin's own modules for the sandboxed side (and
    the capture bound every pytest process installs), and where the sandbox sees it:
    the process's shared one at `RUNTIME_IN_BOX` when the sandboxes have namespaces
    (`shared.py`; each box reads it through an overlay of its own), else a copy in the
    box."""
    files = {**files, "evalpin_capture.py": _capture()}
    if box.namespaces:
        return shared.folder(files), RUNTIME_IN_BOX
    folder = box.folder("runtime")
    write_tree(folder, files)
    return folder, folder


@functools.cache
def _capture() -> bytes:
    return _CAPTURE.read_bytes()


# Read, never imported here: importing it is harmless, but the module is pytest's side.
_CAPTURE = Path(guard.__file__).with_name("capture.py")


@functools.cache
def _wire() -> dict[str, bytes]:
    """The wire package's files, as `evalpin_wire/` in the runtime folder, each with its
    compiled form (an unchecked-hash .pyc, which `python -B` still reads): compiling
    them in every sandboxed process would cost each item about 20 ms."""
    package = Path(wire.__file__).parent
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for source in sorted(package.glob("*.py")):
            name = f"evalpin_wire/{source.name}"
            compiled = Path(tmp, source.stem + ".pyc")
            py_compile.compile(
                str(source),
                cfile=str(compiled),
                dfile=name,
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
            )
            files[name] = source.read_bytes()
            files[f"evalpin_wire/__pycache__/{source.stem}.{sys.implementation.cache_tag}.pyc"] = (
                compiled.read_bytes()
            )
    return files


def _control(box: Box) -> tuple[Path, Path]:
    ctl = box.control()
    ini = ctl / PYTEST_INI_NAME
    ini.write_text(PYTEST_INI, encoding="utf-8")
    return ctl, ini


class PlainMode:
    """Candidate and pytest in one sandbox, plain: no guard, no canary, no stand-in, so
    honest code behaves exactly as under `python -m pytest` (threads, atexit, tmp_path).
    A pass forged here is the witness's to refuse."""

    def __init__(self, item: CodingItem, test_source: bytes, candidate: dict[str, bytes]) -> None:
        self.item = item
        self.test_source = test_source
        self.candidate = candidate
        self.report: Path | None = None

    def specs(self, box: Box, env: dict[str, str], limits: dict[str, int]) -> list[Spec]:
        runtime, seen = _runtime(box, {})
        work = box.folder("work")
        ctl, ini = _control(box)
        self.report = ctl / REPORT
        write_tree(work, {**self.candidate, self.item.test_file.name: self.test_source})
        args = pytest_args(str(ini), str(work), str(self.report), self.item.test_file.name)
        argv = [sys.executable, "-I", "-B", "-c", PLAIN_PYTEST_BOOT, str(seen), *args]
        return [Spec(argv, env, work, rw=[work, ctl], ro_at=[(runtime, seen)], limits=limits)]

    def judge(self, box: Box, exit_code: int | None) -> tuple[bool, list[str]]:
        assert self.report is not None
        source = self.test_source.decode("utf-8", "replace")
        report = read_regular(box.view(self.report))
        return judge_report(
            report, expected_tests(source), exit_code=exit_code, explains=explained(source)
        )

    def failed_tests(self, box: Box) -> list[str]:
        assert self.report is not None
        expected = expected_tests(self.test_source.decode("utf-8", "replace"))
        return failed_tests(read_regular(box.view(self.report)), expected)


class ProcessMode:
    """Candidate in a worker sandbox; pytest in another, on stand-ins, both on one set of
    folders (the work folder, /tmp, /dev/shm; docs/concepts/isolation.md, "one
    filesystem")."""

    def __init__(self, item: CodingItem, test_source: bytes, candidate: dict[str, bytes]) -> None:
        self.item = item
        self.test_source = test_source
        self.candidate = candidate
        # pytest's report and the wire's notes: files only pytest's process reaches.
        self.report, self.notes = _Private("report"), _Private("notes")
        self.imports: Path | None = None  # the folder the worker imports the candidate from

    def specs(self, box: Box, env: dict[str, str], limits: dict[str, int]) -> list[Spec]:
        runtime, seen = _runtime(box, _wire())
        ctl, ini = _control(box)
        report, notes = self.report.handed(), self.notes.handed()
        work = box.folder("work")
        modules = {p: m for p in self.candidate if (m := module_name(p))}
        sources = {m: self.candidate[p].decode("utf-8", "replace") for p, m in modules.items()}
        exports = star_exports(sources)
        test_name = self.item.test_file.name
        # What pytest imports from the work folder: a stand-in for each candidate module,
        # and the test file (never a file of the worker's: `wire/imports.py`).
        shown = {p: STUB.format(name=m, exports=exports[m]).encode() for p, m in modules.items()}
        shown[test_name] = self.test_source
        # Two pairs of pipes: the main threads' calls, and the side channel for other
        # threads' (a timer's callback, a thread pool's).
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        side_req_r, side_req_w = os.pipe()
        side_resp_r, side_resp_w = os.pipe()
        worker_fds = (req_r, resp_w, side_req_r, side_resp_w)
        tester_fds = (resp_r, req_w, side_resp_r, side_req_w)
        private = f"{report},{notes}"
        relay = {"EVALPIN_RELAY": f"evalpin-relay-{secrets.token_hex(8)}"}
        if box.namespaces:
            # One work folder, the candidate's own files in it; pytest's sandbox sees the
            # stand-ins and the test copy bound read-only over them, from a folder only
            # it has (`src`, sealed once filled). The worker sees an empty file where the
            # test is: its expected answers are not the candidate's to read.
            src = box.folder("src")
            write_tree(work, {**self.candidate, test_name: b""})
            write_tree(src, shown)
            imports, shared = work, [str(work), "/tmp", "/dev/shm"]
            mine = {"base": True, "mountpoints": [src, ctl]}
            theirs = {
                "rw": [ctl, src],
                "joins": True,
                "sealed": [src],
                # Nothing the worker could have written runs in pytest's sandbox.
                "noexec": [work, Path("/tmp"), Path("/dev/shm")],
                "overlay": [(src / p, work / p) for p in sorted(shown)],
            }
        else:
            # No mount namespace: the worker imports its files from a folder of its own,
            # in the work folder (the stand-ins', the folders both write) like pytest.
            imports = box.folder("candidate")
            write_tree(imports, self.candidate)
            data = {p: d for p, d in self.candidate.items() if p not in modules}
            write_tree(work, {**data, **shown})
            shared = [str(work), str(imports), env["TMPDIR"]]
            mine, theirs = {}, {"rw": [work, ctl]}
        self.imports = imports
        worker = Spec(
            [
                sys.executable,
                "-I",
                "-B",
                "-u",
                "-c",
                WORKER_BOOT,
                str(seen),
                ",".join(map(str, worker_fds)),
                json.dumps(sorted(modules.values())),
                str(imports),
            ],
            # Built from the item alone: nothing of pytest's or the grader's (but where
            # the tests' child processes ask for the candidate's programs: `relay.py`).
            {**{k: v for k, v in env.items() if not k.startswith("PYTEST_")}, **relay},
            work,
            rw=[work],
            ro_at=[(runtime, seen)],
            pass_fds=worker_fds,
            limits=limits,
            **mine,
        )
        args = pytest_args(str(ini), str(work), f"/proc/self/fd/{report}", test_name)
        # pytest runs no candidate code here: its own files (capture, report) are not
        # held to the candidate's file-size cap (the folders' own caps still hold).
        own_limits = {k: v for k, v in limits.items() if k != "RLIMIT_FSIZE"}
        placed = [str(work / p) for p in shown]
        tester = Spec(
            [sys.executable, "-I", "-B", "-c", PYTEST_BOOT, str(seen), private, *args],
            {
                **env,
                "EVALPIN_RPC_FDS": ",".join(map(str, tester_fds)),
                "EVALPIN_MODULES": ",".join(sorted(modules.values())),
                "EVALPIN_NOTES": f"/proc/self/fd/{notes}",
                **relay,
                "EVALPIN_RUNTIME": str(seen),
                # The folders the worker writes too, and what the grader put there.
                "EVALPIN_SHARED": json.dumps(
                    {"roots": shared, "placed": placed, "devices": box.namespaces}
                ),
            },
            work,
            ro_at=[(runtime, seen)],
            pass_fds=(*tester_fds, report, notes),
            limits=own_limits,
            **theirs,
        )
        return [worker, tester]

    def judge(self, box: Box, exit_code: int | None) -> tuple[bool, list[str]]:
        rewritten = self._rewritten(box)
        if rewritten:
            note = f"the candidate rewrote its own code while the tests ran ({rewritten})"
            os.write(self.notes.fd, witness_notes.line("unsupported", note).encode())
        said = self.notes.read()
        why = witness_notes.kind_of(said)
        if why == "shadowed":  # the candidate's star import would decide the asserts
            return False, [WITNESS("shadowed")]
        if why is not None:  # the wire could not carry something
            return False, [SANDBOX_ERROR("unsupported")]
        source = self.test_source.decode("utf-8", "replace")
        report, expected = self.report.read(), expected_tests(source)
        passed, reasons = judge_report(
            report, expected, exit_code=exit_code, explains=explained(source)
        )
        failed = [] if passed else failed_tests(report, expected)
        if witness_notes.inherent_in(said, failed):  # each met what the wire refuses
            return False, [SANDBOX_ERROR("unsupported")]
        # a failing test that compared by a rule the candidate's own would have answered
        if not passed and witness_notes.compared_in(said, failed):
            return False, [WITNESS("compared")]
        return passed, reasons

    def failed_tests(self, box: Box) -> list[str]:
        expected = expected_tests(self.test_source.decode("utf-8", "replace"))
        return failed_tests(self.report.read(), expected)

    def _rewritten(self, box: Box) -> str:
        """A module file of the candidate's that the worker changed (or bytecode beside
        one that its import would run instead: `bytecode.py`) while the tests ran, read
        where the worker left it, or "". What a reload then runs is code nobody graded:
        its answer, whichever, is not judged."""
        if self.imports is None:
            return ""
        for path, data in self.candidate.items():
            if not path.endswith(IMPORTABLE_SUFFIXES):
                continue
            if read_regular(box.view(self.imports / path)) != data:
                return path
            where = self.imports / path
            cache = loaded_cache(box.view(where), str(where), data, read_regular)
            if cache is not None:
                return str(Path(path).parent / "__pycache__" / cache)
        return ""


class _Private:
    """A file pytest's process of the witness writes through a descriptor of its own
    (`/proc/self/fd/N`, a memfd of the grader's): nothing of the worker's reaches it, nor
    anything pytest's process starts (it passes on no descriptor, and is not dumpable:
    another process of its uid cannot open its descriptors or trace it)."""

    def __init__(self, name: str) -> None:
        self.fd = os.memfd_create(f"evalpin-{name}")
        weakref.finalize(self, os.close, self.fd)

    def handed(self) -> int:
        """A descriptor of it for the sandbox (`execute` closes it once started)."""
        return os.dup(self.fd)

    def read(self) -> bytes:
        return os.pread(self.fd, FILE_SIZE_BYTES, 0)


class InProcessMode:
    """Candidate and pytest in one sandbox, with canaries, a guard and a hash check."""

    def __init__(self, item: CodingItem, test_source: bytes, candidate: dict[str, bytes]) -> None:
        self.item = item
        self.test_source = test_source
        self.candidate = candidate
        self.canaries = ("test_" + secrets.token_hex(8), "test_" + secrets.token_hex(8))
        self.paths: dict[str, Path] = {}

    def specs(self, box: Box, env: dict[str, str], limits: dict[str, int]) -> list[Spec]:
        runtime, seen = _runtime(box, {"evalpin_guard.py": Path(guard.__file__).read_bytes()})
        work = box.folder("work")
        ctl, ini = _control(box)
        self.paths = {
            "report": ctl / REPORT,
            "guard": ctl / f"guard-{secrets.token_hex(8)}.json",
            "test": work / self.item.test_file.name,
        }
        write_tree(work, {**self.candidate, self.item.test_file.name: self.test_source})
        args = pytest_args(str(ini), str(work), str(self.paths["report"]), self.item.test_file.name)
        # The guard's orders travel in a pipe, read before any candidate code runs.
        orders_r, orders_w = os.pipe()
        config = {"out": str(self.paths["guard"]), "canaries": self.canaries}
        os.write(orders_w, json.dumps(config).encode())
        os.close(orders_w)
        boot = [sys.executable, "-I", "-B", "-c", GUARDED_PYTEST_BOOT, str(seen)]
        argv = [*boot, str(orders_r), *args]
        spec = Spec(argv, env, work, rw=[work, ctl], ro_at=[(runtime, seen)], pass_fds=(orders_r,))
        return [dataclasses.replace(spec, limits=limits)]

    def judge(self, box: Box, exit_code: int | None) -> tuple[bool, list[str]]:
        after = read_regular(box.view(self.paths["test"]))
        intact = after is not None and _sha(after) == _sha(self.test_source)
        expected = expected_tests(self.test_source.decode("utf-8", "replace"))
        return judge_in_process(
            read_regular(box.view(self.paths["report"])),
            read_regular(box.view(self.paths["guard"])),
            expected,
            self.canaries,
            exit_code=exit_code,
            test_file_intact=intact,
        )

    def failed_tests(self, box: Box) -> list[str]:
        expected = expected_tests(self.test_source.decode("utf-8", "replace"))
        return failed_tests(read_regular(box.view(self.paths["report"])), expected, self.canaries)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
