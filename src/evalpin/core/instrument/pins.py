"""What pins a result: dataset hash, grader version, env digest, scorer commit, digests."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from pathlib import Path
from typing import Any

import msgspec

from evalpin._version import __version__
from evalpin.core.records import Completion

GRADERS_DIR = Path(__file__).parent / "graders"
REASONS_SOURCE = Path(__file__).parent.parent / "reasons.py"  # core/reasons.py


def dataset_hash(data: bytes) -> str:
    """sha256 of a fixture file's bytes."""
    return hashlib.sha256(data).hexdigest()


def grader_version() -> str:
    """A short sha256 over the source of every grader module and of the reason registry
    (whose order decides how reasons are recorded): any rubric edit moves it."""
    h = hashlib.sha256()
    for source in [*sorted(GRADERS_DIR.rglob("*.py")), REASONS_SOURCE]:
        inside = source.is_relative_to(GRADERS_DIR)
        name = source.relative_to(GRADERS_DIR).as_posix() if inside else source.name
        h.update(name.encode() + b"\0" + source.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def completion_digest(completion: Completion) -> str:
    """Covers text, tool calls (names and arguments), files and, for a tool
    conversation, every turn with the results it was given: any change moves it. A
    completion without turns digests exactly as before turns existed."""
    payload: dict[str, Any] = {
        "text": completion.text,
        "tools": [{"name": t.name, "args": t.args} for t in completion.tools],
        "files": completion.files,
    }
    if completion.turns:
        payload["turns"] = msgspec.to_builtins(completion.turns)
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _package_version(name: str) -> str | None:
    from importlib import metadata  # slow to import; only a new run needs it

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def env_components(grading_packages: list[str], controls: dict[str, Any]) -> dict[str, Any]:
    """What the environment was, as a reviewer can read it; never secrets or hostnames."""
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": f"{platform.system()} {platform.machine()}",
        "evalpin": __version__,
        "packages": {name: _package_version(name) for name in sorted(grading_packages)},
        "controls": controls,
    }


def env_digest(components: dict[str, Any]) -> str:
    text = json.dumps(components, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def scorer_commit(folder: Path) -> str | None:
    """HEAD of the git repository holding `folder`, `-dirty` when files in the folder
    differ from HEAD: modified, or untracked (HEAD does not pin a file it does not
    hold); None outside git (missing stays missing)."""

    head = (git(folder, "rev-parse", "--verify", "HEAD") or "").strip()
    if not head:
        return None
    dirty = (git(folder, "status", "--porcelain", "--untracked-files=all", "--", ".") or "").strip()
    return head + ("-dirty" if dirty else "")


def git(folder: Path, *args: str, timeout: float = 20) -> str | None:
    """git's output in `folder`, or None when git fails, is missing or takes too long."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


# A reported model with the digest of the slot's calibration probes joined (run/probes.py):
# a backend that answers its probes otherwise is another backend under the same label.
PROBE_TAG = "~probes:"


def probe_tagged(model: str | None, digest: str | None) -> str | None:
    """`MODEL~probes:DIGEST` when the probes pin the backend, else the model as given."""
    if model is None or digest is None:
        return model
    return f"{model}{PROBE_TAG}{digest}"


def probe_split(model: str) -> tuple[str, str | None]:
    """(the provider's model, the probes' digest or None)."""
    head, tag, digest = model.partition(PROBE_TAG)
    return head, digest if tag else None
