"""The shape of the source: no import circles of files, no module over 600 lines, and no
import upward through the stages (core root < instrument < read < judge < review < run <
tui < cli).

The import graph is read from the source with `ast`, never by importing it: every
`import` and `from ... import` anywhere in a module (inside functions too) is an edge,
and so is `import_module("evalpin...")` with a literal name (the same import, spelt as
a call), except those under `if TYPE_CHECKING:`, which never run. `from pkg import name`
is an edge to the submodule `pkg.name` when there is one, else to the package's
`__init__`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = "evalpin"
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its `__init__`)."""
    found: dict[str, Path] = {}
    for path in sorted((SRC / ROOT).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _as_import(call: ast.Call) -> ast.Import | None:
    """`import_module("a.b")` / `importlib.import_module("a.b")` as `import a.b`."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name != "import_module" or not call.args:
        return None
    arg = call.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return None
    return ast.Import(names=[ast.alias(name=arg.value)])


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under `node` that can run."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.Call) and (spelt := _as_import(child)) is not None:
            yield spelt
            yield from _imports(child)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:  # the `else:` of TYPE_CHECKING does run
                if isinstance(other, (ast.Import, ast.ImportFrom)):
                    yield other
                else:
                    yield from _imports(other)
        else:
            yield from _imports(child)


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted name lives in: itself, else its longest module prefix."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _targets(
    stmt: ast.Import | ast.ImportFrom, here: str, path: Path, modules: dict[str, Path]
) -> Iterator[str]:
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.name == ROOT or alias.name.startswith(ROOT + "."):
                owner = _owner(alias.name, modules)
                if owner:
                    yield owner
        return
    if stmt.level:
        package = here if path.name == "__init__.py" else here.rpartition(".")[0]
        for _ in range(stmt.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{stmt.module}" if stmt.module else package
    else:
        base = stmt.module or ""
    if not (base == ROOT or base.startswith(ROOT + ".")):
        return
    for alias in stmt.names:
        if f"{base}.{alias.name}" in modules:
            yield f"{base}.{alias.name}"
        else:
            owner = _owner(base, modules)
            if owner:
                yield owner


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports (inside the package only)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for stmt in _imports(tree):
            for target in _targets(stmt, name, path, modules):
                if target != name:
                    graph[name].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one file."""
    return sorted(c for c in strongly_connected(graph) if len(c) > 1)


def _describe(component: list[str], graph: dict[str, set[str]]) -> str:
    inside = set(component)
    edges = [f"    {a} -> {b}" for a in component for b in sorted(graph[a] & inside)]
    return f"circle of {len(component)} files: {', '.join(component)}\n" + "\n".join(edges)


def test_no_import_circles_of_files() -> None:
    graph = import_graph()
    found = circles(graph)
    assert not found, f"{len(found)} import circle(s):\n" + "\n".join(
        _describe(c, graph) for c in found
    )


def test_no_module_over_600_lines() -> None:
    over = []
    for path in _modules().values():
        with path.open("rb") as handle:
            count = sum(1 for _ in handle)
        if count > MAX_LINES:
            over.append(f"    {path.relative_to(SRC)}: {count} lines")
    assert not over, f"{len(over)} module(s) over {MAX_LINES} lines:\n" + "\n".join(sorted(over))


# The stages, lowest first: a module may import its own stage and the stages below it,
# never one above. Each is a package prefix; the core root is whatever of `evalpin.core`
# is in no core stage (the shared vocabulary). `_version` sits below everything; the
# front door (`evalpin`, `__main__`, `api`) above. The `init` templates are not imported.
CORE_STAGES = ("instrument", "read", "judge", "review")
STAGES = (
    "evalpin._version",
    "evalpin.core",
    *(f"evalpin.core.{s}" for s in CORE_STAGES),
    "evalpin.run",
    "evalpin.tui",
    "evalpin.cli",
    "evalpin",
)
UNSTAGED = ("evalpin.scaffold",)


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def stage_of(name: str) -> int | None:
    """The index in STAGES of a module's stage (the longest prefix); None: unstaged."""
    if any(_within(name, u) for u in UNSTAGED):
        return None
    found = [i for i, package in enumerate(STAGES) if _within(name, package)]
    return max(found, key=lambda i: len(STAGES[i])) if found else None


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a higher stage, as `a (its stage) -> b (its stage)`."""
    edges = []
    for here in sorted(graph):
        low = stage_of(here)
        for target in sorted(graph[here]):
            high = stage_of(target)
            if low is not None and high is not None and high > low:
                edges.append(f"    {here} ({STAGES[low]}) -> {target} ({STAGES[high]})")
    return edges


def test_no_import_goes_up_a_stage() -> None:
    found = upward(import_graph())
    assert not found, f"{len(found)} import(s) up the stages:\n" + "\n".join(found)


def test_every_core_package_is_a_stage() -> None:
    """A new sub-package of the core is one of the stages (or joins one), never a room
    the stage order does not know."""
    core = SRC / ROOT / "core"
    packages = sorted(p.parent.name for p in core.glob("*/__init__.py"))
    assert packages == sorted(CORE_STAGES)


def test_the_stage_order_reads_as_it_should() -> None:
    assert stage_of("evalpin.core.errors") == stage_of("evalpin.core") == 1
    assert stage_of("evalpin.core.read.formats.lm_eval") == STAGES.index("evalpin.core.read")
    assert stage_of("evalpin.api") == STAGES.index("evalpin")
    assert stage_of("evalpin.scaffold.agents.agent") is None
    graph = {
        "evalpin.core.errors": {"evalpin.core.judge.stats"},
        "evalpin.core.judge.stats": {"evalpin.core.errors", "evalpin.core.read.rundata"},
        "evalpin.core.read.rundata": {"evalpin.core.errors"},
        "evalpin.tui.app": {"evalpin.run.session", "evalpin.cli.console"},
        "evalpin.cli.console": {"evalpin.tui.app", "evalpin._version"},
    }
    assert upward(graph) == [
        "    evalpin.core.errors (evalpin.core) -> evalpin.core.judge.stats (evalpin.core.judge)",
        "    evalpin.tui.app (evalpin.tui) -> evalpin.cli.console (evalpin.cli)",
    ]


def test_the_graph_reader_sees_what_it_should() -> None:
    """The reader itself: relative imports, submodules, TYPE_CHECKING and function bodies."""
    assert strongly_connected({"a": {"b"}, "b": {"a", "c"}, "c": set()}) == [["c"], ["a", "b"]]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import evalpin.core.x\nelse:\n    import evalpin.core.y\n"
        "def f():\n    from . import z\n"
        "    from .formats import lm_eval, read_log\n"
        "    return importlib.import_module('evalpin.core.z')\n"
    )
    fake = {
        name: SRC / (name.replace(".", "/") + ".py")
        for name in (
            "evalpin.core.y",
            "evalpin.core.z",
            "evalpin.core.formats",
            "evalpin.core.formats.lm_eval",
        )
    }
    fake["evalpin.core.formats"] = SRC / "evalpin/core/formats/__init__.py"
    here = SRC / "evalpin/core/runfile.py"
    seen = [t for s in _imports(tree) for t in _targets(s, "evalpin.core.runfile", here, fake)]
    assert seen == [
        "evalpin.core.y",
        "evalpin.core.z",
        "evalpin.core.formats.lm_eval",
        "evalpin.core.formats",
        "evalpin.core.z",
    ]
