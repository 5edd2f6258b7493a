"""Runs one coding item's tests in fresh, contained processes.

API:
- `probe_isolation(backends=BACKENDS) -> Isolation` (cached): the strongest containment
  that works on this machine, tried for real once: `unshare`, else bubblewrap, else none.
  `Isolation.network` is `off-enforced` or `off-unenforced`; `why` is one line for the
  warning a caller must show when not enforced.
- `run_item(item, files, *, workdir_parent=None, secret_names=(), allow_network=False,
  isolation=None) -> Outcome`: grade one completion's files. `Outcome` has `passed`,
  `reasons`, `tail` (last `TAIL_CHARS` of test output), `seconds` and `network`.
- `execute(iso, box, specs, timeout)`: the primitive `evalpin.run.isolation` builds on:
  each `Spec` in a sandbox of its own, the last one deciding when the run ends.

What the grade means lives in `evalpin.core.instrument.graders.coding`; how the candidate and pytest
are split into processes, in `evalpin.run.isolation`. This package only contains them,
one concern a module, each importing only those before it:
- `cgroup`: the per-run cgroup (process and memory caps), and killing what is in it;
- `box`: the case's scratch space on the host, the private folders handed back, the
  sandbox's uid, and link-safe writes, reads and removal;
- `mounts`: a sandboxed process (`Spec`) and the mount plan of its private root;
- `backends`: unshare and bubblewrap, the wrapper command of each, `Isolation`;
- `launcher`: the code that runs first inside every sandbox, as a string;
- `devlocks`: the locks the grader holds on the device nodes every box shares;
- `fairclock`: a run's timeout on a fair-share clock, and lowering a run that hogs;
- `execute`: starting, filling, watching and killing the sandboxed processes;
- `probe`: which backend works here; `limits`: how each limit is enforced here;
  `item`: grading one item's files (`run_item`).

Containment, the same for `unshare` and bubblewrap (both get one mount plan: the unshare
launcher builds it with mount calls, bubblewrap from flags):
- never host root: a root grader builds each box as root in new mount, pid, ipc, uts
  and network namespaces, then the launcher becomes a host uid of the case's own (no
  account, no file, no other process has it) before any tested code runs; a grader
  that is not root gets a user namespace, where its own uid is root and nothing more;
- a private root: a read-only tmpfs holding /usr and its links, two /etc files, the
  interpreter's prefixes read-only, a minimal /dev, a fresh /proc with /proc/sys and
  /proc/sysrq-trigger read-only, no /sys; nothing else of the host;
- every folder a sandbox writes (its own folders, /tmp, /dev/shm) a private tmpfs of
  DISK_BYTES, handed back to the grader as a descriptor (the grader fills it and reads
  the report through it; the kernel frees it, whatever is in it): nothing tested code
  writes reaches the host's disk, and a full one is `sandbox_error:disk`; the witness's
  two sandboxes share theirs (`Spec.base` / `Spec.joins`: the second starts in a copy
  of the first's mount namespace, with its own pid, ipc and uts namespaces);
- no inode another box has that it can lock, lease or watch: an overlay of its own over
  every read-only folder, copies of the /etc files, its own /proc/sys; the grader holds
  every lock on the device nodes;
- every capability dropped (bounding, ambient and own sets, SECBIT_NOROOT,
  no_new_privs), so nothing can be unmounted or remounted, a session and process group
  of its own, and a seccomp filter refusing new user namespaces, foreign system call
  ABIs, kernel keys, watches and what container runtimes refuse (`launcher.REFUSED_CALLS`);
- a cgroup per item over every process tree of it: at most MAX_PROCESSES processes and
  the item's `memory_mb` (swap included); an OOM kill is `sandbox_error:memory`;
  `setpriv --pdeathsig` ties the tree to the grader, and a later run removes the cgroups
  and scratch folders of a grader that was SIGKILLed;
- rlimits: the item's, and MAX_OPEN_FILES descriptors and MAX_PROCESSES processes (per
  uid: the case's own) per process;
- an environment built from an allow-list (never inherited PYTHON*, PYTEST_*, keys);
- a timeout on a fair-share clock (waiting on a neighbour that hogs is not charged), after
  which every tree is killed; output is read as it comes and only its tail kept, with the
  sandbox paths made relative, evalpin's own folders cut and secrets cut.
Without namespaces only the environment, rlimits, cgroup, process-group kill and timeout
remain (tested code runs as the grader, root included, on the host's disk), and network
is recorded off-unenforced.
"""

from __future__ import annotations

from evalpin.run.sandbox.backends import (
    BACKENDS,
    NETWORK_ON,
    OFF_ENFORCED,
    OFF_UNENFORCED,
    Isolation,
)
from evalpin.run.sandbox.execute import execute
from evalpin.run.sandbox.item import Outcome, run_item
from evalpin.run.sandbox.probe import probe_isolation

__all__ = [
    "BACKENDS",
    "NETWORK_ON",
    "OFF_ENFORCED",
    "OFF_UNENFORCED",
    "Isolation",
    "Outcome",
    "execute",
    "probe_isolation",
    "run_item",
]
