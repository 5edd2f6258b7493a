"""The command line: `review`, `serve`, `run`, `diff`, `verdict`, `history`, `power`, `hash`,
`check`, `seal`, `init`.

Commands (cli/commands/) parse options, call the core and pick a renderer; renderers
(cli/render_*.py) turn a finished result into terminal text. Commands import what they
need inside their bodies, so `evalpin diff` never loads Textual or the openai SDK and
starts like a plain script. Every invalid input ends the same way: one line naming the
file (and line) on stderr, exit 3, nothing half-written.
"""

from __future__ import annotations

import sys

import click

from evalpin._version import __version__
from evalpin.cli.commands.check import check_cmd
from evalpin.cli.commands.diff import diff_cmd
from evalpin.cli.commands.hash import hash_cmd
from evalpin.cli.commands.history import history_cmd
from evalpin.cli.commands.init import init_cmd
from evalpin.cli.commands.power import power_cmd
from evalpin.cli.commands.review import review_cmd
from evalpin.cli.commands.run import run_cmd
from evalpin.cli.commands.seal import seal_cmd
from evalpin.cli.commands.serve import serve_cmd
from evalpin.cli.commands.verdict import verdict_cmd
from evalpin.cli.console import EXIT_INPUT, fail
from evalpin.core.errors import InputError

__all__ = ["EXIT_INPUT", "cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalpin")
def cli() -> None:
    """Pinned evaluation runs: a score is evidence only when its instrument is pinned.

    Every result carries its triple (fixture hash, grader version, model slot);
    comparisons across different triples are refused, not filed as regressions.
    """


for _command in (
    hash_cmd,
    diff_cmd,
    verdict_cmd,
    history_cmd,
    power_cmd,
    review_cmd,
    serve_cmd,
    run_cmd,
    check_cmd,
    seal_cmd,
    init_cmd,
):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: map every input error to exit 3 and one line."""
    try:
        cli.main(args=argv, prog_name="evalpin", standalone_mode=False)
    except InputError as exc:
        fail(str(exc))
    except click.exceptions.NoArgsIsHelpError as exc:
        # `evalpin` (or a group) with nothing after it: asked what it does, not an error.
        click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
    except click.exceptions.Abort:
        click.echo("evalpin: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_INPUT)
    except BrokenPipeError:
        sys.exit(1)
