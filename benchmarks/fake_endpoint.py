"""A loopback OpenAI-compatible endpoint for timing whole `evalpin run` commands from
outside: one that serves one request at a time (as `bench_live.one_at_a_time`) or a
parallel one (as `bench_live`'s 250 ms answers). Writes a project folder (cases, slots)
and prints the line to export, then serves until killed.

    python benchmarks/fake_endpoint.py --mode serial --folder /tmp/ep --cases 90
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
from bench_live import ANSWER, CASE, SLOTS, one_at_a_time
from tests.fake_openai import FakeOpenAI


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("serial", "parallel"), default="serial")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--cases", type=int, default=90)
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    cases = [
        {**CASE, "id": f"case-{i:04d}", "user": f"Where is order 1001? ({i})"}
        for i in range(args.cases)
    ]
    (args.folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (args.folder / "slots.yaml").write_text(SLOTS)
    server = FakeOpenAI()
    server.policy = (
        one_at_a_time() if args.mode == "serial" else (lambda n, in_flight, request: ANSWER)
    )
    server.start()
    print(f"export BENCH_BASE_URL={server.base_url} BENCH_API_KEY=sk-bench", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
