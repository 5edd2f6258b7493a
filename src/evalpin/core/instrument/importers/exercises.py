"""The folder-per-exercise shape (Exercism's tracks, Aider's polyglot benchmark; their
Python part): one folder per exercise holding its instructions (`.docs/introduction.md`,
`instructions.md`, `instructions.append.md`), the stub the student edits, its unittest
file and a known-good solution, named by `.meta/config.json` (`files.solution`,
`files.test`, `files.example`).

An item per exercise: the prompt is the instructions and the stub (in a block named by
its file), the candidate is the file the answer names (`candidate: files`, the default),
the reference is the example solution written under the stub's name, the starting code
the stub. An exercise with more than one solution or test file is left out, and named:
an item has one test file.

The provenance of a folder is its tree digest: sha256 over every regular file's path
(relative to the folder, sorted) and sha256, the recipe of the envelope hash.
"""

from __future__ import annotations

from pathlib import Path

from evalpin.core.bounded import MAX_CONFIG_BYTES, loads, read_bounded
from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import envelope_hash
from evalpin.core.instrument.importers.writer import Item, sha256_of

CONFIG = ".meta/config.json"
DOCS = (".docs/introduction.md", ".docs/instructions.md", ".docs/instructions.append.md")
ASK = (
    "Edit the file `{stub}` so that it does what the instructions above ask. Keep the"
    " names of its functions and classes: the tests import them. Use the standard library"
    " only. Answer with the whole file `{stub}` in one fenced code block named by it."
)


def exercise_items(folder: Path) -> tuple[list[Item], str, list[str]]:
    """The items of an exercise folder, or of a folder of them; the tree digest of what
    was read; and the exercises left out, each with why."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "not a folder of exercises (the exercises shape reads a folder)")
    exercises = (
        [folder]
        if (folder / CONFIG).is_file()
        else sorted(p for p in folder.iterdir() if p.is_dir() and (p / CONFIG).is_file())
    )
    if not exercises:
        raise InputError(folder, f"no exercise here: no folder holds {CONFIG}")
    items: list[Item] = []
    skipped: list[str] = []
    digests: dict[str, str] = {}
    for exercise in exercises:
        item, why = _exercise(exercise, digests, folder)
        if item is None:
            skipped.append(f"{exercise.name}: {why}")
        else:
            items.append(item)
    return items, envelope_hash(digests), skipped


def _read(path: Path, digests: dict[str, str], top: Path) -> str:
    """A file of the folder imported, never one a link inside it points to elsewhere:
    what is read becomes a prompt sent to a model."""
    if not path.resolve().is_relative_to(top.resolve()):
        raise InputError(path, "a link to a file outside the folder imported")
    data = read_bounded(path, MAX_CONFIG_BYTES, folder="is a directory, not a file")
    digests[path.relative_to(top).as_posix()] = sha256_of(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8") from None


def _exercise(folder: Path, digests: dict[str, str], top: Path) -> tuple[Item | None, str]:
    text = _read(folder / CONFIG, digests, top)
    config = loads(text, folder / CONFIG)
    files = config.get("files") if isinstance(config, dict) else None
    if not isinstance(files, dict):
        raise InputError(folder / CONFIG, "no 'files' mapping (solution, test, example)")
    roles = {}
    for role in ("solution", "test", "example"):
        names = files.get(role)
        if not isinstance(names, list) or not all(
            isinstance(n, str) and n and "\x00" not in n for n in names
        ):
            raise InputError(folder / CONFIG, f"'files.{role}' must be a list of file names")
        if len(names) != 1:
            return None, f"{len(names)} {role} files (an item has one)"
        roles[role] = names[0]
    for role, name in roles.items():
        target = (folder / name).resolve()
        if not target.is_relative_to(folder.resolve()) or not target.is_file():
            raise InputError(folder / CONFIG, f"its {role} file {name!r} is not in the exercise")
    stub = roles["solution"]
    if "/" in stub or not stub.endswith(".py"):
        return None, f"its solution file {stub!r} is not a Python file at the top"
    docs = [_read(folder / d, digests, top).strip() for d in DOCS if (folder / d).is_file()]
    if not docs:
        return None, "no instructions (.docs/instructions.md)"
    starting = _read(folder / stub, digests, top)
    fence = "````" if "```" in starting else "```"
    prompt = "\n\n".join(
        [*docs, f"{fence}python title={stub}\n{starting.rstrip()}\n{fence}", ASK.format(stub=stub)]
    )
    test_name = Path(roles["test"]).name
    return (
        Item(
            id=folder.name,
            prompt=prompt + "\n",
            test=_read(folder / roles["test"], digests, top),
            expected=stub,
            reference=_read(folder / roles["example"], digests, top),
            starting=starting,
            test_name=test_name,
        ),
        "",
    )
