"""promptfoo's output as decoded: the structs its JSON is read into, the (prompt, provider)
runs a file holds and the choice of one (`choose`, or `SeveralRuns` listing them), and its
tests as cases (`case_ids`: a description that names one test, else a hash of the vars;
never a position). The reader that builds a run from them is `promptfoo.py`.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.read.formats.foreign import canonical, short_hash
from evalpin.core.read.formats.probe import Probe, ReadOptions, SeveralRuns

NAMED = 40  # characters of a prompt label shown when listing a file's runs
# Descriptions promptfoo gives tests loaded from a CSV or sheet: their row number, a
# position (a row added above shifts them), never a case id.
POSITIONAL = re.compile(r"^Row #\d+$")


class Provider(msgspec.Struct):
    id: str | None = None
    label: str | None = None


class Prompt(msgspec.Struct):
    raw: Any = None
    label: str | None = None


class Component(msgspec.Struct, rename="camel"):
    passed: bool | None = msgspec.field(default=None, name="pass")
    reason: Any = None
    assertion: Any = None
    component_results: list[Component] | None = None


class Grading(msgspec.Struct, rename="camel"):
    passed: bool | None = msgspec.field(default=None, name="pass")
    reason: Any = None
    component_results: list[Component] | None = None


class Response(msgspec.Struct):
    output: Any = None
    error: Any = None
    cached: bool | None = None


class TestCase(msgspec.Struct):
    """A result's `testCase`: the test as promptfoo ran it (defaultTest merged)."""

    description: Any = None
    vars: Any = None
    assertions: Any = msgspec.field(default=None, name="assert")
    options: Any = None
    threshold: Any = None


class Result(msgspec.Struct, rename="camel"):
    prompt_idx: int | None = None
    test_idx: int | None = None
    prompt_id: str | None = None
    prompt: Prompt | None = None
    provider: Provider | str | None = None
    response: Response | None = None
    success: bool | None = None  # absent in some older outputs: the grading decides
    error: Any = None
    failure_reason: int | None = None
    grading_result: Grading | None = None
    test_case: TestCase | None = None
    vars: Any = None
    latency_ms: float | None = None


class PromptEntry(msgspec.Struct):
    id: str | None = None
    raw: Any = None
    label: str | None = None
    provider: str | None = None
    metrics: dict[str, Any] | None = None


class Results(msgspec.Struct):
    timestamp: str | None = None
    prompts: list[PromptEntry] = []
    results: list[Result] = []
    stats: dict[str, Any] | None = None


class Doc(msgspec.Struct, rename="camel"):
    results: Results
    eval_id: str | None = None
    config: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    runtime_options: dict[str, Any] | None = None


DOC = msgspec.json.Decoder(Doc)
RESULT = msgspec.json.Decoder(Result)


# -- which run of the file ---------------------------------------------------------


class Pair:
    """One (prompt, provider) run of a file: its results and how to name it."""

    def __init__(self, result: Result, entry: PromptEntry | None) -> None:
        provider = result.provider
        self.provider_id = provider.id if isinstance(provider, Provider) else provider
        self.provider_label = provider.label if isinstance(provider, Provider) else None
        prompt = result.prompt or Prompt()
        self.prompt_label = (entry.label if entry else None) or prompt.label
        self.prompt_id = result.prompt_id or (entry.id if entry else None)
        self.template = entry.raw if entry and isinstance(entry.raw, str) else None
        self.entry = entry
        self.results: list[Result] = []

    @property
    def provider(self) -> str:
        return self.provider_label or self.provider_id or "<unnamed provider>"

    def prompt_matches(self, want: str) -> bool:
        names = {self.prompt_label, self.template, self.prompt_id}
        return want in names or (
            len(want) >= 6 and bool(self.prompt_id) and self.prompt_id.startswith(want)
        )

    def provider_matches(self, want: str) -> bool:
        return want in (self.provider_label, self.provider_id)

    def prompt_flag(self) -> str:
        """The shortest `--prompt` value that names this prompt: its label where short
        and on one line, else its id's first 12 characters."""
        label = self.prompt_label or ""
        if label and len(label) <= NAMED and "\n" not in label:
            return label
        return (self.prompt_id or label)[:12]


def runs_of(doc: Doc) -> list[Pair]:
    entries = doc.results.prompts
    found: dict[tuple[Any, ...], Pair] = {}
    for r in doc.results.results:
        provider = r.provider
        pid = provider.id if isinstance(provider, Provider) else provider
        plabel = provider.label if isinstance(provider, Provider) else None
        key = (r.prompt_idx, r.prompt_id, pid, plabel)
        pair = found.get(key)
        if pair is None:
            idx = r.prompt_idx
            entry = entries[idx] if idx is not None and 0 <= idx < len(entries) else None
            pair = found[key] = Pair(r, entry)
        pair.results.append(r)
    return list(found.values())


def choose(probe: Probe, pairs: list[Pair], options: ReadOptions) -> Pair:
    """The run `--prompt` and `--provider` name, or the only one; else an error listing
    the file's runs with the options that choose each."""
    picked = pairs
    if options.prompt is not None:
        picked = [p for p in picked if p.prompt_matches(options.prompt)]
    if options.provider is not None:
        picked = [p for p in picked if p.provider_matches(options.provider)]
    if len(picked) == 1:
        return picked[0]
    prompts = {p.prompt_flag() for p in pairs}
    providers = {p.provider for p in pairs}

    def flags(p: Pair) -> str:
        out = []
        if len(prompts) > 1 or options.prompt is not None:
            out.append(f"--prompt {shlex.quote(p.prompt_flag())}")
        if len(providers) > 1 or options.provider is not None:
            out.append(f"--provider {shlex.quote(p.provider)}")
        return " ".join(out)

    listed = "; ".join(flags(p) for p in (picked or pairs))
    if not picked:
        given = " ".join(
            f"--{name} {shlex.quote(value)}"
            for name, value in (("prompt", options.prompt), ("provider", options.provider))
            if value is not None
        )
        raise InputError(
            probe.path, f"no (prompt, provider) run matches {given}; it holds: {listed}"
        )
    choices = [
        ReadOptions(options.scorer, options.metric, options.filter, p.prompt_flag(), p.provider)
        for p in picked
    ]
    raise SeveralRuns(
        probe.path,
        f"holds {len(picked)} (prompt, provider) runs; choose one with {listed}",
        choices,
    )


# -- cases -------------------------------------------------------------------------


def test_of(r: Result) -> TestCase:
    test = r.test_case or TestCase()
    if test.vars is None and r.vars is not None:
        test = TestCase(test.description, r.vars, test.assertions, test.options, test.threshold)
    return test


def expanded(test: dict[str, Any]) -> int:
    """How many tests a config entry stands for (promptfoo expands list-valued vars)."""
    n = 1
    for value in (test.get("vars") or {}).values() if isinstance(test.get("vars"), dict) else ():
        if isinstance(value, list) and value:
            n *= len(value)
    return n


def case_ids(doc: Doc) -> dict[str, str]:
    """Each distinct test (by its canonical form) -> its case id: the description where
    it names one test (in the results, and in the config's tests where they are listed)
    and is not one promptfoo made from a position, else `vars:` + a hash of the vars,
    else `test:` + a hash of vars and assertions."""
    tests: dict[str, TestCase] = {}
    for r in doc.results.results:
        test = test_of(r)
        tests.setdefault(identity(test), test)
    config_tests = doc.config.get("tests")
    in_config: Counter[str] = Counter()
    if isinstance(config_tests, list):
        for t in config_tests:
            if isinstance(t, dict) and isinstance(t.get("description"), str):
                in_config[t["description"]] += expanded(t)
    by_desc: defaultdict[str, set[str]] = defaultdict(set)
    by_vars: defaultdict[str, set[str]] = defaultdict(set)
    for ident, test in tests.items():
        by_vars[canonical(test.vars)].add(ident)
        if isinstance(test.description, str) and test.description:
            by_desc[test.description].add(canonical(test.vars))
    out = {}
    for ident, test in tests.items():
        desc = test.description
        if (
            isinstance(desc, str)
            and desc
            and not POSITIONAL.match(desc)
            and len(by_desc[desc]) == 1
            and in_config[desc] <= 1
        ):
            out[ident] = desc
        elif len(by_vars[canonical(test.vars)]) == 1:
            out[ident] = f"vars:{short_hash(test.vars)}"
        else:
            out[ident] = f"test:{short_hash({'vars': test.vars, 'assert': test.assertions})}"
    return out


def identity(test: TestCase) -> str:
    return canonical(
        {"description": test.description, "vars": test.vars, "assert": test.assertions}
    )


def vars_text(test: TestCase) -> str | None:
    """A readable name for a case known by a hash: its vars, briefly."""
    if not isinstance(test.vars, dict):
        return None
    text = ", ".join(
        f"{k}={v if isinstance(v, str) else canonical(v)}" for k, v in test.vars.items()
    )
    return text if len(text) <= 120 else text[:117] + "..."


def failing_types(components: Iterable[Component] | None) -> list[str]:
    """The types of the failing assertions, innermost first in an assert-set."""
    out: list[str] = []
    for c in components or ():
        if c.passed is not False:
            continue
        inner = failing_types(c.component_results)
        if inner:
            out.extend(inner)
            continue
        kind = c.assertion.get("type") if isinstance(c.assertion, dict) else None
        out.append(str(kind) if kind else "unknown")
    return out


def text_of(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else canonical(value)
