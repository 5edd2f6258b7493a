"""Make real promptfoo results for evalpin's tests, with promptfoo itself.

promptfoo is development-time only: `make_promptfoo_logs.sh` installs Node 22 and
promptfoo (exact versions there) in a scratch folder and runs this script with the path
of its `promptfoo` binary. No network: every provider is an OpenAI-compatible server this
script starts on 127.0.0.1 (`Backend` below), deterministic, answering a fruit quiz:

- server A and server B both answer as the model `night-model`, differently on a few
  questions (what a re-pointed endpoint looks like: same provider id, same model name);
- a grading server answers promptfoo's model-graded assertions (`llm-rubric`) with the
  JSON promptfoo asks for, deciding by a keyword of the rubric;
- a question about durian gets HTTP 500 from every server: promptfoo's errored result.

Writes tests/data/promptfoo/ (every file is `promptfoo eval -o FILE.json` unless said):

  night1.json            server A, night 1, --no-cache
  night2.json            server A, night 2 (three answers moved), --no-cache
  night2_server_b.json   server B, night 2, same provider id and model name, --no-cache
  matrix.json            two prompts x two providers (A and B, labelled), night 1
  repeat.json            server A, --repeat 3 (one answer alternates between calls)
  cached.json            night 1 again with promptfoo's cache on: every answer `cached`
  filter_failing.json    --filter-failing night1.json, run on server B
  export.json            `promptfoo export eval <night 2's id>`
  night1.jsonl           night 1's results as promptfoo's JSONL output (`-o x.jsonl`)
  expected.json          promptfoo's own numbers, read from its output: per file and
                         (prompt, provider) its pass / fail / error counts, and each
                         result's `success` keyed by test description or vars

    python scripts/make_promptfoo_logs.py --promptfoo PATH/TO/promptfoo [--out tests/data]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL = "night-model"
# question key (a substring of the question) -> answer: server A on night 1 and night 2,
# and server B (another backend, the same every night; A's night-2 answer where unsaid).
ANSWERS: dict[str, dict[str, str]] = {
    "red and keeps the doctor": {"A1": "apple", "A2": "apple", "B": "Apple"},
    "long yellow fruit": {"A1": "banana", "A2": "plantain", "B": "banana"},  # regressed on A
    "small red fruit": {"A1": "plum", "A2": "cherry", "B": "cherry"},  # fixed on A
    "pressed to make wine": {"A1": "grape", "A2": "grape", "B": "Grapes"},
    "sour yellow fruit": {"A1": "lime", "A2": "lime", "B": "lemon"},
    "orange tropical fruit": {"A1": "mango", "A2": "mango", "B": "papaya"},
    "fuzzy brown": {"A1": "kiwi", "A2": "kiwi, not a banana", "B": "kiwi"},  # regressed on A
    "green outside and red inside": {"A1": "watermelon", "A2": "watermelon", "B": "melon"},
    "grows on palm trees": {"A1": "coconut", "A2": "coconut", "B": "date"},
}
# The answer that alternates between calls (the --repeat file): a non-deterministic backend.
FLAKY = "grows on palm trees"
FLAKY_ANSWERS = ("coconut", "date")
ERRORS = "durian"  # every server answers HTTP 500


class Backend:
    """One OpenAI-compatible server on 127.0.0.1: `who` is A, B or the grader; `night`
    can be changed between evals (the same server, another night)."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.night = 1
        self.flaky = False
        self.calls = Counter[str]()
        self.lock = threading.Lock()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                status, reply = backend.answer(body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = body.get("messages") or []
        last = str(messages[-1].get("content", "")) if messages else ""
        if ERRORS in last.lower():
            return 500, {"error": {"message": "backend overloaded", "type": "server_error"}}
        text = self.grade(last) if self.who == "grader" else self.quiz(last)
        message = {"role": "assistant", "content": text}
        asked = len(last) // 4
        return 200, {
            "id": "chatcmpl-local",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,  # both quiz servers answer under the same model name
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": asked, "completion_tokens": 2, "total_tokens": asked + 2},
        }

    def quiz(self, prompt: str) -> str:
        for key, by_night in ANSWERS.items():
            if key in prompt:
                if self.flaky and key == FLAKY:
                    with self.lock:
                        self.calls[key] += 1
                        return FLAKY_ANSWERS[self.calls[key] % 2]
                said = by_night[f"A{self.night}"]
                if self.who == "B":
                    said = by_night.get("B", by_night["A2"])
                # A terse prompt gets the bare word; the chatty one a sentence around it.
                return said if "One word" in prompt else f"I think it is {said}."
        return "I do not know."

    def grade(self, prompt: str) -> str:
        """promptfoo's llm-rubric asks for {reason, pass, score}: pass when the output
        names a tropical fruit (the rubric of the tests below)."""
        output = prompt.split("<Output>", 1)[-1].split("</Output>", 1)[0].lower()
        ok = any(f in output for f in ("mango", "papaya", "coconut", "pineapple"))
        return json.dumps(
            {"reason": "names a tropical fruit" if ok else "no tropical fruit named",
             "pass": ok, "score": 1.0 if ok else 0.0}
        )  # fmt: skip

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def tests() -> list[dict[str, Any]]:
    """The quiz: plain and model-graded assertions; some tests described (one
    description used twice), some known only by their vars."""
    q = {
        "apple": "What fruit is red and keeps the doctor away?",
        "banana": "What long yellow fruit do monkeys eat?",
        "cherry": "What small red fruit grows in pairs on a stem?",
        "grape": "What fruit is pressed to make wine?",
        "lemon": "What sour yellow fruit makes lemonade?",
        "mango": "What orange tropical fruit is India's national fruit?",
        "kiwi": "What fuzzy brown fruit is green inside?",
        "watermelon": "What big fruit is green outside and red inside?",
        "coconut": "What hard hairy fruit grows on palm trees?",
        "durian": "What spiky fruit, the durian, smells strongly?",
    }
    return [
        {"description": "apple", "vars": {"question": q["apple"]},
         "assert": [{"type": "icontains", "value": "apple"}]},
        {"description": "banana", "vars": {"question": q["banana"]},
         "assert": [{"type": "contains", "value": "banana"}]},
        {"description": "cherry", "vars": {"question": q["cherry"]},
         "assert": [{"type": "icontains", "value": "cherry"}]},
        # No description: known by its vars.
        {"vars": {"question": q["grape"]},
         "assert": [{"type": "regex", "value": "\\bgrape\\b"}]},
        {"vars": {"question": q["lemon"]},
         "assert": [{"type": "icontains", "value": "lemon"},
                    {"type": "javascript", "value": "output.length < 60"}]},
        # Model-graded beside a plain check.
        {"description": "mango", "vars": {"question": q["mango"]},
         "assert": [{"type": "icontains", "value": "mango"},
                    {"type": "llm-rubric", "value": "The answer names a tropical fruit"}]},
        # One description for two tests: each is known by its vars.
        {"description": "inside out", "vars": {"question": q["kiwi"]},
         "assert": [{"type": "icontains", "value": "kiwi"},
                    {"type": "not-icontains", "value": "banana"}]},
        {"description": "inside out", "vars": {"question": q["watermelon"]},
         "assert": [{"type": "icontains", "value": "watermelon"}]},
        {"description": "coconut", "vars": {"question": q["coconut"]},
         "assert": [{"type": "llm-rubric", "value": "The answer names a tropical fruit"}]},
        # Every server answers HTTP 500: an errored result, never a fail.
        {"description": "durian", "vars": {"question": q["durian"]},
         "assert": [{"type": "icontains", "value": "durian"}]},
    ]  # fmt: skip


CHATTY = "Answer the quiz question in a short sentence: {{question}}"
TERSE = "One word only. {{question}}"


def provider(url: str, label: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": f"openai:chat:{MODEL}",
        "config": {
            "apiBaseUrl": url,
            "apiKey": "sk-local-not-a-real-key",
            "temperature": 0,
            "max_tokens": 64,
            "headers": {"X-Api-Token": "local-token-123"},
        },
    }
    if label:
        out["label"] = label
    return out


def config(prompts: list[str], providers: list[dict[str, Any]], grader: Backend) -> dict[str, Any]:
    return {
        "description": "fruit quiz",
        "prompts": prompts,
        "providers": providers,
        "defaultTest": {
            "options": {
                "provider": {
                    "id": "openai:chat:grader-model",
                    "config": {"apiBaseUrl": grader.url, "apiKey": "sk-grader-not-real"},
                }
            }
        },
        "tests": tests(),
    }


def run(promptfoo: str, work: Path, name: str, cfg: dict[str, Any], *extra: str) -> Path:
    """`promptfoo eval -c <cfg> -o <name>.json EXTRA`; returns the output's path."""
    path = work / f"{name}.yaml"
    path.write_text(json.dumps(cfg, indent=1))  # YAML is a superset of JSON
    out = work / f"{name}.json"
    cmd = [promptfoo, "eval", "-c", str(path), "-o", str(out), "--no-progress-bar",
           "--no-table", "--max-concurrency", "1", *extra]  # fmt: skip
    print("$", " ".join(cmd[1:]), flush=True)
    done = subprocess.run(cmd, cwd=work, env=ENV, capture_output=True, text=True)
    # promptfoo exits 100 when some test failed: a normal night.
    if done.returncode not in (0, 100) or not out.is_file():
        raise SystemExit(f"promptfoo failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return out


def key_of(result: dict[str, Any], described: Counter[str]) -> str:
    """The test a result belongs to, as the expectation names it: its description when
    unique in the file, else its vars (the tests above are told apart by them)."""
    test = result.get("testCase") or {}
    desc = test.get("description")
    if desc and described[desc] == 1:
        return desc
    return json.dumps(test.get("vars") or result.get("vars") or {}, sort_keys=True)


def expectation(path: Path) -> dict[str, Any]:
    """promptfoo's own numbers in its output: per (prompt, provider) the counts its
    metrics give, and every result's `success`, failureReason and `cached` flag."""
    data = json.loads(path.read_text())
    results = data["results"]["results"]
    described = Counter[str]()
    seen: set[str] = set()
    for r in results:
        test = r.get("testCase") or {}
        desc = test.get("description")
        ident = json.dumps(test.get("vars") or {}, sort_keys=True)
        if desc and ident not in seen:
            described[desc] += 1
        seen.add(ident)
    pairs: dict[str, Any] = {}
    for p in data["results"]["prompts"]:
        m = p["metrics"]
        pairs[f"{p['label']} | {p['provider']}"] = {
            "prompt_id": p["id"],
            "passed": m["testPassCount"],
            "failed": m["testFailCount"],
            "errors": m["testErrorCount"],
        }
    by_pair: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(results, key=lambda r: (r["promptIdx"], r["testIdx"])):
        prompt = data["results"]["prompts"][r["promptIdx"]]
        by_pair[f"{prompt['label']} | {prompt['provider']}"].append(
            {
                "test": key_of(r, described),
                "success": r["success"],
                "failureReason": r.get("failureReason"),
                "cached": bool((r.get("response") or {}).get("cached")),
            }
        )
    return {
        "evalId": data["evalId"],
        "stats": {k: data["results"]["stats"][k] for k in ("successes", "failures", "errors")},
        "pairs": pairs,
        "results": by_pair,
    }


ENV: dict[str, str] = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--promptfoo", required=True, help="path of the promptfoo binary")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "tests" / "data")
    args = parser.parse_args()
    promptfoo = str(Path(args.promptfoo).resolve())
    dest = args.out / "promptfoo"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="promptfoo-logs-"))
    ENV.update(
        {
            k: v
            for k, v in os.environ.items()
            if k in ("PATH", "HOME", "LANG", "TZ") or k.startswith("LC_")
        }
    )
    ENV.update(
        {
            "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),  # its database and cache
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_SHARING": "1",
            "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
            "NO_COLOR": "1",
        }
    )
    a, b, grader = Backend("A"), Backend("B"), Backend("grader")
    try:
        made: dict[str, Path] = {}

        def keep(name: str, out: Path) -> None:
            made[name] = dest / out.name.replace(out.stem, name)
            shutil.copy(out, made[name])

        one = [CHATTY]
        night1 = run(promptfoo, work, "night1", config(one, [provider(a.url)], grader),
                     "--no-cache", "-o", str(work / "night1.jsonl"))  # fmt: skip
        keep("night1", night1)
        shutil.copy(work / "night1.jsonl", dest / "night1.jsonl")
        a.night = b.night = 2
        night2 = run(
            promptfoo, work, "night2", config(one, [provider(a.url)], grader), "--no-cache"
        )
        keep("night2", night2)
        other = run(promptfoo, work, "night2_server_b",
                    config(one, [provider(b.url)], grader), "--no-cache")  # fmt: skip
        keep("night2_server_b", other)
        a.night = b.night = 1
        both = [provider(a.url, "server-a"), provider(b.url, "server-b")]
        matrix = run(promptfoo, work, "matrix",
                     config([CHATTY, TERSE], both, grader), "--no-cache")  # fmt: skip
        keep("matrix", matrix)
        a.flaky = True
        repeat = run(promptfoo, work, "repeat", config(one, [provider(a.url)], grader),
                     "--repeat", "3", "--no-cache")  # fmt: skip
        keep("repeat", repeat)
        a.flaky = False
        # The cache filled by a first run, then night 1 again answered from it.
        run(promptfoo, work, "warm", config(one, [provider(a.url)], grader))
        cached = run(promptfoo, work, "cached", config(one, [provider(a.url)], grader))
        keep("cached", cached)
        # Night 1's failures asked again, of server B.
        failing = run(promptfoo, work, "filter_failing", config(one, [provider(b.url)], grader),
                      "--filter-failing", str(night1), "--no-cache")  # fmt: skip
        keep("filter_failing", failing)
        night2_id = json.loads(night2.read_text())["evalId"]
        export = work / "export.json"
        subprocess.run([promptfoo, "export", "eval", night2_id, "-o", str(export)],
                       cwd=work, env=ENV, check=True, capture_output=True)  # fmt: skip
        keep("export", export)
    finally:
        for server in (a, b, grader):
            server.close()

    version = subprocess.run([promptfoo, "--version"], env=ENV, capture_output=True, text=True)
    expected = {
        "made_by": "promptfoo's own output (results.prompts[].metrics, results.results[].success)",
        "promptfoo": version.stdout.strip().splitlines()[-1],
        "files": {p.name: expectation(p) for p in sorted(made.values())},
    }
    (dest / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    shutil.rmtree(work)
    digest = hashlib.sha256((dest / "expected.json").read_bytes()).hexdigest()[:12]
    print(f"wrote {dest} (expected.json {digest})")


if __name__ == "__main__":
    main()
