"""The controls of a run: what was asked of the model and the sandbox, and from where.

Values come from command-line flags, else the common control-plane variables
(`EVAL_DATASET`, `EVAL_SEEDS`, `EVAL_TEMPERATURE`, `EVAL_NETWORK`, `EVAL_WORKDIR`) so a
team's rerun scripts work unchanged, else defaults. The header records each value and
its source; only the values take part in the environment digest and the resume check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalpin.core.errors import InputError
from evalpin.core.instrument.conversation import DEFAULT_MAX_TURNS

DEFAULT_SEEDS = (11, 29, 47)
DEFAULT_TEMPERATURE = 0.0
DEFAULT_MAX_TOKENS = 2048
DEFAULT_LOOPS = 0
NETWORK_NOT_APPLICABLE = "not-applicable"  # golden sets run no model code
# How a coding run's witness runs: beside the run's other sandboxes (a core to spare: at
# once with plain pytest), or alone (nothing else of the run alive while it runs).
WITNESS_BESIDE, WITNESS_ALONE = "beside", "alone"


def _env_error(name: str, message: str) -> InputError:
    return InputError(f"${name}", message)


MAX_SEEDS = 10_000


def parse_seeds(text: str, where: str) -> list[int]:
    """`11,29,47` -> [11, 29, 47]; a range `1..20` is every seed from 1 to 20 (n samples
    per item for pass@k); at least one, no repeats."""
    seeds: list[int] = []
    try:
        for part in text.replace(" ", "").split(","):
            low, dots, high = part.partition("..")
            if dots:
                if int(high) - int(low) >= MAX_SEEDS:
                    raise InputError(where, f"at most {MAX_SEEDS:,} seeds, got {part!r}")
                seeds += range(int(low), int(high) + 1)
            elif part:
                seeds.append(int(part))
    except ValueError:
        msg = f"seeds must be comma-separated integers or ranges (1..20), got {text!r}"
        raise InputError(where, msg) from None
    if not seeds:
        raise InputError(where, "at least one seed is needed")
    if len(set(seeds)) != len(seeds):
        raise InputError(where, f"seeds repeat: {text!r}")
    return seeds


@dataclass(frozen=True)
class Controls:
    """What a run controls; `values()` is what the header and env digest record."""

    temperature: float
    seeds: list[int]
    max_tokens: int
    loops: int
    network: str
    sources: dict[str, str] = field(default_factory=dict)
    max_turns: int = DEFAULT_MAX_TURNS
    # Coding sets only: how the witness ran (`beside` the other sandboxes, or `alone`)
    # and how each limit was enforced here (run/sandbox/limits.py).
    witness: str | None = None
    limits: dict[str, str] = field(default_factory=dict)

    def values(self) -> dict[str, Any]:
        values = {
            "temperature": self.temperature,
            "seeds": list(self.seeds),
            "max_tokens": self.max_tokens,
            "loops": self.loops,
            "max_turns": self.max_turns,
            "network": self.network,
            "item_timeout": "per item, from the fixtures",
        }
        if self.witness is not None:
            values["witness"] = self.witness
        if self.limits:
            values["limits"] = dict(self.limits)
        return values


def _pick(flag: Any, env: Mapping[str, str], name: str, default: Any) -> tuple[Any, str]:
    if flag is not None:
        return flag, "flag"
    if env.get(name, "").strip():
        return env[name].strip(), f"env:{name}"
    return default, "default"


def resolve_fixtures(flag: Path | None, env: Mapping[str, str]) -> tuple[Path, str]:
    value, source = _pick(flag, env, "EVAL_DATASET", None)
    if value is None:
        raise InputError("--fixtures", "no fixture set: pass --fixtures F or set EVAL_DATASET")
    return Path(value), source


def resolve_workdir(env: Mapping[str, str]) -> Path | None:
    """`EVAL_WORKDIR`: the parent of per-item temporary directories (not recorded: a path)."""
    value = env.get("EVAL_WORKDIR", "").strip()
    if not value:
        return None
    path = Path(value)
    if not path.is_dir():
        raise _env_error("EVAL_WORKDIR", f"{value!r} is not a directory")
    return path


def check_network(env: Mapping[str, str]) -> str:
    """Only `off` is supported: model code never gets the network from evalpin."""
    value = env.get("EVAL_NETWORK", "off").strip().lower() or "off"
    if value != "off":
        raise _env_error(
            "EVAL_NETWORK",
            f"{value!r} is not supported; only 'off' (model code never gets network)",
        )
    return "env:EVAL_NETWORK" if "EVAL_NETWORK" in env else "default"


def resolve_controls(
    *,
    seeds: str | None,
    temperature: float | None,
    max_tokens: int | None,
    loops: int | None,
    network: str,
    env: Mapping[str, str],
    max_turns: int | None = None,
) -> Controls:
    """Flags beat `EVAL_*` variables beat defaults; bad values are InputError."""
    sources: dict[str, str] = {}
    seed_value, sources["seeds"] = _pick(seeds, env, "EVAL_SEEDS", None)
    if seed_value is None:
        seed_list = list(DEFAULT_SEEDS)
    else:
        where = "--seeds" if sources["seeds"] == "flag" else "$EVAL_SEEDS"
        seed_list = parse_seeds(str(seed_value), where)
    temp_value, sources["temperature"] = _pick(
        temperature, env, "EVAL_TEMPERATURE", DEFAULT_TEMPERATURE
    )
    try:
        temp = float(temp_value)
    except ValueError:
        raise _env_error("EVAL_TEMPERATURE", f"not a number: {temp_value!r}") from None
    if not math.isfinite(temp) or temp < 0:
        where = "--temperature" if sources["temperature"] == "flag" else "$EVAL_TEMPERATURE"
        raise InputError(where, f"temperature must be a finite number >= 0, got {temp_value!r}")
    sources["max_tokens"] = "flag" if max_tokens is not None else "default"
    sources["loops"] = "flag" if loops is not None else "default"
    sources["max_turns"] = "flag" if max_turns is not None else "default"
    sources["network"] = check_network(env)
    return Controls(
        temperature=temp,
        seeds=seed_list,
        max_tokens=max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS,
        loops=loops if loops is not None else DEFAULT_LOOPS,
        network=network,
        sources=sources,
        max_turns=max_turns if max_turns is not None else DEFAULT_MAX_TURNS,
    )
