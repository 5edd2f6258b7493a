"""What an inspect-ai log says beside its samples, that decides or explains a run:

- its solver chain (`plan.steps`, and `eval.solver` with its arguments where `--solver`
  chose it): the steps decide what the model is asked (a system prompt is a
  `system_message` step), so the chain is in every sample's fixture hash, and named part
  by part (`prompt_parts`) so that a refusal or a history break says which step moved;
- its own accuracy for the chosen score, after its epochs reducer (`mode`,
  `at_least_2`, ...), shown beside evalpin's pass rate, which counts every epoch;
- the subset it ran (`limit`, `sample_id`), as its config records it.
"""

from __future__ import annotations

from typing import Any

from evalpin.core.read.rundata import ToolScore

SOLVER_CHAIN = "solver chain"


def chain(steps: list[tuple[str, Any]], finish: tuple[str, Any] | None,
          solver: str | None, solver_args: Any) -> list[Any] | None:  # fmt: skip
    """The chain as it enters the fixture hash; None for a log that records none."""
    out: list[Any] = [[name, params] for name, params in steps]
    if finish is not None:
        out.append(["finish", *finish])
    if solver:
        out.append(["eval.solver", solver, solver_args])
    return out or None


def parts(steps: list[tuple[str, Any]], finish: tuple[str, Any] | None,
          solver: str | None, solver_args: Any) -> dict[str, Any]:  # fmt: skip
    """Each step by name (`generate#2` for its second use) with its arguments, and the
    chain's order: what a refusal names when the chain moved."""
    if not steps and finish is None and not solver:
        return {}
    named: dict[str, Any] = {}
    order = []
    for name, params in steps:
        key = name
        n = 2
        while key in named:
            key, n = f"{name}#{n}", n + 1
        named[key] = params or {}
        order.append(name)
    out: dict[str, Any] = {SOLVER_CHAIN: ", ".join(order)}
    out.update(named)
    if finish is not None:
        out["finish"] = {"solver": finish[0], "params": finish[1]}
    if solver:
        out["eval.solver"] = {"solver": solver, "args": solver_args}
    return out


def tool_score(
    scorer: str | None,
    key: str | None,
    scores: list[Any],
    epochs: int | None,
    reducers: list[str] | None,
) -> ToolScore | None:
    """inspect's own value for the chosen score (its `accuracy`, else its first metric),
    named with its epochs reducer, and why evalpin's pass rate may differ."""
    if scorer is None:
        return None
    entry = next(
        (s for s in scores if (s.scorer or s.name) == scorer and (key is None or s.name == key)),
        None,
    )
    if entry is None or not isinstance(entry.metrics, dict) or not entry.metrics:
        return None
    name = "accuracy" if "accuracy" in entry.metrics else next(iter(entry.metrics))
    metric = entry.metrics[name]
    value = metric.get("value") if isinstance(metric, dict) else None
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    reducer = entry.reducer or (reducers[0] if reducers else None)
    label = f"{scorer}.{key}" if key else scorer
    what = f"inspect {name} ({label}"
    if epochs and epochs > 1:
        what += f", epochs reducer {reducer or 'mean'}"
        why = (
            f"inspect reduces each sample's {epochs} epochs to one score with"
            f" {reducer or 'mean'} before its {name}; evalpin's pass rate counts every"
            " (sample, epoch) it judged"
        )
    else:
        why = f"inspect's {name} is over the samples it scored, as evalpin's pass rate"
    return ToolScore(what + ")", float(value), why)


def subset(limit: Any, sample_id: Any) -> str | None:
    """The part of the dataset the run was limited to, as its config records it."""
    if sample_id not in (None, [], ""):
        ids = sample_id if isinstance(sample_id, list) else [sample_id]
        shown = ", ".join(map(str, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        return f"sample_id {shown}"
    if limit not in (None, [], ""):
        return f"limit {limit}"
    return None
