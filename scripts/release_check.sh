#!/usr/bin/env bash
# The release check: build what would be published, check it, install it where nothing
# of this checkout is in reach, and use it.
#
#   bash scripts/release_check.sh [--keep]      (PYTHON=python3.12 to choose the Python)
#
# 1. a tools venv of its own (build, twine), under a temporary folder;
# 2. `python -m build --sdist`, then the wheel built from that sdist by the tutorial's
#    own `pip wheel` line (docs/tutorial.md); `twine check`;
# 3. the wheel holds the package data: the `evalpin init` templates, py.typed and the
#    bundled demo runs (what `evalpin review` opens where ./runs has none);
# 4. a fresh venv with only the wheel installed, by the tutorial's own two
#    `pip install` lines (`--no-index` first); from an empty folder: `evalpin
#    --version`, `evalpin review` headless on the bundled demo (Textual's Pilot; it must
#    show the demo's cases), `evalpin verdict` on a bundled run, the Python API, and
#    `evalpin init` with check and a replay run in the folder it lays out.
# Exit 0 when all of it holds; the first failure stops it, saying which step. Nothing is
# written in the checkout. `--keep` keeps the temporary folder (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-python3}
keep=0
[ "${1:-}" = "--keep" ] && keep=1
for name in "${!EVAL_@}"; do unset "$name"; done # the control-plane variables: not here

work=$(mktemp -d "${TMPDIR:-/tmp}/evalpin-release.XXXXXX")
cleanup() {
  if [ "$keep" -eq 1 ]; then echo "release-check: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
began=$SECONDS
current=""
step() {
  current=$1
  echo "release-check: [$((SECONDS - began))s] $1" >&2
}
trap 'echo "release-check: FAILED at: $current (see above)" >&2' ERR

version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' src/evalpin/_version.py)
[ -n "$version" ] || { echo "release-check: no __version__ in src/evalpin/_version.py" >&2; exit 1; }

step "tools venv (build, twine)"
"$python" -m venv "$work/tools"
"$work/tools/bin/pip" install -q --disable-pip-version-check build twine

# The tutorial's three install lines (the only wheel build here: CI runs no other): the
# wheel, then evalpin from it alone (--no-index), then its dependencies.
mapfile -t tutorial < <(sed -n 's/^\$ \(pip \(wheel\|install .*wheels\/\).*\)$/\1/p' docs/tutorial.md)
[ "${#tutorial[@]}" -eq 3 ] || { echo "release-check: docs/tutorial.md: ${#tutorial[@]} pip lines, not 3" >&2; false; }

step "build the sdist (version $version)"
if ! "$work/tools/bin/python" -m build --sdist --outdir "$work/dist" "$root" >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  false
fi
sdist="$work/dist/evalpin-$version.tar.gz"
[ -f "$sdist" ] || { ls -l "$work/dist" >&2; false; }

step "the wheel from the sdist, by the tutorial's line: ${tutorial[0]}"
mkdir "$work/unpacked"
tar -xzf "$sdist" -C "$work/unpacked"
read -ra argv <<<"${tutorial[0]//\/path\/to\/evalpin/$work/unpacked/evalpin-$version}"
(cd "$work" && "$work/tools/bin/python" -m "${argv[@]}" >"$work/wheel.log" 2>&1) \
  || { cat "$work/wheel.log" >&2; false; }
wheel="$work/wheels/evalpin-$version-py3-none-any.whl"
[ "$(ls "$work/wheels")" = "evalpin-$version-py3-none-any.whl" ] || { ls -l "$work/wheels" >&2; false; }

step "twine check"
"$work/tools/bin/twine" check --strict "$sdist" "$wheel"

step "what the wheel and the sdist hold"
"$work/tools/bin/python" - "$wheel" "$sdist" "$version" "$root" <<'EOF'
import sys, tarfile, zipfile
from pathlib import Path

wheel, sdist, version, root = sys.argv[1:]
names = set(zipfile.ZipFile(wheel).namelist())
scaffold = sorted(
    p.relative_to(Path(root, "src")).as_posix()
    for p in Path(root, "src/evalpin/scaffold").rglob("*")
    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
)
demo = sorted(p.name for p in Path(root, "runs").glob("*.jsonl"))
wanted = set(scaffold) | {"evalpin/py.typed", "evalpin/api.py", "evalpin/tui/evalpin.tcss"}
wanted |= {f"evalpin/demo_runs/{name}" for name in demo}
wanted |= {f"evalpin/{p.relative_to(root).as_posix()}" for p in Path(root, "fixtures").rglob("*") if p.is_file()}
missing = sorted(wanted - names)
assert not missing, f"missing from the wheel: {missing}"
assert len(demo) >= 5, f"bundled demo: {demo}"
stray = sorted(n for n in names if "__pycache__" in n or n.endswith(".pyc"))
assert not stray, f"compiled files in the wheel: {stray[:5]}"
meta = zipfile.ZipFile(wheel).read(f"evalpin-{version}.dist-info/METADATA").decode()
assert f"\nVersion: {version}\n" in meta, "the wheel's metadata has another version"
members = tarfile.open(sdist).getnames()
prefix = f"evalpin-{version}/"
for need in ("pyproject.toml", "README.md", "src/evalpin/_version.py", "runs/" + demo[0],
             "src/evalpin/scaffold/slots.yaml"):
    assert prefix + need in members, f"missing from the sdist: {need}"
print(f"wheel: {len(names)} files ({len(scaffold)} templates, {len(demo)} demo runs); "
      f"sdist: {len(members)} members")
EOF

step "a fresh venv with the wheel alone, by the tutorial's lines: ${tutorial[1]}; ${tutorial[2]}"
"$python" -m venv "$work/venv"
for line in "${tutorial[1]}" "${tutorial[2]}"; do
  read -ra argv <<<"${line//evalpin-[0-9.]*-py3-none-any.whl/evalpin-$version-py3-none-any.whl}"
  (cd "$work" && "$work/venv/bin/python" -m "${argv[@]}" -q --disable-pip-version-check)
done
bin="$work/venv/bin"
empty="$work/empty"
mkdir "$empty"
cd "$empty"

step "evalpin --version"
shown=$("$bin/evalpin" --version)
echo "$shown"
[ "$shown" = "evalpin, version $version" ]

step "evalpin review, headless, on the bundled demo (from an empty folder)"
"$bin/python" - <<'EOF'
import asyncio, html, re, sys, time
from pathlib import Path

import evalpin
from evalpin.core.read.discovery import pair_to_review
from evalpin.core.read.formats import RunStream
from evalpin.tui.app import make_app

package = Path(evalpin.__file__).resolve().parent
left, right, note = pair_to_review(Path("runs"))  # what `evalpin review` opens here
assert note and "bundled demo" in note, note
for path in (left, right):
    assert path is not None and path.resolve().parent == package / "demo_runs", path
streams = [RunStream(path) for path in (left, right)]
for stream in streams:
    stream.step()
app = make_app(*streams, cursor_blink=False)


def text(svg: str) -> str:
    return html.unescape(" ".join(re.findall(r">([^<]*)</text>", svg))).replace("\xa0", " ")


async def drive() -> str:
    async with app.run_test(size=(160, 45)) as pilot:
        review, end = app.review, time.monotonic() + 120

        async def until(ready, what: str) -> None:
            while not ready():
                assert time.monotonic() < end, f"the review never reached: {what}"
                await pilot.pause(0.05)
            await pilot.pause()

        # The demo opens on the refused pair: the banner first, then browse the cases.
        await until(lambda: review.reached("banner"), "the refusal banner")
        await pilot.press("b")
        await until(lambda: review.reached("listed") and not review.detail.decoding, "cases")
        return text(app.export_screenshot())


screen = asyncio.run(drive())
for shown in ("BACKEND DELTA", "status-in-transit", "demo-night-2-lab_free_2.jsonl"):
    assert shown in screen, f"{shown!r} not on screen:\n{screen[:3000]}"
print(f"review: {left.name} beside {right.name}, the demo's cases on screen")
EOF

demo=$("$bin/python" -c 'import evalpin, pathlib; print(pathlib.Path(evalpin.__file__).parent / "demo_runs")')
step "evalpin verdict on a bundled run"
"$bin/evalpin" verdict "$demo/demo-coding-publishable.jsonl"
code=0
"$bin/evalpin" verdict "$demo/demo-coding-probe.jsonl" --json >"$work/probe.json" || code=$?
[ "$code" -eq 1 ] || { echo "verdict on the two-seed run: exit $code, not 1" >&2; false; }
grep -q '"label": "exploratory-probe"' "$work/probe.json"

step "the Python API, and that importing evalpin loads no Textual"
"$bin/python" - "$demo" <<'EOF'
import sys
from pathlib import Path

import evalpin

assert "textual" not in sys.modules
demo = Path(sys.argv[1])
report = evalpin.compare(demo / "demo-night-2.jsonl", demo / "demo-night-2-lab_free_2.jsonl")
assert report.refused
assert evalpin.verdict(demo / "demo-night-1.jsonl").label == "internal"
assert len(evalpin.read_run(demo / "demo-night-1.jsonl").to_dicts()) == 90
assert "textual" not in sys.modules
print("api: read_run, compare (refused), verdict (internal)")
EOF

step "evalpin init, then check and a replay run in what it laid out"
"$bin/evalpin" init my-evals
cd my-evals
"$bin/evalpin" check golden/assistant.jsonl
"$bin/evalpin" check coding/set.yaml
"$bin/evalpin" run --fixtures golden/assistant.jsonl --slot demo_replay --out runs/first.jsonl --progress none
code=0
"$bin/evalpin" verdict runs/first.jsonl >/dev/null || code=$?
[ "$code" -eq 1 ] || { echo "verdict on the first run outside git: exit $code, not 1" >&2; false; }

trap - ERR
echo "release-check: ok: evalpin $version built, checked, installed and used in $((SECONDS - began)) s" >&2
