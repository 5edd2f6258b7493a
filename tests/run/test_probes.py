"""Calibration probes (issue 31): a backend that changed under its label, reporting the
same model name and no fingerprint, is refused like a re-pointed alias; one that cannot
be pinned is said to be so; one that changed while a run ran cannot be published."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.clirun import cli
from tests.fake_openai import FakeOpenAI, Reply, chat

CASES = [
    {
        "id": f"c{n}",
        "user": f"Say hello {n}",
        "require_tools": [],
        "forbid_tools": [],
        "must_include": ["hello"],
        "must_not": [],
    }
    for n in range(3)
]
PROBE_HINT = ("ready", "17 + 25", "capital of France")


class Backend:
    """A model behind one name, no fingerprint; `template` changes how it answers the
    probes (as another chat template does), `noisy` makes every answer differ."""

    def __init__(self) -> None:
        self.template = "A"
        self.noisy = False
        self.n = 0
        self.probes = 0
        self.switch_after: int | None = None  # probes answered before turning into "B"

    def __call__(self, n: int, in_flight: int, request: Any) -> Reply:
        self.n += 1
        prompt = request.body["messages"][0]["content"]
        if any(h in prompt for h in PROBE_HINT):
            self.probes += 1
            if self.switch_after is not None and self.probes > self.switch_after:
                self.template = "B"
            text = f"{self.template}: {prompt[:12]}" + (f" {self.n}" if self.noisy else "")
        else:
            text = "hello there"
        return chat(text, model="served-model", fingerprint=None)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    server = FakeOpenAI()
    backend = Backend()
    server.policy = backend
    server.start()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PR_BASE_URL", server.base_url)
    monkeypatch.setenv("PR_API_KEY", "sk-probe-test")
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (tmp_path / "slots.yaml").write_text(
        "slots:\n  local: {provider: openai, model: m, base_url_env: PR_BASE_URL, "
        "api_key_env: PR_API_KEY, max_attempts: 1}\n"
        "  loose: {provider: openai, model: m, base_url_env: PR_BASE_URL, "
        "api_key_env: PR_API_KEY, max_attempts: 1, deterministic: false}\n"
    )
    yield backend
    server.stop()


def run(capsys, out: str, slot: str = "local") -> Any:
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "golden.jsonl",
        "--slot",
        slot,
        "--seeds",
        "1,2,3",
        "--out",
        out,
    )
    assert r.code == 0, r.err
    rows = [json.loads(x) for x in Path(out).read_text().splitlines()]
    return rows


def test_a_changed_template_under_one_label_is_refused_and_breaks_the_series(
    project, capsys
) -> None:
    backend = project
    first = run(capsys, "runs/a.jsonl")
    header = first[0]
    assert header["probes"]["repeatable"] and header["probes"]["fingerprint"] is False
    assert backend.probes >= 9  # three probes twice before, once after
    models = {r["reported_model"] for r in first if r["record"] == "case"}
    assert len(models) == 1 and next(iter(models)).startswith("served-model~probes:")
    assert first[-1]["probes_end"] == header["probes"]["start"]
    again = run(capsys, "runs/b.jsonl")
    assert cli(capsys, "diff", "runs/a.jsonl", "runs/b.jsonl").code == 0  # same backend

    backend.template = "B"  # same name, same (no) fingerprint, another backend
    run(capsys, "runs/c.jsonl")
    d = cli(capsys, "diff", "runs/b.jsonl", "runs/c.jsonl")
    assert d.code == 2
    assert "backend changed under its label: probes differ" in d.out
    h = json.loads(cli(capsys, "history", "runs", "--json").out)
    assert len(h["series"]) == 2
    verdict = json.loads(cli(capsys, "verdict", "runs/c.jsonl", "--json").out)
    assert any("no fingerprint" in n for n in verdict["notes"])
    assert again[0]["probes"]["start"] == header["probes"]["start"]


def test_a_backend_that_does_not_repeat_cannot_be_pinned(project, capsys) -> None:
    backend = project
    backend.noisy = True
    rows = run(capsys, "runs/n.jsonl")
    assert rows[0]["probes"]["repeatable"] is False
    assert all("~probes:" not in r["reported_model"] for r in rows if r["record"] == "case")
    verdict = json.loads(cli(capsys, "verdict", "runs/n.jsonl", "--json").out)
    assert any("cannot be pinned" in n for n in verdict["notes"])


def test_a_slot_declared_non_deterministic_is_probed_for_the_record_only(project, capsys) -> None:
    rows = run(capsys, "runs/l.jsonl", slot="loose")
    assert rows[0]["probes"]["deterministic"] is False
    assert all("~probes:" not in r["reported_model"] for r in rows if r["record"] == "case")
    verdict = json.loads(cli(capsys, "verdict", "runs/l.jsonl", "--json").out)
    assert any("declared non-deterministic" in n for n in verdict["notes"])


def test_a_backend_that_moved_during_the_run_is_not_publishable(project, capsys) -> None:
    backend = project
    backend.switch_after = 6  # the six probes before the run; those after see "B"
    rows = run(capsys, "runs/m.jsonl")
    assert rows[-1]["probes_end"] != rows[0]["probes"]["start"]
    verdict = json.loads(cli(capsys, "verdict", "runs/m.jsonl", "--json").out)
    stable = next(c for c in verdict["checklist"] if c["rule"] == "backend stable")
    assert stable["ok"] is False and "changed while the run ran" in stable["why"]
