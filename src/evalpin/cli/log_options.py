"""`--scorer`, `--metric` and `--filter`: which of another tool's grades decides pass/fail;
`--prompt` and `--provider`: which (prompt, provider) run of a promptfoo file to read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

SCORER_HELP = (
    "inspect-ai logs: the scorer that decides pass/fail, or NAME.KEY for one value of a "
    "scorer whose score is a dict (e.g. checks.exact). Default: the first scorer the log "
    "lists (and its first key)."
)
METRIC_HELP = (
    "lm-eval logs: the metric whose value 1 is a pass. NAME applies to every task that "
    "has it; TASK=NAME to that task only; repeat for several. A task named by neither "
    "keeps its first metric. A name no task has is an error listing what the log offers."
)
FILTER_HELP = (
    "lm-eval logs: the filter whose answers are graded (e.g. strict-match, "
    "flexible-extract). NAME or TASK=NAME, repeatable, as for --metric; default: each "
    "task's first filter."
)

PROMPT_HELP = (
    "promptfoo output holding several (prompt, provider) runs: the prompt's label, its "
    "template or its id (a prefix of 6+ characters). A missing or wrong choice lists them."
)
PROVIDER_HELP = (
    "promptfoo output holding several (prompt, provider) runs: the provider's label or id."
)


def log_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options every command that reads logs shares; they arrive as `options`."""

    def wrapped(
        *args: Any,
        scorer: str | None,
        metric: tuple[str, ...],
        filter: tuple[str, ...],
        prompt: str | None,
        provider: str | None,
        **kwargs: Any,
    ) -> Any:
        from evalpin.core.read.formats import ReadOptions  # loaded by the command, not at start

        options = ReadOptions(scorer, metric, filter, prompt, provider)
        return command(*args, options=options, **kwargs)

    wrapped.__name__ = command.__name__
    wrapped.__doc__ = command.__doc__
    wrapped = click.option("--provider", metavar="NAME", help=PROVIDER_HELP)(wrapped)
    wrapped = click.option("--prompt", metavar="NAME", help=PROMPT_HELP)(wrapped)
    wrapped = click.option("--filter", metavar="NAME", multiple=True, help=FILTER_HELP)(wrapped)
    wrapped = click.option("--metric", metavar="NAME", multiple=True, help=METRIC_HELP)(wrapped)
    return click.option("--scorer", metavar="NAME", help=SCORER_HELP)(wrapped)
