"""How fast hostile input is refused, and what the depth check costs a valid document.

1. A coding YAML nested 1,000 / 10,000 / 100,000 deep (flow lists, flow mappings, `- `
   dashes; and block indentation as deep as the 16 MiB cap allows), refused by
   `load_fixtures` (the walk over libyaml's events): target well under a second at any
   depth (before issue 39: 2 s, 27 s, still running after 200 s).
2. A run file whose second line is a JSON list nested 100,000 deep, refused by
   `read_run`.
3. The depth check of a valid inspect-ai-shaped `.json` document (`--mb` MB, with
   brackets and escaped quotes inside its strings) beside msgspec's own decode of it.

Run: python benchmarks/bench_bounded.py [--mb 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from timing import best_of, machine, print_timings

TARGET = 1.0  # seconds, any depth


def _yaml_shapes(depth: int) -> dict[str, bytes]:
    head = b"schema: coding-eval/v1\ndataset_id: d\ndataset_version: '1'\nitems: "
    return {
        f"flow lists {depth:,}": head + b"[" * depth + b"]" * depth + b"\n",
        f"flow maps {depth:,}": head + b"{a: " * depth + b"1" + b"}" * depth + b"\n",
        f"dashes {depth:,}": head + b"\n" + b"- " * depth + b"x\n",
    }


def _indent(levels: int) -> bytes:
    return b"items:\n" + b"".join(b" " * (i + 1) + b"a:\n" for i in range(levels))


def _document(mb: int) -> bytes:
    sample = {
        "id": "s",
        "input": 'what is [1, {2}] "quoted" \\ here?' * 10,
        "messages": [{"role": "user", "content": "x [y] {z}" * 20, "meta": {"k": [1, [2]]}}] * 5,
    }
    one = json.dumps(sample).encode()
    return (
        b'{"eval": {}, "version": 2, "samples": ['
        + b",".join([one] * (mb * 2**20 // len(one)))
        + b"]}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import msgspec

    from evalpin.core.bounded import json_too_deep
    from evalpin.core.errors import InputError
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.read.runfile import read_run

    print(machine())
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)

        def refused(path: Path, read) -> None:
            try:
                read(path)
            except InputError as exc:
                assert "nested deeper" in str(exc), exc  # refused for its depth
                return
            raise AssertionError(f"{path} was not refused")

        shapes: dict[str, bytes] = {}
        for depth in (1_000, 10_000, 100_000):
            shapes.update(_yaml_shapes(depth))
        shapes["block indentation 5,000 (15 MB)"] = _indent(5_000)
        for n, (name, data) in enumerate(shapes.items()):
            path = folder / f"set{n}.yaml"
            path.write_bytes(data)
            rows.append(
                (
                    f"coding YAML, {name}",
                    *best_of(args.repeat, lambda p=path: refused(p, load_fixtures)),
                )
            )

        run = folder / "run.jsonl"
        run.write_bytes(
            b'{"record": "run", "schema": "evalpin.run/1", "run_id": "r", "started_at": "",'
            b' "fixtures": {"path": "g", "kind": "golden"}}\n'
            + b'{"case_id": "a", "pass": true, "z": '
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}\n"
        )
        rows.append(
            ("run line nested 100,000 deep", *best_of(args.repeat, lambda: refused(run, read_run)))
        )
        print_timings(rows)
        worst = max(best for _, best, _ in rows)
        met = "met" if worst < TARGET else "MISSED"
        print(f"slowest refusal {worst:.3f} s (target < {TARGET} s): {met}")

        doc = _document(args.mb)
        check = best_of(args.repeat, lambda: json_too_deep(doc))
        decode = best_of(args.repeat, lambda: msgspec.json.decode(doc))
        print(f"\nvalid document {len(doc) / 2**20:.0f} MiB:")
        print_timings([("depth check", *check), ("msgspec decode (untyped)", *decode)])


if __name__ == "__main__":
    main()
