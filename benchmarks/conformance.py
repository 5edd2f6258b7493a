"""The conformance corpus (issue 48, item 9): real projects' own tests against their own
code, graded by evalpin; every item passes plain pytest, so every one should pass.

    python benchmarks/conformance.py [--projects boltons,parse] [--jobs 2] [--json out.json]
    python benchmarks/conformance.py --case DIR...           # hand-made minimal cases
    python benchmarks/conformance.py --idioms classes        # or machinery: new-user code
    python benchmarks/conformance.py --dataframebench pandas # or polars (needs them)
    python benchmarks/conformance.py --again out.json        # classify a saved run again
    python benchmarks/conformance.py --projects parse --vendor tests/data/conformance
    python benchmarks/conformance.py --table scripts/conformance-heldout.toml  # held out

1. fetch each project of `scripts/conformance-projects.toml`, or of the `--table` given
   (the held-out `scripts/conformance-heldout.toml`: projects nobody steers on), pinned
   sdists, sha256 checked (`scripts/fetch_conformance.py`), into a cache (`--cache`,
   never committed);
2. one item per test file (`conformance_items.py` says how conftest files and test
   helpers become part of the test file);
3. the truth: plain `python -m pytest` on each item's files in a folder of their own, the
   candidate imported in-process (plugin autoload off and no conftest, as evalpin's plain
   pytest runs); only items it passes are kept (results cached per item and interpreter);
4. `evalpin run` of those items with the candidate files replayed, by the running
   interpreter's evalpin, so another checkout's venv grades with its own code;
5. the figures: items, pass, disputed (each with its class, from the witness's tail, and
   the first line of what it could not carry or the test that failed), errors, and graded
   fail, which must be 0 (a correct project graded fail is a serious bug: printed loudly).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "scripts")]
import conformance_dfb  # noqa: E402
import conformance_idioms  # noqa: E402
from conformance_classes import classify, first_line  # noqa: E402
from conformance_items import Item, items  # noqa: E402
from fetch_conformance import DEFAULT_CACHE, TABLE, fetch, fetch_wheel, projects  # noqa: E402
from timing import machine  # noqa: E402

TRUTH_TIMEOUT = 300


def _plain_env() -> dict[str, str]:
    """The environment plain pytest runs in: the user's, without pytest's and Python's own
    variables, plugin autoload off (evalpin's plain pytest loads no installed plugin)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def lay_out(item: Item, folder: Path) -> Path:
    """The item's files and its test copy in `folder`, as evalpin's work folder has them."""
    for name, text in item.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    test = folder / item.test_name
    test.write_text(item.test_source, encoding="utf-8")
    return test


def _environment() -> str:
    """What plain pytest's outcome depends on besides the item: the interpreter and the
    installed distributions (evalpin's own left out, so two checkouts' venvs with the same
    packages share the truth they computed)."""
    from importlib import metadata

    dists = sorted(
        f"{d.metadata['Name']}=={d.version}"
        for d in metadata.distributions()
        if d.metadata["Name"] != "evalpin"
    )
    return "\n".join([sys.version, sys.base_prefix, *dists])


ENVIRONMENT = _environment()


def _item_key(item: Item) -> str:
    h = hashlib.sha256()
    for part in (ENVIRONMENT, item.test_name, item.test_source):
        h.update(part.encode() + b"\0")
    for name in sorted(item.files):
        h.update(name.encode() + b"\0" + item.files[name].encode() + b"\0")
    return h.hexdigest()[:24]


def truth(item: Item, cache: Path) -> dict:
    """Plain `python -m pytest` on the item, in a folder of its own (cached)."""
    cached = cache / "truth" / f"{_item_key(item)}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
        work = Path(tmp, "work")
        test = lay_out(item, work)
        junit = Path(tmp, "junit.xml")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "--noconftest", f"--junitxml={junit}", test.name]  # fmt: skip
        t0 = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=work, env=_plain_env(), capture_output=True,
                                  text=True, timeout=TRUTH_TIMEOUT)  # fmt: skip
            rc, out = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            rc, out = -1, "timeout"
        seconds = time.perf_counter() - t0
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        if junit.is_file():
            suite = ET.parse(junit).getroot()
            suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
            counts = {k: int(suite.get(k, 0)) for k in counts}
    result = {"rc": rc, "seconds": round(seconds, 2), **counts, "tail": out[-800:]}
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result))
    return result


SLOW = 60  # seconds of plain pytest beyond which an item is too heavy for this corpus


def kept(result: dict) -> bool:
    """An item is kept when plain pytest passed it and ran at least one test, within
    SLOW seconds (its witness would wait 4x its timeout on a loaded machine)."""
    return result["rc"] == 0 and result["tests"] > result["skipped"] and result["seconds"] < SLOW


def write_set(
    chosen: list[tuple[Item, dict]], folder: Path, table: Path = TABLE
) -> tuple[Path, Path]:
    """The coding set (YAML, prompts, tests) and the replay recording of the candidates;
    its version is the digest of the table the projects came from."""
    sets = folder / "set"
    lines, recording = [], []
    version = hashlib.sha256(table.read_bytes()).hexdigest()[:12]
    lines += ["schema: coding-eval/v1", "dataset_id: conformance-corpus",
              f'dataset_version: "{version}"', 'frozen_at: "2026-12-04T00:00:00Z"',
              "holdout_policy: public", "items:"]  # fmt: skip
    for n, (item, result) in enumerate(chosen):
        prompt = sets / "prompts" / f"{item.project}.md"
        prompt.parent.mkdir(parents=True, exist_ok=True)
        prompt.write_text(f"Write the package {item.project} so that its own tests pass.\n")
        test = sets / "tests" / f"{n:04d}" / item.test_name
        test.parent.mkdir(parents=True, exist_ok=True)
        test.write_text(item.test_source, encoding="utf-8")
        timeout = max(60, round(5 * result["seconds"]))
        lines += [f"  - id: {json.dumps(item.id)}", "    language: python",
                  f"    prompt_file: prompts/{item.project}.md",
                  f"    test_file: tests/{n:04d}/{item.test_name}", f"    timeout_s: {timeout}",
                  "    forbidden_imports: []",
                  f"    expected_files: {json.dumps(sorted(item.files))}"]  # fmt: skip
        recording.append(json.dumps({"case_id": item.id, "text": "", "files": item.files}))
    fixtures = sets / "conformance.yaml"
    fixtures.write_text("\n".join(lines) + "\n")
    completions = folder / "completions.jsonl"
    completions.write_text("\n".join(recording) + "\n")
    return fixtures, completions


class _Progress:
    """Reads the run file as it grows (only the new lines each time) and says how far."""

    def __init__(self, run: Path, total: int) -> None:
        self.run, self.total, self.offset = run, total, 0
        self.tally: Counter[str] = Counter()
        self.started = time.monotonic()

    def line(self) -> str:
        if self.run.is_file():
            with self.run.open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
            whole = data[: data.rfind(b"\n") + 1]
            self.offset += len(whole)
            for raw in whole.splitlines():
                record = json.loads(raw)
                if record.get("record") == "case":
                    self.tally[_outcome(record)] += 1
        shown = ", ".join(f"{k} {v}" for k, v in sorted(self.tally.items()))
        done = sum(self.tally.values())
        return f"graded {done}/{self.total} ({shown}) {time.monotonic() - self.started:.0f} s"


def _lines(run: Path) -> list[str]:
    return run.read_text().splitlines() if run.is_file() else []


def _outcome(case: dict) -> str:
    if case.get("pass"):
        return "pass"
    return case.get("status") or "FAIL"


def grade(fixtures: Path, completions: Path, run: Path, jobs: int, total: int) -> list[dict]:
    """`evalpin run` of the set with the running interpreter's evalpin; its case records."""
    run.unlink(missing_ok=True)
    command = [sys.executable, "-m", "evalpin", "run", "--fixtures", str(fixtures),
               "--slot", f"corpus=replay:{completions}", "--seeds", "1", "--jobs", str(jobs),
               "--out", str(run)]  # fmt: skip
    log = run.with_suffix(".log")
    progress = _Progress(run, total)
    with log.open("w") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        while child.poll() is None:
            time.sleep(15)
            print(progress.line(), file=sys.stderr, flush=True)
    if child.returncode not in (0, 1):
        raise SystemExit(f"evalpin run exited {child.returncode}: see {log}")
    return [json.loads(x) for x in _lines(run) if json.loads(x).get("record") == "case"]


def evalpin_label() -> dict:
    """Which evalpin graded: its source folder and, in a git checkout, its commit."""
    import evalpin

    src = Path(evalpin.__file__).resolve().parent
    git = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)  # fmt: skip
    dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--", "src"],
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    commit = git.stdout.strip() + ("-dirty" if dirty else "") if git.returncode == 0 else None
    last = subprocess.run(["git", "-C", str(src), "log", "-1", "--format=%h", "--", "."],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    return {"evalpin": str(src), "commit": commit, "src_commit": last, "python": sys.executable}


# What a non-pass case's record keeps in the JSON, enough to classify it again.
KEPT = ("status", "reasons", "tail", "witness_tail", "witness_failed_tests", "failed_tests")


def classified(disputes: list[dict]) -> None:
    """Each dispute's class and first telling line (again, after a rule changed)."""
    for d in disputes:
        d["class"], d["first"] = classify(d), first_line(d)


def _project(case: dict) -> str:
    """An item's project: its id's first part (`boltons:tests/test_x`)."""
    return case["case_id"].split(":", 1)[0]


def report(cases: list[dict], dropped: list[dict], label: dict) -> dict:
    disputes = [
        {"id": c["case_id"], "project": _project(c), "outcome": _outcome(c)}
        | {k: c[k] for k in KEPT if c.get(k)}
        for c in cases
        if _outcome(c) != "pass"
    ]
    classified(disputes)
    tally = Counter(_outcome(c) for c in cases)
    projects_seen = sorted({_project(c) for c in cases})
    per_project = {
        p: dict(Counter(_outcome(c) for c in cases if _project(c) == p)) for p in projects_seen
    }
    return {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": os.getloadavg(),
        **label,
        "items": len(cases),
        "pass": tally.get("pass", 0),
        "disputed": tally.get("disputed", 0),
        "error": tally.get("error", 0),
        "graded_fail": tally.get("FAIL", 0),
        "by_class": by_class(disputes),
        "per_project": per_project,
        "disputes": disputes,
        "dropped": dropped,
    }


def by_class(disputes: list[dict]) -> dict[str, int]:
    return dict(Counter(f"{d['class']} ({d['outcome']})" for d in disputes))


def print_report(shown: dict) -> None:
    print(f"{shown['machine']}; {shown['date']}; load {shown['load'][0]:.1f}")
    print(f"evalpin: {shown['evalpin']} (commit {shown['commit']}, its src last changed in "
          f"{shown.get('src_commit')})")  # fmt: skip
    n = shown["items"] or 1
    print(f"items {shown['items']}: pass {shown['pass']}, disputed {shown['disputed']} "
          f"({100 * shown['disputed'] / n:.1f}%), error {shown['error']}, "
          f"graded fail {shown['graded_fail']}")  # fmt: skip
    if shown["graded_fail"]:
        print("!!! GRADED FAIL: a correct project that passes plain pytest was graded fail !!!")
    for name, count in sorted(shown["by_class"].items(), key=lambda kv: -kv[1]):
        print(f"  {name}: {count}")
    for d in shown["disputes"]:
        flag = "!!! " if d["outcome"] == "FAIL" else ""
        reasons = d.get("reasons", [])
        print(f"  {flag}{d['outcome']} {d['id']} [{d['class']}] {reasons}: {d['first']}")
    print(f"dropped before grading: {len(shown['dropped'])} (not convertible or not passing "
          "plain pytest)")  # fmt: skip


def vendor(chosen: list[Item], dest: Path, cache: Path, table_file: Path = TABLE) -> None:
    """The items as tests/data keeps them: per project its license, where it came from,
    the candidate's files under `candidate/` and each item's test file under `tests/`."""
    table = {p.name: p for p in projects(table_file)}
    for item in chosen:
        project = table[item.project]
        folder = dest / item.project
        tree = fetch(project, cache)
        (folder / "tests").mkdir(parents=True, exist_ok=True)
        (folder / "LICENSE").write_bytes((tree / project.license).read_bytes())
        (folder / "SOURCE.md").write_text(
            f"{project.name} {project.version}, from its sdist on the package index "
            f"(sha256 {project.sha256}), under the license in LICENSE beside this file.\n"
            "`candidate/` is the project's package as installed; each file under `tests/` is "
            "one of its test files with the conftest and test helpers it needs pasted in "
            "front (benchmarks/conformance_items.py). Written by `python "
            "benchmarks/conformance.py --vendor`; regenerate rather than edit.\n"
        )
        for name, text in item.files.items():
            path = folder / "candidate" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (folder / "tests" / item.test_name).write_text(item.test_source)


def _matches(item: Item, match: str | None) -> bool:
    return not match or any(part in item.id for part in match.split(","))


def case_item(folder: Path) -> Item:
    """A hand-made case (a minimal reproduction): its one `test_*.py` is the test, every
    other file under it the candidate's."""
    (test,) = folder.glob("test_*.py")
    files = {
        p.relative_to(folder).as_posix(): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p != test and "__pycache__" not in p.parts and p.suffix != ".md"
    }
    return Item(id=f"case:{folder.name}", project="case", test_name=test.name,
                test_source=test.read_text(), files=files)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", help="comma-separated project names (default: all)")
    parser.add_argument("--table", type=Path, default=TABLE, help="the projects' table (TOML)")
    parser.add_argument("--match", help="keep only items whose id contains one of these (a,b)")
    parser.add_argument("--limit", type=int, help="at most this many items per project")
    parser.add_argument("--jobs", type=int, default=1, help="evalpin run --jobs, truth workers")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--work", type=Path, help="where the set and run go (default: cache)")
    parser.add_argument("--json", type=Path, help="write the figures and disputes here")
    parser.add_argument("--truth-only", action="store_true", help="stop after plain pytest")
    parser.add_argument("--vendor", type=Path, help="write the chosen items here (tests/data)")
    parser.add_argument("--from-run", type=Path, help="a --work folder: its run so far")
    parser.add_argument(
        "--code-label", help="the grading evalpin's commit, where its source is no git checkout"
    )
    parser.add_argument("--again", type=Path, help="a --json file: classify and print it again")
    parser.add_argument("--case", type=Path, nargs="*", help="case folders (test_*.py + candidate)")
    parser.add_argument(
        "--dataframebench",
        choices=("pandas", "polars"),
        help="DataFrameBench's tasks with this library's solutions instead",
    )
    parser.add_argument(
        "--idioms",
        choices=("classes", "machinery"),
        help="the small new-user corpora of conformance_idioms.py instead",
    )
    args = parser.parse_args()
    if args.from_run:
        records = [json.loads(x) for x in _lines(args.from_run / "run.jsonl")]
        label = {"evalpin": None, "python": sys.executable} | {"commit": args.code_label}
        shown = report([r for r in records if r.get("record") == "case"], [], label)
        print_report(shown)
        if args.json:
            args.json.write_text(json.dumps(shown, indent=1))
        return
    if args.again:
        shown = json.loads(args.again.read_text())
        classified(shown["disputes"])
        shown["by_class"] = by_class(shown["disputes"])
        print_report(shown)
        if args.json:
            args.json.write_text(json.dumps(shown, indent=1))
        return
    wanted = set(args.projects.split(",")) if args.projects else None
    candidates: list[Item] = [case_item(folder) for folder in args.case or ()]
    if args.dataframebench:
        wheel = fetch_wheel("dataframebench", conformance_dfb.VERSION, conformance_dfb.SHA256,
                            args.cache)  # fmt: skip
        made = conformance_dfb.items(wheel, args.dataframebench)
        candidates += [i for i in made if _matches(i, args.match)][: args.limit]
    if args.idioms:
        made = conformance_idioms.items(args.idioms)
        candidates += [i for i in made if _matches(i, args.match)]
    for project in [] if args.case or args.dataframebench or args.idioms else projects(args.table):
        if wanted is None or project.name in wanted:
            made = [i for i in items(project, fetch(project, args.cache))
                    if _matches(i, args.match)]  # fmt: skip
            candidates += made[: args.limit] if args.limit else made
    dropped = [{"id": i.id, "why": i.dropped} for i in candidates if i.dropped]
    todo = [i for i in candidates if not i.dropped]
    print(f"{len(todo)} items ({len(dropped)} not convertible); plain pytest on each",
          file=sys.stderr)  # fmt: skip
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda i: truth(i, args.cache), todo))
    chosen = []
    for item, result in zip(todo, results, strict=True):
        if kept(result):
            chosen.append((item, result))
        else:
            why = f"plain pytest rc {result['rc']}: {result['tests']} tests, " + (
                f"{result['failures']} failed, {result['errors']} errors, "
                f"{result['skipped']} skipped, {result['seconds']} s"
            )
            dropped.append({"id": item.id, "why": why})
    print(f"plain pytest passes {len(chosen)} of {len(todo)}", file=sys.stderr)
    if args.vendor:
        vendor([item for item, _ in chosen], args.vendor, args.cache, args.table)
        return
    if args.truth_only or not chosen:
        for d in dropped:
            print(f"  dropped {d['id']}: {d['why']}")
        return
    work = (
        args.work or args.cache / "build" / hashlib.sha256(sys.executable.encode()).hexdigest()[:8]
    )
    work.mkdir(parents=True, exist_ok=True)
    fixtures, completions = write_set(chosen, work, args.table)
    # Which code grades is read before it starts: a checkout may move while it runs.
    label = evalpin_label() | ({"commit": args.code_label} if args.code_label else {})
    cases = grade(fixtures, completions, work / "run.jsonl", args.jobs, len(chosen))
    shown = report(cases, dropped, label)
    print_report(shown)
    if args.json:
        args.json.write_text(json.dumps(shown, indent=1))


if __name__ == "__main__":
    main()
