"""Fetch the conformance corpus: each project's sdist at its pinned version, checked
against its recorded sha256, unpacked into a cache that is never committed.

    python scripts/fetch_conformance.py [--cache /work/corpus] [--only NAME,NAME] [--table F]

The table is `scripts/conformance-projects.toml` (or `--table`: the held-out
`scripts/conformance-heldout.toml`). pip downloads each sdist with
`pip download --no-deps --no-binary NAME NAME==VERSION`: the project itself from its
source distribution (its tests ship only there), while the build backend pip needs to
read the sdist's metadata may come as a wheel (`--no-binary :all:` would build setuptools,
hatchling and flit from source too, and fails without build isolation). A digest that does
not match stops the script: a re-uploaded or altered sdist is a different corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).with_name("conformance-projects.toml")
DEFAULT_CACHE = Path("/work/corpus")


@dataclass(frozen=True)
class Project:
    """One row of the table (see its header for what each field means)."""

    name: str
    version: str
    sha256: str
    license: str
    candidate: tuple[str, ...]
    tests: tuple[str, ...]
    conftest: tuple[str, ...] = ()
    exclude: dict[str, str] | None = None  # test file -> why it is left out


def projects(table: Path = TABLE) -> list[Project]:
    rows = tomllib.loads(table.read_text())["project"]
    return [
        Project(
            name=r["name"],
            version=r["version"],
            sha256=r["sha256"],
            license=r["license"],
            candidate=tuple(r["candidate"]),
            tests=tuple(r["tests"]),
            conftest=tuple(r.get("conftest", ())),
            exclude=r.get("exclude", {}),
        )
        for r in rows
    ]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sdist(project: Project, folder: Path) -> Path | None:
    """The downloaded sdist of `project` in `folder` whose digest is the recorded one."""
    for path in folder.glob("*"):
        if path.is_file() and _digest(path) == project.sha256:
            return path
    return None


def fetch(project: Project, cache: Path = DEFAULT_CACHE) -> Path:
    """The unpacked source tree of `project` (downloaded and checked first if needed)."""
    tree = cache / "src" / f"{project.name}-{project.version}"
    if (tree / ".sha256").is_file() and (tree / ".sha256").read_text() == project.sha256:
        return tree
    sdists = cache / "sdists" / f"{project.name}-{project.version}"
    sdists.mkdir(parents=True, exist_ok=True)
    sdist = _sdist(project, sdists)
    if sdist is None:
        pinned = f"{project.name}=={project.version}"
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                   project.name, pinned, "-d", str(sdists), "-q"]  # fmt: skip
        subprocess.run(command, check=True)
        sdist = _sdist(project, sdists)
        if sdist is None:
            got = {p.name: _digest(p) for p in sdists.glob("*")}
            raise SystemExit(f"{project.name} {project.version}: sha256 mismatch: {got}")
    _unpack(sdist, tree)
    (tree / ".sha256").write_text(project.sha256)
    return tree


def _unpack(sdist: Path, tree: Path) -> None:
    """The sdist's single top folder's content into `tree` (tar's `data` filter: no
    links out, no devices, no absolute names)."""
    staging = tree.with_name(tree.name + ".unpacking")
    if staging.exists():
        raise SystemExit(f"{staging} exists: remove it by hand (an earlier unpack died)")
    staging.mkdir(parents=True)
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as archive:
            archive.extractall(staging)
    else:
        with tarfile.open(sdist) as archive:
            archive.extractall(staging, filter="data")
    (top,) = staging.iterdir()
    if tree.exists():
        raise SystemExit(f"{tree} exists without a matching .sha256: remove it by hand")
    top.rename(tree)
    staging.rmdir()


def fetch_wheel(name: str, version: str, sha256: str, cache: Path = DEFAULT_CACHE) -> Path:
    """A pinned wheel (a data set shipped as a package: DataFrameBench), sha256 checked.
    Its data is read from the zip, never installed (it asks for a newer Python than it
    needs to be read)."""
    folder = cache / "wheels" / f"{name}-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    for path in folder.glob("*.whl"):
        if _digest(path) == sha256:
            return path
    pinned = f"{name}=={version}"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               "--python-version", "3.12", pinned, "-d", str(folder), "-q"]  # fmt: skip
    subprocess.run(command, check=True)
    for path in folder.glob("*.whl"):
        if _digest(path) == sha256:
            return path
    raise SystemExit(f"{name} {version}: no wheel with sha256 {sha256}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", help="comma-separated project names")
    parser.add_argument("--table", type=Path, default=TABLE, help="the projects' table (TOML)")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    for project in projects(args.table):
        if wanted is None or project.name in wanted:
            print(f"{project.name} {project.version}: {fetch(project, args.cache)}")


if __name__ == "__main__":
    main()
