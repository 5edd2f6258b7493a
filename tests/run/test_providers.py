"""The provider table: a provider is one module and one row, and nothing else asks."""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest

from evalpin.core.records import Completion, CompletionRequest
from evalpin.run.case_executor import Executor
from evalpin.run.session import RunRequest, plan_run
from evalpin.run.slots import PROVIDERS, Slot, SlotConfig, load_slots, resolve_slot
from evalpin.run.slots.config import Entry
from tests.clirun import cli

SRC = Path(__file__).resolve().parents[2] / "src" / "evalpin"


@dataclass(frozen=True, kw_only=True)
class EchoConfig(SlotConfig):
    """A provider written only for this test: it repeats the case id."""

    provider: ClassVar[str] = "echo"
    keys: ClassVar[frozenset[str]] = frozenset({"token_env"})
    threads_help: ClassVar[bool] = False
    token_env: str

    @classmethod
    def parse(cls, entry: Entry) -> Self:
        return cls(label=entry.label, source=entry.path, token_env=entry.env_name("token_env"))

    @classmethod
    def parse_inline(cls, label: str, target: str) -> Self | None:
        return cls(label=label, source=None, token_env=target) if target else None

    @classmethod
    def inline_spec(cls, label: str, settings: dict[str, Any]) -> str | None:
        return f"{label}=echo:{settings['token_env']}"

    def secret_env_names(self) -> tuple[str, ...]:
        return (self.token_env,)

    def public_settings(self) -> dict[str, Any]:
        return {"provider": self.provider, "token_env": self.token_env}

    def open(self) -> Slot:
        return EchoSlot(self)


class EchoSlot(Slot):
    def complete(self, request: CompletionRequest) -> Completion:
        return Completion(text=f"echo {request.case_id}", model="echo-1")

    def close(self) -> None:
        pass


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, golden_file: Path) -> Path:
    """The table with one more row, in a folder whose slots file uses it."""
    monkeypatch.setitem(PROVIDERS, "echo", EchoConfig)
    monkeypatch.chdir(tmp_path)
    for name in ("EVAL_DATASET", "EVAL_SEEDS", "EVAL_TEMPERATURE", "EVAL_NETWORK", "EVAL_WORKDIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "slots.yaml").write_text("slots:\n  e: {provider: echo, token_env: ECHO_TOKEN}\n")
    return tmp_path


def test_a_new_row_is_a_working_provider(capsys, echo: Path) -> None:
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "e", "--out", "runs/e.jsonl")
    assert r.code == 0, r.err
    header, *cases, summary = [
        json.loads(x) for x in (echo / "runs/e.jsonl").read_text().splitlines()
    ]
    # A provider that says nothing of its identity is pinned by its provider name.
    digest = hashlib.sha256(b'{"provider":"echo"}').hexdigest()[:16]
    assert header["slot"] == {
        "provider": "echo",
        "token_env": "ECHO_TOKEN",
        "settings_digest": digest,
    }
    assert {c["reported_model"] for c in cases} == {"echo-1"}
    assert summary["record"] == "summary"


def test_the_row_says_its_secrets_and_threading(echo: Path) -> None:
    plan = plan_run(RunRequest(fixtures=Path("golden.jsonl"), slot="e", jobs=4), {})
    assert plan.workers == 1  # threads_help is False
    assert Executor(plan, plan.slot_config.open(), "g").secret_names == ["ECHO_TOKEN"]
    inline = resolve_slot("x=echo:OTHER_TOKEN")
    assert isinstance(inline, EchoConfig) and inline.secret_env_names() == ("OTHER_TOKEN",)


def test_the_table_checks_keys_for_every_provider(echo: Path) -> None:
    from evalpin.core.errors import InputError

    (echo / "bad.yaml").write_text("slots:\n  e: {provider: echo, token_env: T, path: x}\n")
    with pytest.raises(InputError, match=r"slot 'e' \(provider 'echo'\): unknown key 'path'"):
        load_slots(echo / "bad.yaml")
    (echo / "bad.yaml").write_text("slots:\n  e: {provider: ftp}\n")
    with pytest.raises(InputError, match="one of openai, replay, command, echo"):
        load_slots(echo / "bad.yaml")


def test_resume_rebuilds_an_inline_slot_through_its_provider(capsys, echo: Path) -> None:
    (echo / "slots.yaml").unlink()
    args = ("run", "--fixtures", "golden.jsonl", "--out", "runs/i.jsonl")
    assert cli(capsys, *args, "--slot", "i=echo:TOKEN").code == 0
    lines = (echo / "runs/i.jsonl").read_text().splitlines()
    (echo / "runs/i.jsonl").write_text("\n".join(lines[:2]) + "\n")  # a run cut short
    r = cli(capsys, "run", "--resume", "--out", "runs/i.jsonl")
    assert r.code == 0, r.err
    assert len((echo / "runs/i.jsonl").read_text().splitlines()) == len(lines)


@pytest.mark.parametrize(("name", "config"), sorted(PROVIDERS.items()))
def test_each_row_is_complete(name: str, config: type[SlotConfig]) -> None:
    assert config.provider == name and config.keys and "provider" not in config.keys
    assert not getattr(config, "__abstractmethods__", None)


def test_nothing_outside_the_providers_asks_which_provider() -> None:
    """No `provider == "replay"` and no isinstance(.., XConfig) outside the table."""
    names = set(PROVIDERS)
    configs = {c.__name__ for c in PROVIDERS.values()}
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "slots":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                for part in [node.left, *node.comparators]:
                    if isinstance(part, ast.Constant) and part.value in names:
                        found.append(f"{path.relative_to(SRC)}:{node.lineno}")
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "isinstance"
                and any(getattr(a, "id", None) in configs for a in ast.walk(node))
            ):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []
