"""`evalpin serve [--host 127.0.0.1] [--port 8000] [RUN ...]`: the review TUI in a browser.

textual-serve starts one `evalpin review` process per browser tab and hands it this
process's whole environment. So on any host other than loopback the environment is cut
to an allow-list before the first tab opens (no API key, token or password can reach an
app process, hence never the page), and the launch panel is off: a page others on the
network can open must not start runs. On loopback both stay as for `evalpin review`.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

import click

from evalpin.cli.option_kinds import bounded
from evalpin.core.extras import install_hint

# What a served review app needs from the environment off loopback; nothing else passes.
SERVED_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or `localhost`; anything else (0.0.0.0, a name, an address)
    may be reachable from other machines."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_environment(environ: Mapping[str, str], loopback: bool) -> dict[str, str]:
    """The environment the served app processes inherit."""
    if loopback:
        return dict(environ)
    return {k: environ[k] for k in SERVED_ENV if k in environ}


def review_command(runs: tuple[Path, ...], launch: bool) -> str:
    """The shell command textual-serve runs per tab: this evalpin, the same runs."""
    argv = [sys.executable, "-m", "evalpin", "review"]
    if not launch:
        argv.append("--no-launch")
    argv += [str(p) for p in runs]  # the app runs in this folder, as `review` would
    return shlex.join(argv)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@bounded("--port", default=8000, low=1, high=65535)
@click.option(
    "--no-token",
    is_flag=True,
    help="Serve without a token: loopback only, and anyone on this machine can open it.",
)
@bounded(
    "--max-sessions",
    default=4,
    low=1,
    high=64,
    help="Browser sessions (each a review process) at once.",
)
@bounded(
    "--idle",
    "idle_s",
    default=1800,
    low=1,
    high=7 * 86400,
    help="Seconds without input after which a session is closed.",
)
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
def serve_cmd(
    host: str, port: int, no_token: bool, max_sessions: int, idle_s: int, runs: tuple[Path, ...]
) -> None:
    """Serve the review TUI in a browser: RUN... as `evalpin review` would open them.

    Every request needs a random token (printed once, as a URL; set your own in the
    EVALPIN_SERVE_TOKEN environment variable, never in a flag `ps` would show); without it
    the answer is 403 and no review process starts. The launch panel is on only when HOST
    is loopback; elsewhere it is off, the screen says so, and the served app gets no
    secret from the environment.
    """
    from evalpin.core.read.discovery import review_pair
    from evalpin.core.read.runfile import read_run

    if len(runs) > 2:
        raise click.UsageError("at most two runs: LEFT [RIGHT]")
    if len(runs) == 1 and runs[0].is_dir():  # a folder alone: its newest pair, as `review`
        left, right, _ = review_pair(runs[0], None)
        runs = (left,) if right is None else (left, right)
    for path in runs:
        read_run(path)  # a bad file exits 3 here, not in a browser tab
    try:
        import textual_serve.server  # noqa: F401
    except ImportError:
        hint = install_hint("serve")
        raise click.ClickException(f"evalpin serve needs textual-serve: {hint}") from None

    from evalpin.cli.serve_access import TOKEN_ENV, Access, new_token
    from evalpin.cli.serve_server import GuardedServer

    loopback = is_loopback(host)
    if no_token and not loopback:
        raise click.UsageError(f"--no-token is for loopback only; {host} is not loopback")
    token = None if no_token else (os.environ.pop(TOKEN_ENV, "") or new_token())
    environment = served_environment(os.environ, loopback)
    os.environ.clear()
    os.environ.update(environment)
    if not loopback:
        click.echo(
            f"launch panel off: {host} is not a loopback address; "
            "the served app gets no secret from the environment",
            err=True,
        )
    shown = f"[{host}]" if ":" in host else host
    if token is None:
        ready = f"serving without a token: anyone on this machine can open http://{shown}:{port}/"
    else:
        ready = f"open http://{shown}:{port}/?token={token}"
    access = Access(token, max_sessions=max_sessions, idle_s=idle_s, host=host, port=port)
    GuardedServer(
        review_command(runs, launch=loopback),
        host=host,
        port=port,
        title="evalpin review",
        access=access,
        ready=lambda: click.echo(ready, err=True),
    ).serve()
