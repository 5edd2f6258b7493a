"""What of an inspect-ai log's eval spec pins its instrument (issue 51).

Gone through field by field against inspect-ai 0.3.285's `EvalSpec`, `EvalConfig`,
`EvalSample` and `EvalPlan` (docs/how-to/existing-logs.md lists every field and why):

- the grader version: the chosen scorer's own entry, inspect's version, and beside them
  what else decides a grade: the model roles (`--model-role grader=...`: a model-graded
  scorer takes its grader model, and that model's generation config, base URL and
  arguments, from a role), the task's arguments, and `score_on_error`;
- the slot settings digest: the model, its base URL, arguments and generation config,
  and what bounds or shapes the model's run: its limits (`message_limit`,
  `token_limit`, `token_limit_type`, `turn_limit`, `time_limit`, `working_limit`,
  `cost_limit`), the task's sandbox and the tool-call approval policy;
- the fixture hash (per sample): input, target, choices, metadata, the solver chain,
  and a sample's own sandbox, files and setup.

Keys a log does not record stay out, so logs made before they existed keep their pins.
"""

from __future__ import annotations

from typing import Any

from evalpin.core.read.formats.foreign import scrub_args, scrub_url

# Generation config entries that do not decide a grade (transport, and the generation
# seed, which is a control: two runs that differ only in it compare).
NOT_SETTINGS = frozenset(
    {"seed", "max_retries", "timeout", "attempt_timeout", "max_connections", "batch"}
)
LIMITS = (
    "message_limit",
    "token_limit",
    "token_limit_type",
    "turn_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
)


def generate_settings(config: dict[str, Any]) -> dict[str, Any]:
    """A generation config's entries that decide answers, sorted, None left out."""
    return {k: v for k, v in sorted(config.items()) if v is not None and k not in NOT_SETTINGS}


def _model(entry: Any) -> Any:
    """One model role's config (model, generation config, base URL, arguments) with
    nothing key-like in it; a list of them (inspect's fallbacks) entry by entry."""
    if isinstance(entry, list):
        return [_model(e) for e in entry]
    if not isinstance(entry, dict):
        return entry
    out: dict[str, Any] = {"model": entry.get("model")}
    if isinstance(entry.get("config"), dict):
        out["config"] = generate_settings(entry["config"])
    if entry.get("base_url"):
        out["base_url"] = scrub_url(str(entry["base_url"]))
    if entry.get("args"):
        out["args"] = scrub_args(entry["args"])
    return out


def roles(model_roles: dict[str, Any] | None) -> dict[str, Any]:
    return {name: _model(entry) for name, entry in sorted((model_roles or {}).items())}


def grader_extra(
    model_roles: dict[str, Any] | None, task_args: dict[str, Any] | None, config: dict[str, Any]
) -> dict[str, Any]:
    """What beside the scorer's entry decides a grade, for the grader version."""
    extra: dict[str, Any] = {}
    if model_roles:
        extra["model_roles"] = roles(model_roles)
    if task_args:
        extra["task_args"] = scrub_args(task_args)
    if config.get("score_on_error"):
        extra["score_on_error"] = config["score_on_error"]
    return extra


def run_bounds(config: dict[str, Any], sandbox: Any) -> dict[str, Any]:
    """What bounds or shapes the model's run, for the slot settings: limits, the
    sandbox, the approval policy."""
    out: dict[str, Any] = {}
    limits = {k: config[k] for k in LIMITS if config.get(k) is not None}
    if limits:
        out["limits"] = limits
    if sandbox is not None:
        out["sandbox"] = sandbox
    if config.get("approval") is not None:
        out["approval"] = config["approval"]
    return out


def scorer_definition(
    scorers: list[dict[str, Any]] | None, results: list[Any], scorer: str, key: str | None
) -> Any:
    """The chosen scorer's own entry in the log (name, options, metrics), or where the
    log has no scorer list, its results entry without the values (name, params,
    metric names); None when the log records neither."""
    for entry in scorers or []:
        if entry.get("name") == scorer:
            return entry
    for s in results:
        if (s.scorer or s.name) == scorer and (key is None or s.name == key):
            return {"name": s.name, "scorer": s.scorer, "params": s.params,
                    "metrics": sorted(s.metrics)}  # fmt: skip
    return None
