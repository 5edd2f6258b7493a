"""The run header's nested maps are closed (issue 51): `slot` per provider, `controls`
with its `limits`, and `env`, each refusing a key evalpin never writes with the nearest
valid name, `x-` keys of one's own allowed; the maps below them that are open by design
(`env.packages`, `env.controls`, `slot.sampling`...) read whatever they hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.read.header_maps import header_map_problem
from evalpin.core.read.runfile import read_run
from evalpin.run.slots.providers import load_slots
from tests.clirun import cli

DEMO = Path(__file__).parents[2] / "runs" / "demo-coding-publishable.jsonl"


def _with_header(tmp_path: Path, change) -> Path:
    lines = DEMO.read_text().splitlines(True)
    header = json.loads(lines[0])
    change(header)
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return run


def test_what_every_provider_writes_is_within_the_rule(tmp_path, monkeypatch) -> None:
    """Every provider's header settings, with every optional key it can write, pass the
    rule: a new setting added to a provider without it is caught here."""
    monkeypatch.chdir(tmp_path)
    Path("answers.jsonl").write_text('{"case_id": "a", "seed": 1, "text": "x"}\n')
    Path("model.py").write_text("print('x')\n")
    Path("slots.yaml").write_text(
        json.dumps(
            {
                "slots": {
                    "o": {
                        "provider": "openai", "model": "m", "base_url_env": "U",
                        "api_key_env": "K", "sampling": {"top_p": 0.5}, "tier": "free",
                        "organization_env": "O", "project_env": "P",
                        "headers_env": {"X-T": "T"}, "tool_choice": "auto",
                        "endpoint": "completions", "stop": ["END"],
                    },
                    "c": {"provider": "command", "argv": ["python", "model.py"],
                          "code": ["*.py"]},
                    "r": {"provider": "replay", "path": "answers.jsonl"},
                }
            }
        )
    )  # fmt: skip
    slots = load_slots("slots.yaml")
    assert len(slots) == 3
    for config in slots.values():
        settings = config.header_settings() | {"settings_digest": config.settings_digest()}
        assert header_map_problem(settings, {}, {}) is None, settings


@pytest.mark.parametrize(
    ("where", "key", "said"),
    [
        ("slot", "sha265", "did you mean 'sha256'"),
        ("slot", "modle", "unknown key 'modle'"),  # a key of another provider's, misspelt
        ("controls", "max_token", "did you mean 'max_tokens'"),
        ("env", "pyton", "did you mean 'python'"),
    ],
)
def test_an_unknown_key_in_a_header_map_is_refused_in_one_line(
    capsys, tmp_path, where, key, said
) -> None:
    run = _with_header(tmp_path, lambda h: h[where].__setitem__(key, 1))
    r = cli(capsys, "verdict", str(run))
    assert r.code == 3 and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    assert f"{run}:1: {where}" in r.err and said in r.err, r.err


def test_limits_inside_controls_are_closed_too(tmp_path) -> None:
    run = _with_header(tmp_path, lambda h: h["controls"]["limits"].__setitem__("memroy", "x"))
    with pytest.raises(InputError, match=r"controls\.limits: unknown key 'memroy'.*'memory'"):
        read_run(run)


def test_a_slot_without_its_provider_is_refused_and_another_providers_is_its_own(
    tmp_path,
) -> None:
    run = _with_header(tmp_path, lambda h: h["slot"].pop("provider"))
    with pytest.raises(InputError, match="'provider' is missing"):
        read_run(run)
    run = _with_header(tmp_path, lambda h: h["slot"].update(provider="echo", token_env="T"))
    assert read_run(run).header.slot["token_env"] == "T"  # a row added to the table


def test_own_keys_and_the_open_maps_below_are_read(tmp_path) -> None:
    def change(h: dict) -> None:
        h["slot"]["x-team"] = "evals"
        h["controls"]["x-note"] = {"anything": 1}
        h["env"]["packages"]["some-plugin"] = "1.0"  # a package name: open by design
        h["env"]["controls"]["whatever"] = 1  # the controls as digested, never re-read

    run = read_run(_with_header(tmp_path, change))
    assert run.header is not None and run.header.slot["x-team"] == "evals"
    assert len(run.rows) > 0


def test_old_bundled_runs_still_read() -> None:
    for path in sorted(DEMO.parent.glob("*.jsonl")):
        assert read_run(path).header is not None, path


def _straddling(tmp_path: Path, extra: str) -> tuple[Path, int]:
    """A run whose case line across the reader's first 1 MiB chunk boundary carries
    `extra` before its closing brace; (the file, that line's 1-based number)."""
    header, case = DEMO.read_text().splitlines()[:2]
    lines = [header]
    size = len(header) + 1
    n = 0
    while size + len(filler := case.replace('"seed":', f'"x-n":{n},"seed":', 1)) < 1 << 20:
        lines.append(filler)
        size += len(filler) + 1
        n += 1
    assert size < 1 << 20 < size + len(case)  # the next line starts before it, ends after
    lines.append(case[:-1] + extra + "}")
    lines.extend(lines[1:50])
    run = tmp_path / "big.jsonl"
    run.write_text("\n".join(lines) + "\n")
    return run, len(lines) - 49


@pytest.mark.parametrize("key", ["status", "seed", "model_slot", "tail"])
def test_any_key_twice_in_a_line_read_on_its_own_is_refused(tmp_path, key) -> None:
    """A line across two of the reader's chunks is read alone: every key of it is
    checked, not only `pass` (issue 51)."""
    first = json.loads(DEMO.read_text().splitlines()[1])
    # A key the line lacks is written twice; the last `status` reads as judged.
    again = f',"{key}":{json.dumps(first[key])}' if key in first else ',"status":"error"'
    assert key in first or key == "status"
    run, line = _straddling(tmp_path, again + (',"status":null' if key == "status" else ""))
    with pytest.raises(InputError, match=rf":{line}: duplicate key '{key}'"):
        read_run(run)
    ok, _ = _straddling(tmp_path, "")
    assert len(read_run(ok).rows) == line + 48  # every case line, the header aside
