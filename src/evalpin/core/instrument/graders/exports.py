"""What `from m import *` may bind, read from the candidate's source without running it.

Under process isolation the module a test imports is a stand-in, and the names it
exports come from the worker, which runs the candidate's code: a module that binds
`all` or `len` only at run time (`globals()["all"] = ...`) must not shadow the test's
builtins, yet one that defines them in its source does so in plain Python too. So the
grader reads each candidate module statically (`ast`, nothing executed) and writes into
its stand-in the names plain Python could bind: every name bound at the module's top
level (also under `if`/`try`/`with`/`for`, by `global` in a function, by a walrus), a
literal `__all__`, and for `from x import *` the names of a sibling candidate module
(read the same way) or, for any other module, its name (the judge lists that module's
public names itself, from the interpreter's own library).
"""

from __future__ import annotations

import ast

from evalpin.core import syntax


def star_exports(sources: dict[str, str]) -> dict[str, dict]:
    """Module name -> {"names", "top", "all", "star"} for each candidate module's source
    (`top`: the names its top level binds unconditionally, in plain sight)."""
    read = {name: _read(source) for name, source in sources.items()}
    out: dict[str, dict] = {}
    for name, (names, listed, stars) in read.items():
        package = name if _is_package(name, sources) else name.rpartition(".")[0]
        seen, todo, others = {name}, [_absolute(s, package) for s in stars], []
        bound = set(names)
        while todo:
            other = todo.pop()
            if other in read and other not in seen:
                seen.add(other)
                o_names, o_listed, o_stars = read[other]
                bound |= (
                    set(o_listed)
                    if o_listed is not None
                    else {n for n in o_names if not n.startswith("_")}
                )
                o_package = other if _is_package(other, sources) else other.rpartition(".")[0]
                todo += [_absolute(s, o_package) for s in o_stars]
            elif other not in read and other:
                others.append(other)
        top = _top(sources[name])
        out[name] = {
            "names": sorted(bound),
            "top": sorted(top),
            "all": listed,
            "star": sorted(set(others)),
        }
    return out


def _top(source: str) -> set[str]:
    """Names bound by the module's own top-level statements, under no condition."""
    try:
        body = syntax.parse(source).body
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                names.add(node.target.id)
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name != "*")
    return names


def _is_package(name: str, sources: dict[str, str]) -> bool:
    return any(other.startswith(name + ".") for other in sources)


def _absolute(star: tuple[str | None, int], package: str) -> str:
    module, level = star
    if level == 0:
        return module or ""
    base = package.split(".") if package else []
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def _read(source: str) -> tuple[set[str], list[str] | None, list[tuple[str | None, int]]]:
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError):
        return set(), None, []
    names: set[str] = set()
    stars: list[tuple[str | None, int]] = []
    listed: list[str] | None = []
    literal = True

    def bind(target) -> None:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element)
        elif isinstance(target, ast.Starred):
            bind(target.value)

    def visit(body) -> None:
        nonlocal listed, literal
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target)
                    if isinstance(target, ast.Name) and target.id == "__all__":
                        found = _strings(node.value)
                        literal = literal and found is not None
                        listed = found or []
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                if not isinstance(node, ast.AnnAssign) or node.value is not None:
                    bind(node.target)
                if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                    found = _strings(node.value) if node.value is not None else []
                    literal = literal and found is not None
                    listed = (listed or []) + (found or [])
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        stars.append((node.module, node.level))
                    else:
                        names.add(alias.asname or alias.name)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                bind(node.target)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        bind(item.optional_vars)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                for handler in node.handlers:
                    if handler.name:
                        names.add(handler.name)
            elif isinstance(node, ast.Match):
                for case in node.cases:
                    for sub in ast.walk(case.pattern):
                        for field in ("name", "rest"):
                            if isinstance(getattr(sub, field, None), str):
                                names.add(getattr(sub, field))
            for field in ("body", "orelse", "finalbody"):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(getattr(node, field, None) or [])
            for handler in getattr(node, "handlers", None) or []:
                visit(handler.body)
            for case in getattr(node, "cases", None) or []:
                visit(case.body)

    visit(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    has_all = "__all__" in names
    return names, (listed if has_all and literal else None), stars


def _strings(node) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and type(e.value) is str for e in node.elts
    ):
        return [e.value for e in node.elts]
    return None
