"""The tamper witness for `isolation: in-process` items: a pytest plugin object.

Copied into the sandbox and given to `pytest.main(plugins=[Guard(path)])`, so it is
registered before any test module (and so any candidate code) is imported. At session
start it snapshots what decides a test's outcome: the registered plugins and every
hook's implementations, pytest's report and runner internals, the `pytest` modules in
`sys.modules`, the atexit callbacks and the live threads. After collection it adds two
canary tests (one must pass, one must fail) whose random names it read from an inherited
pipe before any candidate code ran: they are in no file and no argument. It records each
test's outcome as it is logged. At session end it compares the snapshot and writes all
of it, once, to its output file (O_EXCL, so a second writer fails). The grader compares
that file with the JUnit report (see `judge_in_process` in coding.py).

This is detection, not prevention: the candidate shares this process and could find and
patch the witness too. Items that need prevention use `isolation: process`.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading

import pytest

# Callables whose replacement would let code change an outcome or the report.
_WATCHED = (
    ("_pytest.reports", "TestReport.from_item_and_call"),
    ("_pytest.reports", "TestReport.__init__"),
    ("_pytest.reports", "BaseReport.passed"),
    ("_pytest.reports", "BaseReport.failed"),
    ("_pytest.runner", "call_and_report"),
    ("_pytest.runner", "runtestprotocol"),
    ("_pytest.runner", "CallInfo.from_call"),
    ("_pytest.runner", "pytest_runtest_makereport"),
    ("_pytest.python", "pytest_pyfunc_call"),
    ("_pytest.python", "Function.runtest"),
    ("_pytest.main", "pytest_runtestloop"),
    ("_pytest.junitxml", "LogXML.pytest_runtest_logreport"),
    ("_pytest.junitxml", "LogXML.pytest_sessionfinish"),
    ("_pytest.junitxml", "_NodeReporter.append_failure"),
    ("_pytest.junitxml", "_NodeReporter.to_xml"),
    ("_pytest.terminal", "TerminalReporter.pytest_runtest_logreport"),
    ("_pytest.outcomes", "fail"),
    ("_pytest.outcomes", "skip"),
    ("_pytest.outcomes", "exit"),
)


def _lookup(module: str, path: str):
    obj = sys.modules.get(module)
    for part in path.split("."):
        obj = (vars(obj) if isinstance(obj, type) else obj.__dict__).get(part) if obj else None
    return obj


def test_name(nodeid: str) -> str:
    """`file.py::Class::test[param]` -> `Class::test`, as the report's names read."""
    parts = nodeid.split("::")[1:]
    if parts:
        parts[-1] = parts[-1].split("[", 1)[0]
    return "::".join(parts)


_RANK = {"passed": 0, "skipped": 1, "failed": 2}


class Guard:
    """Snapshot at session start, outcomes as logged, comparison at session end."""

    def __init__(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as pipe:
            config = json.loads(pipe.read())
        self.path = config["out"]
        self.canaries = config["canaries"]
        self.injected = False
        self.pid = os.getpid()
        self.before: dict | None = None
        self.outcomes: dict[str, str] = {}

    def _snapshot(self, config) -> dict:
        pm = config.pluginmanager
        hooks = {}
        for name in dir(config.hook):
            caller = getattr(config.hook, name, None)
            if hasattr(caller, "get_hookimpls"):
                hooks[name] = [[i.plugin_name, id(i.function)] for i in caller.get_hookimpls()]
        watched = {f"{m}:{p}": id(_lookup(m, p)) for m, p in _WATCHED}
        modules = {
            n: id(m) for n, m in sys.modules.items() if n == "pytest" or n.startswith("_pytest")
        }
        return {
            "plugins": sorted([n, id(p)] for n, p in pm.list_name_plugin()),
            "hooks": hooks,
            "watched": watched,
            "modules": modules,
            "atexit": atexit._ncallbacks(),
            "threads": sorted(t.ident or 0 for t in threading.enumerate()),
        }

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session) -> None:
        # pytest registers its temporary folders' atexit cleanup when a test first asks
        # for `tmp_path`: made here, that registration is in the snapshot, not a change.
        factory = getattr(session.config, "_tmp_path_factory", None)
        if factory is not None:
            factory.getbasetemp()
        self.before = self._snapshot(session.config)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items) -> None:
        module = next((i.getparent(pytest.Module) for i in items), None)
        if module is None:
            return
        must_pass, must_fail = self.canaries
        items.append(pytest.Function.from_parent(module, name=must_pass, callobj=_must_pass))
        items.append(pytest.Function.from_parent(module, name=must_fail, callobj=_must_fail))
        self.injected = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report) -> None:
        outcome = "failed" if report.failed else "skipped" if report.skipped else "passed"
        if report.when != "call" and outcome == "passed":
            outcome = None  # setup/teardown passing says nothing about the test
        name = test_name(report.nodeid)
        if name in self.canaries and report.failed:
            report.longrepr = "evalpin canary: fails on purpose"  # keeps the tail for real tests
        if outcome is not None:
            old = self.outcomes.get(name, "passed")
            self.outcomes[name] = max(old, outcome, key=_RANK.__getitem__)
        else:
            self.outcomes.setdefault(name, "passed")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session) -> None:
        after = self._snapshot(session.config)
        changed = sorted(k for k in after if self.before is None or after[k] != self.before[k])
        if os.getpid() != self.pid:
            changed.append("forked")
        record = {"changed": changed, "outcomes": self.outcomes, "canaries": self.injected}
        data = json.dumps(record).encode()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            return
        with os.fdopen(fd, "wb") as out:
            out.write(data)


def _must_pass() -> None:
    assert [1] == [1]


def _must_fail() -> None:
    assert [1] == [2], "evalpin canary"
