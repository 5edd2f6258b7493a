"""A project's source tree as coding items: one item per test file.

The candidate is the project's own package or module (`candidate` in the table), laid at
the work folder's root as it would be installed; the item's test is one test file, with
what it needs from the project's test folder put in front of it as plain source:

- the `conftest` files the table names (pytest runs with `--noconftest` under evalpin, so
  their fixtures have to be the module's own; their hooks, such as
  `pytest_collection_modifyitems`, then do nothing: an item that needed one fails plain
  pytest in its layout and is dropped);
- test helpers it imports by name (`from . import CacheTestMixin`, `from .base import
  Case`, `from common import assert_equal`), each once, in import order, the import
  replaced by nothing (or by `name = original` for an `as`).

A test inside the candidate package (`pyflakes/test/test_x.py`) imports its siblings
relatively; those imports become absolute (`from pyflakes.test.harness import ...`): the
sibling is the candidate's file, as installed. What is not converted (a helper imported
as a module, an import of a helper inside a function) is named as the item's `dropped`
reason, and so is a non-UTF-8 file of the candidate's.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

SKIP_PARTS = frozenset({"__pycache__"})


@dataclass
class Item:
    """One test file of a project, ready to write as a coding item."""

    id: str
    project: str
    test_name: str  # the copy's file name in the work folder
    test_source: str = ""
    files: dict[str, str] = field(default_factory=dict)
    dropped: str | None = None


class NotConvertible(Exception):
    """Why a test file cannot become an item as it is written."""


def is_test(rel: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(rel, g) for g in globs)


def candidate_files(tree: Path, candidate: tuple[str, ...], tests: tuple[str, ...]):
    """{installed path: text} of the candidate, and the installed top names it maps.

    A file that is not UTF-8 text (a compiled `.mo` catalogue) is left out: a
    completion's files are text; a test that needs one fails plain pytest and is dropped."""
    files: dict[str, str] = {}
    tops: dict[str, str] = {}  # installed top name -> path in the sdist
    for entry in candidate:
        src = tree / entry
        tops[src.name] = entry
        paths = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
        for path in paths:
            rel_tree = path.relative_to(tree).as_posix()
            if SKIP_PARTS & set(path.parts) or path.suffix == ".pyc" or is_test(rel_tree, tests):
                continue
            installed = path.relative_to(src.parent).as_posix()
            try:
                files[installed] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
    return files, tops


@dataclass
class _Source:
    """Builds one test file's source: helpers first, each once."""

    tree: Path
    tops: dict[str, str]
    parts: list[str] = field(default_factory=list)
    futures: set[str] = field(default_factory=set)
    seen: set[Path] = field(default_factory=set)

    def module_file(self, dotted: str, near: Path) -> Path | None:
        """The file an absolute module name names, looked for at the sdist's root and
        beside the importing file (pytest's prepend mode puts that folder on sys.path)."""
        rel = Path(*dotted.split("."))
        for root in (self.tree, near):
            for path in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
                if path.is_file():
                    return path
        return None

    def is_candidate(self, path: Path) -> bool:
        rel = path.relative_to(self.tree).as_posix()
        return any(rel == e or rel.startswith(e + "/") for e in self.tops.values())

    def installed_name(self, path: Path) -> str:
        """The dotted name of a candidate file as installed (`src/` dropped)."""
        rel = path.relative_to(self.tree).as_posix()
        for top, entry in self.tops.items():
            if rel == entry or rel.startswith(entry + "/"):
                inner = rel[len(entry) :].removesuffix(".py").removesuffix("/__init__")
                return top.removesuffix(".py") + inner.replace("/", ".")
        raise AssertionError(rel)

    def package_of(self, path: Path) -> list[str]:
        """The dotted package a file is in, as far up as `__init__.py` files go."""
        parts: list[str] = []
        folder = path.parent
        while (folder / "__init__.py").is_file() and folder != self.tree:
            parts.insert(0, folder.name)
            folder = folder.parent
        return parts

    def add(self, path: Path) -> None:
        """`path`'s source after the helpers it imports (each added once)."""
        if path in self.seen:
            return
        self.seen.add(path)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        edits: list[tuple[int, int, str]] = []  # (first line, last line, replacement)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom | ast.Import):
                replacement = self._import(node, path)
                if replacement is not None:
                    if node.col_offset != 0:
                        raise NotConvertible(
                            f"a test helper imported inside a block: line {node.lineno}"
                        )
                    edits.append((node.lineno, node.end_lineno or node.lineno, replacement))
        for first, last, new in sorted(edits, reverse=True):
            lines[first - 1 : last] = [new]
        body = "".join(lines)
        if not body.endswith("\n"):
            body += "\n"
        self.parts.append(f"# ---- {path.relative_to(self.tree).as_posix()}\n{body}")

    def _import(self, node: ast.ImportFrom | ast.Import, path: Path) -> str | None:
        """The replacement text of an import statement, or None to keep it."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = self.module_file(alias.name, path.parent)
                if found is not None and not self.is_candidate(found):
                    raise NotConvertible(f"imports the test helper module {alias.name}")
            return None
        if node.module == "__future__":
            self.futures.update(a.name for a in node.names)
            return ""
        if node.level:
            package = self.package_of(path)
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            dotted = ".".join([*base, *([node.module] if node.module else [])])
        else:
            dotted = node.module or ""
        found = self.module_file(dotted, path.parent) if dotted else None
        if found is None:
            if node.level:
                raise NotConvertible(
                    f"relative import {'.' * node.level}{node.module or ''} not found"
                )
            return None
        names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
        if self.is_candidate(found):
            if not node.level:
                return None
            return f"from {self.installed_name(found)} import {names}\n"
        for alias in node.names:
            if found.name == "__init__.py" and self.module_file(
                f"{dotted}.{alias.name}", path.parent
            ):
                raise NotConvertible(f"imports the test helper module {dotted}.{alias.name}")
        self.add(found)
        return "".join(f"{a.asname} = {a.name}\n" for a in node.names if a.asname and a.name != "*")

    def text(self) -> str:
        head = f"from __future__ import {', '.join(sorted(self.futures))}\n" if self.futures else ""
        return head + "\n".join(self.parts)


def test_source(tree: Path, tops: dict[str, str], test: Path, conftest: tuple[str, ...]) -> str:
    """The item's one test file: conftest and helpers in front of the test's own code."""
    source = _Source(tree, tops)
    for name in conftest:
        source.add(tree / name)
    source.add(test)
    text = source.text()
    ast.parse(text)
    return text


def items(project, tree: Path) -> list[Item]:
    """Every test file of `project` (a fetch_conformance.Project) as an item."""
    tests = sorted(
        {p for g in project.tests for p in tree.glob(g) if p.is_file()},
        key=lambda p: p.as_posix(),
    )
    out = []
    files, tops = candidate_files(tree, project.candidate, project.tests)
    for test in tests:
        rel = test.relative_to(tree).with_suffix("").as_posix()
        # A name pytest collects is kept (a test may name its own module: pyrsistent's
        # `'checked_vector_test.Naturals'`); any other becomes `test_<name>`.
        collected = test.stem.startswith("test_") or test.stem.endswith("_test")
        stem = test.stem if collected else f"test_{test.stem}"
        item = Item(id=f"{project.name}:{rel}", project=project.name, test_name=f"{stem}.py")
        excluded = (project.exclude or {}).get(test.relative_to(tree).as_posix())
        if excluded:
            item.dropped = f"excluded: {excluded}"
            out.append(item)
            continue
        try:
            item.test_source = test_source(tree, tops, test, project.conftest)
            item.files = files
        except (NotConvertible, SyntaxError, UnicodeDecodeError) as why:
            item.dropped = str(why)
        out.append(item)
    return out
